/* hb_print.c - prints what the pytest checks against the shared vectors and schema:
 *   hb_print orders SEED K...          one line per k: "<x hex> <body JSON>"
 *   hb_print result closed|open|empty  a result JSON from fixed samples
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hb_order.h"
#include "hb_result.h"

static int print_orders(int argc, char **argv)
{
    uint64_t seed = strtoull(argv[2], NULL, 10);
    char body[HB_ORDER_BODY_MAX];
    for (int i = 3; i < argc; i++) {
        hb_order o;
        hb_order_make(seed, strtoull(argv[i], NULL, 10), &o);
        (void)hb_order_format(&o, "2026-11-22T10:00:00.123456Z", body, sizeof(body));
        (void)printf("%016" PRIx64 " %s\n", o.x, body);
    }
    return 0;
}

static int print_result(const char *mode)
{
    hb_config cfg;
    hb_stats s;
    hb_config_defaults(&cfg);
    bool open_loop = strcmp(mode, "open") == 0;
    cfg.rate = open_loop ? 5000 : 0;
    hb_kv extra[] = {{"workers", "2"}};
    hb_run run = {.client = "c", .client_version = "0.1.0", .cfg = &cfg,
                  .started_at = {.tv_sec = 1795341600, .tv_nsec = 123456000}, .duration_s = 0.5,
                  .interrupted = false, .extra = extra, .n_extra = 1};
    if (hb_stats_init(&s, open_loop) != 0) {
        return 1;
    }
    if (strcmp(mode, "empty") == 0) {
        hb_stats_record_error(&s, HB_ERR_CONNECT);
    } else {
        for (int64_t v = 1; v <= 1000; v++) {
            hb_stats_record_ok(&s, v * 997, v * 500);
            hb_stats_record_lateness(&s, v * 20);
        }
        hb_stats_record_error(&s, HB_ERR_HTTP_4XX);
    }
    int rc = hb_result_write_json(stdout, &run, &s);
    hb_stats_close(&s);
    return rc == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc >= 4 && strcmp(argv[1], "orders") == 0) {
        return print_orders(argc, argv);
    }
    if (argc == 3 && strcmp(argv[1], "result") == 0) {
        return print_result(argv[2]);
    }
    (void)fprintf(stderr, "usage: hb_print orders SEED K... | hb_print result closed|open|empty\n");
    return 2;
}
