/* hft_conn.c - one connection's send/receive steps (see hft_conn.h). */
#include "hft_conn.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/tcp.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "hb_clock.h"

int hft_conn_init(hft_conn *c, const char *path, const char *hostport) {
    memset(c, 0, sizeof *c);
    c->fd = -1;
    c->state = HFT_DOWN;
    return hft_request_init(&c->req, path, hostport);
}

int hft_conn_connect(hft_conn *c, const struct sockaddr_in *addr, long timeout_ms) {
    hft_conn_close(c);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    struct timeval tv = {.tv_sec = timeout_ms / 1000, .tv_usec = (timeout_ms % 1000) * 1000};
    int one = 1;
    (void)setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv); /* bounds connect() */
    if (connect(fd, (const struct sockaddr *)addr, sizeof *addr) != 0 ||
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0 ||
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    c->fd = fd;
    c->state = HFT_IDLE;
    return 0;
}

void hft_conn_close(hft_conn *c) {
    if (c->fd >= 0) close(c->fd);
    c->fd = -1;
    c->state = HFT_DOWN;
}

static hft_step failed(hft_conn *c, hb_error_kind kind) {
    hft_conn_close(c);
    c->fail = kind;
    return HFT_STEP_FAILED;
}

hft_step hft_conn_write_more(hft_conn *c) {
    while (c->sent < c->req.len) {
        ssize_t n = write(c->fd, c->req.buf + c->sent, c->req.len - c->sent);
        if (n > 0) {
            c->sent += (size_t)n;
        } else if (n < 0 && errno == EINTR) {
            continue;
        } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            c->state = HFT_SENDING;
            return HFT_STEP_PENDING;
        } else {
            return failed(c, HB_ERR_OTHER); /* reset / broken pipe while sending */
        }
    }
    c->state = HFT_RECEIVING;
    return HFT_STEP_PENDING;
}

hft_step hft_conn_send(hft_conn *c, uint64_t seed, uint64_t k, hb_ts_cache *ts) {
    hb_order o;
    struct timespec wall;
    char stamp[HB_TS_LEN];
    hb_order_make(seed, k, &o);
    hb_wall_now(&wall);
    hb_ts_format(ts, &wall, stamp);
    size_t n = hb_order_format(&o, stamp, hft_request_body(&c->req), hft_request_body_cap(&c->req));
    hft_request_set_body_len(&c->req, n);
    c->k = k;
    c->sent = 0;
    hft_reply_start(&c->reply);
    return hft_conn_write_more(c);
}

hft_step hft_conn_read(hft_conn *c) {
    for (;;) {
        ssize_t n = read(c->fd, c->rbuf + c->reply.fill, HFT_RBUF - c->reply.fill);
        if (n > 0) {
            /* The parser fuzzed by fuzz/fuzz_reply.c, called as this loop calls it. */
            int rc = hft_reply_absorb(&c->reply, c->rbuf, HFT_RBUF, (size_t)n);
            if (rc == HFT_REPLY_PENDING) continue; /* more may be waiting */
            if (rc == HFT_REPLY_MALFORMED) return failed(c, HB_ERR_OTHER); /* incl. a head over HFT_RBUF */
            c->status = c->reply.head.status;
            if (c->reply.head.close) hft_conn_close(c);
            else c->state = HFT_IDLE;
            return HFT_STEP_DONE;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return HFT_STEP_PENDING;
        return failed(c, HB_ERR_OTHER); /* EOF or reset mid-answer */
    }
}
