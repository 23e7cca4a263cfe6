/* floor_server.c - the floor's echo server (see floor_server.h). */
#include "floor_server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "hft_http.h"

#define REQ_BUF 8192

typedef struct conn_arg {
    floor_server *s;
    int fd;
} conn_arg;

static int write_all(int fd, const char *p, size_t n) {
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Read whole requests (head + Content-Length body), answer each with the canned response. */
static void *serve(void *arg) {
    floor_server *s = ((conn_arg *)arg)->s;
    int fd = ((conn_arg *)arg)->fd;
    free(arg);
    char buf[REQ_BUF];
    size_t fill = 0;
    for (;;) {
        ssize_t n = read(fd, buf + fill, sizeof buf - fill);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break; /* the client closed: done */
        fill += (size_t)n;
        for (;;) {
            hft_head h;
            int rc = hft_parse_request_head(buf, fill, sizeof buf, &h);
            if (rc == HFT_HEAD_MALFORMED) goto out;
            if (rc == HFT_HEAD_INCOMPLETE || fill < h.head_len + h.content_length) break;
            if (write_all(fd, s->response, s->response_len) != 0) goto out;
            size_t used = h.head_len + (size_t)h.content_length;
            memmove(buf, buf + used, fill - used);
            fill -= used;
        }
        if (fill == sizeof buf) break; /* not an order request */
    }
out:
    shutdown(fd, SHUT_RDWR);
    return NULL;
}

static void *accept_loop(void *arg) {
    floor_server *s = arg;
    for (;;) {
        int fd = accept4(s->lfd, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED) continue;
            return NULL; /* shut down by floor_server_stop */
        }
        int one = 1, i = atomic_load(&s->n_conns);
        conn_arg *a = malloc(sizeof *a);
        if (i >= FLOOR_MAX_CONNS || a == NULL) {
            free(a);
            close(fd);
            continue;
        }
        (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        *a = (conn_arg){s, fd};
        s->conn_fds[i] = fd;
        if (pthread_create(&s->conn_threads[i], NULL, serve, a) != 0) {
            free(a);
            close(fd);
            continue;
        }
        atomic_store(&s->n_conns, i + 1);
    }
}

int floor_server_start(floor_server *s, const struct sockaddr_in *bind_addr, size_t response_bytes, char *err,
                       size_t errlen) {
    memset(s, 0, sizeof *s);
    s->lfd = -1;
    s->response = malloc(FLOOR_RESPONSE_MAX);
    if (s->response == NULL) {
        snprintf(err, errlen, "out of memory for the canned response");
        return -1;
    }
    s->response_len = hft_canned_response(s->response, FLOOR_RESPONSE_MAX, response_bytes);
    if (s->response_len == 0) {
        snprintf(err, errlen, "--response-bytes must be 80..%d (got %zu); pass e.g. --response-bytes 420",
                 FLOOR_RESPONSE_MAX, response_bytes);
        free(s->response);
        return -1;
    }
    s->addr = bind_addr ? *bind_addr
                        : (struct sockaddr_in){.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof s->addr;
    s->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s->lfd < 0 || bind(s->lfd, (struct sockaddr *)&s->addr, sizeof s->addr) != 0 ||
        listen(s->lfd, FLOOR_MAX_CONNS) != 0 || getsockname(s->lfd, (struct sockaddr *)&s->addr, &len) != 0 ||
        pthread_create(&s->acceptor, NULL, accept_loop, s) != 0) {
        char ip[INET_ADDRSTRLEN] = "?";
        inet_ntop(AF_INET, &s->addr.sin_addr, ip, sizeof ip);
        snprintf(err, errlen, "cannot listen on %s:%u (%s); check that the address is up on this host", ip,
                 (unsigned)ntohs(s->addr.sin_port), strerror(errno));
        if (s->lfd >= 0) close(s->lfd);
        free(s->response);
        return -1;
    }
    return 0;
}

void floor_server_stop(floor_server *s) {
    shutdown(s->lfd, SHUT_RDWR); /* wakes accept4 with an error */
    pthread_join(s->acceptor, NULL);
    close(s->lfd);
    int n = atomic_load(&s->n_conns);
    for (int i = 0; i < n; i++) {
        shutdown(s->conn_fds[i], SHUT_RDWR); /* in case the client left one open */
        pthread_join(s->conn_threads[i], NULL);
        close(s->conn_fds[i]);
    }
    free(s->response);
}
