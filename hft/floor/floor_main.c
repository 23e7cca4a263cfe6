/*
 * bin/hft-floor: the physical floor of this machine, measured the way client-hft
 * measures: the same engine, pinned busy-polling workers and order requests, against a
 * loopback echo server that answers each with a canned response the size of
 * hft-server's. Writes a result JSON with "client": "floor". --url is ignored.
 */
#include <stdio.h>
#include <stdlib.h>

#include "floor_server.h"
#include "hft_app.h"

/* Mean size of hft-server's answers (head + JSON body, fills included) to the first 3000
 * orders of seed 1: 423 bytes, measured on 2026-11-22 (hft/README.md says how). */
#define DEFAULT_RESPONSE_BYTES 420

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

int main(int argc, char *argv[]) {
    size_t response_bytes = DEFAULT_RESPONSE_BYTES;
    const hb_extra_option more[] = {
        {"--response-bytes", true, "--response-bytes N size of each canned answer, head included (default 420)",
         opt_response_bytes, &response_bytes},
    };
    hft_app app;
    hft_app_init(&app, "floor", "hft-floor");
    hft_app_parse(&app, argc, argv, more, 1);

    floor_server server;
    char err[256];
    if (floor_server_start(&server, response_bytes, err, sizeof err) != 0) {
        fprintf(stderr, "hft-floor: %s\n", err);
        return 2;
    }
    app.cfg.url.addr = server.addr;
    snprintf(app.cfg.url.hostport, sizeof app.cfg.url.hostport, "127.0.0.1:%u", (unsigned)ntohs(server.addr.sin_port));

    char bytes[32];
    snprintf(bytes, sizeof bytes, "%zu", server.response_len);
    const hb_kv extra[] = {{"response_bytes", bytes}, {"server", "\"blocking read, one thread per connection\""}};
    int code = hft_app_run(&app, extra, 2);
    floor_server_stop(&server);
    return code;
}
