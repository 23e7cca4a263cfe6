/*
 * bin/hft-floor: the physical floor of this machine, measured the way client-hft
 * measures: the same runner, pinned busy-polling workers and order requests, against an
 * echo server that answers each with a canned response the size of hft-server's.
 * Writes a result JSON with "client": "floor".
 *
 * By default the echo server runs in this process on loopback and --url is ignored. For
 * the floor of another path (the network scenarios' veth + link emulator), one process
 * runs only the echo server (--listen ADDR, in the server's namespace) and another
 * measures against it (--remote --url http://ADDR).
 */
#include <arpa/inet.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "floor_server.h"
#include "hft_app.h"

/* Mean size of hft-server's answers (head + JSON body, fills included) to the first 3000
 * orders of seed 1: 423 bytes, measured on 2026-11-22 (hft/README.md says how). */
#define DEFAULT_RESPONSE_BYTES 420

typedef struct floor_mode {
    struct sockaddr_in listen_addr;
    int listen; /* --listen ADDR: serve only */
    int remote; /* --remote: measure against --url, start no server */
} floor_mode;

static int opt_response_bytes(void *ctx, const char *v, char *err, size_t errlen) {
    char *end;
    long n = strtol(v, &end, 10);
    if (*v == '\0' || *end != '\0' || n < 80 || n > FLOOR_RESPONSE_MAX) {
        snprintf(err, errlen, "--response-bytes must be an integer 80..%d (got \"%s\"); pass e.g. --response-bytes %d",
                 FLOOR_RESPONSE_MAX, v, DEFAULT_RESPONSE_BYTES);
        return -1;
    }
    *(size_t *)ctx = (size_t)n;
    return 0;
}

static int opt_listen(void *ctx, const char *v, char *err, size_t errlen) {
    floor_mode *m = ctx;
    char ip[INET_ADDRSTRLEN] = "";
    const char *colon = strrchr(v, ':');
    char *end = NULL;
    long port = colon && colon[1] ? strtol(colon + 1, &end, 10) : -1;
    size_t ip_len = colon ? (size_t)(colon - v) : 0;
    if (ip_len > 0 && ip_len < sizeof ip) memcpy(ip, v, ip_len);
    m->listen_addr = (struct sockaddr_in){.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    if (end == NULL || *end != '\0' || port < 0 || port > 65535 || inet_pton(AF_INET, ip, &m->listen_addr.sin_addr) != 1) {
        snprintf(err, errlen, "--listen must be IPv4:PORT (got \"%s\"); pass e.g. --listen 10.0.0.2:0", v);
        return -1;
    }
    m->listen = 1;
    return 0;
}

static int opt_remote(void *ctx, const char *v, char *err, size_t errlen) {
    (void)v, (void)err, (void)errlen;
    ((floor_mode *)ctx)->remote = 1;
    return 0;
}

/* --listen: serve until SIGINT/SIGTERM (blocked in every thread, taken by sigwait here). */
static int serve_only(const floor_mode *m, size_t response_bytes) {
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop, NULL);
    floor_server server;
    char err[256], ip[INET_ADDRSTRLEN];
    if (floor_server_start(&server, &m->listen_addr, response_bytes, err, sizeof err) != 0) {
        fprintf(stderr, "hft-floor: %s\n", err);
        return 2;
    }
    inet_ntop(AF_INET, &server.addr.sin_addr, ip, sizeof ip);
    printf("hft-floor listening on http://%s:%u\n", ip, (unsigned)ntohs(server.addr.sin_port));
    fflush(stdout);
    int sig;
    sigwait(&stop, &sig);
    floor_server_stop(&server);
    return 0;
}

int main(int argc, char *argv[]) {
    size_t response_bytes = DEFAULT_RESPONSE_BYTES;
    floor_mode mode = {0};
    const hb_extra_option more[] = {
        {"--response-bytes", true, "--response-bytes N size of each canned answer, head included (default 420)",
         opt_response_bytes, &response_bytes},
        {"--listen", true, "--listen IP:PORT  only serve the echo (port 0: a free one) until SIGTERM", opt_listen,
         &mode},
        {"--remote", false, "--remote          measure against --url (an hft-floor --listen), start no server",
         opt_remote, &mode},
    };
    hft_app app;
    hft_app_init(&app, "floor", "hft-floor");
    hft_app_parse(&app, argc, argv, more, sizeof more / sizeof more[0]);
    if (mode.listen) return serve_only(&mode, response_bytes);

    floor_server server;
    char err[256];
    if (!mode.remote) {
        if (floor_server_start(&server, NULL, response_bytes, err, sizeof err) != 0) {
            fprintf(stderr, "hft-floor: %s\n", err);
            return 2;
        }
        app.cfg.url.addr = server.addr;
        snprintf(app.cfg.url.hostport, sizeof app.cfg.url.hostport, "127.0.0.1:%u",
                 (unsigned)ntohs(server.addr.sin_port));
    }
    char bytes[32];
    snprintf(bytes, sizeof bytes, "%zu", mode.remote ? response_bytes : server.response_len);
    const hb_kv extra[] = {{"response_bytes", bytes},
                           {"server", mode.remote ? "\"remote (hft-floor --listen)\""
                                                  : "\"blocking read, one thread per connection\""}};
    int code = hft_app_run(&app, extra, 2);
    if (!mode.remote) floor_server_stop(&server);
    return code;
}
