/* hb_test.c - unit tests of the pure parts of the hb_ library: flags, URL, order
 * body, timestamp cache, statistics and merge, schedule; with hb_test_output.c the result
 * JSON and the interval recorder and its log. Exit 0 when all pass. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hb_args.h"
#include "hb_clock.h"
#include "hb_order.h"
#include "hb_schedule.h"
#include "hb_stats.h"
#include "hb_url.h"
#include "hb_test.h"

int hb_test_failures;
int hb_test_checks;


/* ---- flags ---- */

static int rt_priority;
static int strict;

static int apply_rt(void *ctx, const char *value, char *err, size_t errlen)
{
    char *end = NULL;
    long v = strtol(value, &end, 10);
    if (*end != '\0' || v < 1 || v > 99) {
        (void)snprintf(err, errlen, "--rt-priority must be 1..99 (got \"%s\"); pass e.g. --rt-priority 50", value);
        return -1;
    }
    *(int *)ctx = (int)v;
    return 0;
}

static int apply_strict(void *ctx, const char *value, char *err, size_t errlen)
{
    (void)value;
    (void)err;
    (void)errlen;
    *(int *)ctx = 1;
    return 0;
}

static const hb_extra_option EXTRA[] = {
    {"--rt-priority", true, "--rt-priority N  SCHED_FIFO priority", apply_rt, &rt_priority},
    {"--strict", false, "--strict         fail when tuning is missing", apply_strict, &strict},
};

/* Parse a NULL-terminated list of arguments after the program name. */
static int parse(hb_config *cfg, char *err, ...)
{
    char *argv[32] = {"client-test"};
    int argc = 1;
    va_list ap;
    va_start(ap, err);
    for (char *a = va_arg(ap, char *); a != NULL && argc < 31; a = va_arg(ap, char *)) {
        argv[argc++] = a;
    }
    va_end(ap);
    err[0] = '\0';
    return hb_args_parse(cfg, argc, argv, "client-test", EXTRA, 2, err, HB_ERR_LEN);
}

static void test_args_accept(void)
{
    hb_config c;
    char err[HB_ERR_LEN];
    CHECK(parse(&c, err, NULL) == HB_ARGS_OK, "%s", err);
    CHECK(c.orders == 1000 && c.connections == 10 && c.warmup == 100 && c.timeout_ms == 1000 && c.seed == 1,
          "defaults");
    CHECK(c.rate == 0.0 && !hb_config_open_loop(&c) && strcmp(c.scenario, "adhoc") == 0 && c.output[0] == '\0',
          "defaults");
    CHECK(c.url.port == 8080 && strcmp(c.url.order_path, "/order") == 0, "default url");

    CHECK(parse(&c, err, "--url", "http://127.0.0.1:9000", "--orders", "5", "--connections=3", "--warmup", "0",
                "--rate=2500.5", "--timeout-ms", "50", "--scenario", "open-5k", "--seed=18446744073709551615",
                "--output", "/tmp/r.json", NULL) == HB_ARGS_OK,
          "%s", err);
    CHECK(c.url.port == 9000 && c.orders == 5 && c.connections == 3 && c.warmup == 0, "values");
    CHECK(c.rate == 2500.5 && hb_config_open_loop(&c) && c.timeout_ms == 50, "values");
    CHECK(c.seed == UINT64_MAX && strcmp(c.scenario, "open-5k") == 0 && strcmp(c.output, "/tmp/r.json") == 0,
          "values");

    CHECK(parse(&c, err, "--duration", "2.5", NULL) == HB_ARGS_OK && c.duration_s == 2.5 && c.orders == 0,
          "duration %s", err);
    CHECK(parse(&c, err, "--help", NULL) == HB_ARGS_HELP, "help");
    CHECK(parse(&c, err, "--orders", "3", "--help", NULL) == HB_ARGS_HELP, "help after flags");

    rt_priority = 0;
    strict = 0;
    CHECK(parse(&c, err, "--rt-priority", "50", "--strict", "--orders=7", NULL) == HB_ARGS_OK, "%s", err);
    CHECK(rt_priority == 50 && strict == 1 && c.orders == 7, "extra options applied");
    CHECK(parse(&c, err, "--rt-priority=60", NULL) == HB_ARGS_OK && rt_priority == 60, "%s", err);
}

/* Each rejected argument list, and a word its one-line message must name. */
static void reject(const char *expect, const char *a, const char *b, const char *c)
{
    hb_config cfg;
    char err[HB_ERR_LEN];
    int rc = parse(&cfg, err, (char *)a, (char *)b, (char *)c, NULL);
    CHECK(rc == HB_ARGS_ERROR, "%s %s accepted", a, b ? b : "");
    CHECK(strstr(err, expect) != NULL, "message \"%s\" lacks \"%s\"", err, expect);
    CHECK(strchr(err, '\n') == NULL && strstr(err, "; ") != NULL, "message \"%s\" is not one line with a fix", err);
}

static void test_args_reject(void)
{
    reject("unknown flag \"--bogus\"", "--bogus", NULL, NULL);
    reject("unknown flag \"positional\"", "positional", NULL, NULL);
    reject("unknown flag \"--order\"", "--order", "5", NULL);
    reject("--connections must be an integer >= 1 (got \"0\")", "--connections", "0", NULL);
    reject("--connections", "--connections", "x", NULL);
    reject("--orders must be an integer >= 1 (got \"-5\")", "--orders", "-5", NULL);
    reject("--orders", "--orders", "0", NULL);
    reject("--orders", "--orders", "1e3", NULL);
    reject("--orders", "--orders=", NULL, NULL);
    reject("--orders needs a value", "--orders", NULL, NULL);
    reject("--rate must be a number of orders/s > 0 (got \"abc\")", "--rate", "abc", NULL);
    reject("--rate", "--rate", "0", NULL);
    reject("--rate", "--rate", "-1", NULL);
    reject("--rate", "--rate", "nan", NULL);
    reject("--duration", "--duration", "0", NULL);
    reject("--warmup", "--warmup", "-1", NULL);
    reject("--timeout-ms", "--timeout-ms", "0", NULL);
    reject("--seed", "--seed", "-1", NULL);
    reject("--seed", "--seed", "18446744073709551616", NULL);
    reject("--scenario", "--scenario", "", NULL);
    reject("mutually exclusive", "--orders", "5", "--duration=1");
    reject("--url", "--url", "ftp://127.0.0.1:1", NULL);
    reject("--url", "--url", "http://127.0.0.1:99999", NULL);
    reject("--url", "--url", "http://example.com:80", NULL);
    reject("--url", "--url", "http://:80", NULL);
    reject("--rt-priority must be 1..99", "--rt-priority", "0", NULL);
    reject("--rt-priority needs a value", "--rt-priority", NULL, NULL);
    reject("--strict takes no value", "--strict=1", NULL, NULL);
}

/* ---- url ---- */

static void test_url(void)
{
    hb_url u;
    char err[HB_ERR_LEN];
    CHECK(hb_url_parse("http://127.0.0.1:8080", &u, err, sizeof(err)) == 0, "%s", err);
    CHECK(strcmp(u.host, "127.0.0.1") == 0 && u.port == 8080 && strcmp(u.hostport, "127.0.0.1:8080") == 0, "v4");
    CHECK(strcmp(u.order_url, "http://127.0.0.1:8080/order") == 0, "%s", u.order_url);
    CHECK(u.addr.sin_addr.s_addr == htonl(0x7f000001) && u.addr.sin_port == htons(8080), "sockaddr");
    CHECK(hb_url_parse("http://localhost:9/", &u, err, sizeof(err)) == 0 && u.port == 9, "%s", err);
    CHECK(u.addr.sin_addr.s_addr == htonl(0x7f000001) && strcmp(u.order_path, "/order") == 0, "localhost");
    CHECK(hb_url_parse("http://10.1.2.3/api/", &u, err, sizeof(err)) == 0 && u.port == 80, "%s", err);
    CHECK(strcmp(u.order_path, "/api/order") == 0 && strcmp(u.order_url, "http://10.1.2.3:80/api/order") == 0,
          "%s", u.order_url);
    CHECK(hb_url_parse("https://127.0.0.1:1", &u, err, sizeof(err)) != 0, "https rejected");
    CHECK(hb_url_parse("http://127.0.0.1:0", &u, err, sizeof(err)) != 0, "port 0 rejected");
    CHECK(hb_url_parse("http://127.0.0.1:80x", &u, err, sizeof(err)) != 0, "port junk rejected");
    CHECK(hb_url_parse("http://127.0.0.1:80/a?b=1", &u, err, sizeof(err)) != 0, "query rejected");
}

/* ---- order stream ---- */

static void test_order(void)
{
    static const char README_BODY[] =
        "{\"buy_sell\":\"sell\",\"symbol\":1301,\"price\":100.05,\"quantity\":200,\"market_type\":\"common\","
        "\"price_type\":\"limit\",\"time_in_force\":\"rod\",\"order_type\":\"stock\",\"user_def\":\"hftbench\","
        "\"client_timestamp\":\"2026-11-22T10:00:00.123456Z\"}";
    hb_order o;
    char body[HB_ORDER_BODY_MAX];
    hb_order_make(0, 0, &o);
    CHECK(o.x == UINT64_C(0xe220a8397b1dcdaf), "x = %016llx", (unsigned long long)o.x);
    size_t n = hb_order_format(&o, "2026-11-22T10:00:00.123456Z", body, sizeof(body));
    CHECK(n == strlen(README_BODY) && strcmp(body, README_BODY) == 0, "body %s", body);
    CHECK(memcmp(body + hb_order_body_ts_offset(n), "2026-11-22T10:00:00.123456Z", HB_TS_LEN) == 0, "ts offset");
    CHECK(hb_order_format(&o, "2026-11-22T10:00:00.123456Z", body, 10) == 0, "small buffer refused");

    /* Every field stays in its range over many orders; the body is always valid text. */
    int markets = 0;
    for (uint64_t k = 0; k < 100000; k++) {
        hb_order_make(12345, k, &o);
        CHECK(o.price_cents >= 9950 && o.price_cents <= 10050 && o.price_cents % 5 == 0, "price %d", o.price_cents);
        CHECK(o.quantity >= 100 && o.quantity <= 1000 && o.quantity % 100 == 0, "quantity %d", o.quantity);
        markets += strcmp(o.price_type, "market") == 0;
        if (k == 99999) {
            n = hb_order_format(&o, "2026-11-22T10:00:00.000000Z", body, sizeof(body));
            CHECK(n > 0 && n < HB_ORDER_BODY_MAX && body[n - 1] == '}', "body");
        }
    }
    CHECK(markets > 4000 && markets < 6000, "about 5%% market orders, got %d", markets);
}

static void test_timestamp(void)
{
    hb_ts_cache cache;
    char out[HB_TS_LEN + 1] = {0};
    struct timespec t = {.tv_sec = 1795341600, .tv_nsec = 123456789};
    hb_ts_cache_init(&cache);
    hb_ts_format(&cache, &t, out);
    CHECK(strcmp(out, "2026-11-22T10:00:00.123456Z") == 0, "%s", out);
    t.tv_nsec = 7000;
    hb_ts_format(&cache, &t, out);
    CHECK(strcmp(out, "2026-11-22T10:00:00.000007Z") == 0, "%s", out);
    t.tv_sec += 61;
    t.tv_nsec = 999999999;
    hb_ts_format(&cache, &t, out);
    CHECK(strcmp(out, "2026-11-22T10:01:01.999999Z") == 0, "%s", out);
}

/* ---- statistics ---- */

static void test_stats(void)
{
    hb_stats a;
    hb_stats b;
    hb_latency l;
    CHECK(hb_stats_init(&a, false) == 0 && hb_stats_init(&b, false) == 0, "init");
    hb_latency_from(a.latency, &l);
    CHECK(l.empty, "no sample -> empty");
    for (int64_t v = 1; v <= 500; v++) {
        hb_stats_record_ok(&a, v * 1000, 0); /* 1..500 µs */
    }
    for (int64_t v = 501; v <= 1000; v++) {
        hb_stats_record_ok(&b, v * 1000, 0); /* 501..1000 µs */
    }
    hb_stats_record_error(&b, HB_ERR_TIMEOUT);
    hb_stats_record_error(&b, HB_ERR_HTTP_5XX);
    hb_stats_merge(&a, &b);
    CHECK(a.ok == 1000 && a.latency->total_count == 1000, "merged count");
    CHECK(hb_stats_error_total(&a) == 2 && a.errors[HB_ERR_TIMEOUT] == 1, "merged errors");
    hb_latency_from(a.latency, &l);
    /* 3 significant digits: each value is within 0.1% of the exact percentile. */
    CHECK(!l.empty && l.min == 1.0, "min %f", l.min);
    CHECK(l.p50 >= 499.5 && l.p50 <= 500.5, "p50 %f", l.p50);
    CHECK(l.p90 >= 899.0 && l.p90 <= 901.0, "p90 %f", l.p90);
    CHECK(l.p99 >= 989.0 && l.p99 <= 991.0, "p99 %f", l.p99);
    CHECK(l.max >= 999.0 && l.max <= 1001.0, "max %f", l.max);
    CHECK(l.mean >= 500.0 && l.mean <= 501.0, "mean %f", l.mean);
    CHECK(l.stddev >= 288.0 && l.stddev <= 289.5, "stddev %f", l.stddev); /* sqrt((n^2-1)/12) = 288.67 */

    CHECK(a.lateness == NULL, "closed loop: no lateness histogram");
    hb_stats_record_lateness(&a, 5000); /* a no-op in closed loop */

    hb_stats_record_ok(&b, -5, 0);             /* clamped to 1 ns, never dropped */
    hb_stats_record_ok(&b, INT64_C(1) << 40, 0); /* clamped to 60 s */
    CHECK(b.latency->total_count == 502 && hdr_min(b.latency) == 1, "clamped");
    CHECK(hdr_values_are_equivalent(b.latency, hdr_max(b.latency), HB_HIST_HIGHEST_NS), "clamped high");
    hb_stats_close(&a);
    hb_stats_close(&b);

    /* Open loop: lateness per order, clamped into 0 .. 60 s, merged like the latencies. */
    CHECK(hb_stats_init(&a, true) == 0 && hb_stats_init(&b, true) == 0, "init open");
    hb_stats_record_lateness(&a, 2000);
    hb_stats_record_lateness(&a, -7); /* never early: counts as 0 */
    hb_stats_record_lateness(&b, INT64_C(1) << 40);
    hb_stats_merge(&a, &b);
    CHECK(a.lateness->total_count == 3 && hdr_min(a.lateness) == 0 && a.ok == 0, "lateness merged");
    CHECK(hdr_values_are_equivalent(a.lateness, hdr_max(a.lateness), HB_HIST_HIGHEST_NS), "lateness clamped high");
    hb_stats_close(&a);
    hb_stats_close(&b);

    CHECK(hb_error_kind_of_status(200) == -1 && hb_error_kind_of_status(404) == HB_ERR_HTTP_4XX, "status");
    CHECK(hb_error_kind_of_status(503) == HB_ERR_HTTP_5XX && hb_error_kind_of_status(302) == HB_ERR_OTHER, "status");
}

/* ---- schedule ---- */

static void test_schedule(void)
{
    static unsigned char seen[1000];
    const int conns[] = {1, 2, 3, 5, 10, 50};
    for (size_t ci = 0; ci < sizeof(conns) / sizeof(conns[0]); ci++) {
        int c = conns[ci];
        for (int workers = 1; workers <= 4 && workers <= c; workers++) {
            memset(seen, 0, sizeof(seen));
            int next_slot = 0;
            for (int w = 0; w < workers; w++) {
                int first = -1;
                int n = hb_schedule_share(c, workers, w, &first);
                CHECK(first == next_slot && n >= c / workers && n <= c / workers + 1, "share c=%d w=%d", c, w);
                next_slot += n;
                uint64_t prev = 0;
                for (uint64_t i = (uint64_t)first; i < 1000; i = hb_schedule_next(i, (uint64_t)c, (uint64_t)first, (uint64_t)n)) {
                    CHECK((int)(i % (uint64_t)c) >= first && (int)(i % (uint64_t)c) < first + n, "slot of %llu",
                          (unsigned long long)i);
                    CHECK(i == (uint64_t)first || i > prev, "increasing");
                    seen[i]++;
                    prev = i;
                }
            }
            CHECK(next_slot == c, "slots cover the connections c=%d workers=%d", c, workers);
            int once = 0;
            for (int i = 0; i < 1000; i++) {
                once += seen[i] == 1;
            }
            CHECK(once == 1000, "every order exactly once: c=%d workers=%d, %d of 1000", c, workers, once);
        }
    }
    CHECK(hb_schedule_workers(50, 2) == 2, "one worker per usable CPU");
    CHECK(hb_schedule_workers(3, 8) == 3, "never more workers than connections");
    CHECK(hb_schedule_workers(50, 0) == 1, "at least one worker");
    CHECK(hb_usable_cpus() >= 1, "usable CPUs %d", hb_usable_cpus());
    CHECK(hb_schedule_intended_ns(5, 3, 1000.0) == 3000005, "intended");
    CHECK(hb_schedule_intended_ns(0, 1, 3.0) == 333333333, "intended %llu",
          (unsigned long long)hb_schedule_intended_ns(0, 1, 3.0));

    hb_config cfg;
    hb_config_defaults(&cfg);
    CHECK(hb_schedule_total(&cfg) == 1100, "orders + warmup");
    cfg.orders = 0;
    cfg.duration_s = 1.5;
    CHECK(hb_schedule_total(&cfg) == UINT64_MAX, "closed loop with --duration: until the deadline");
    cfg.rate = 3000;
    CHECK(hb_schedule_total(&cfg) == 4600, "open loop with --duration: the schedule of S seconds");
}

int main(void)
{
    test_args_accept();
    test_args_reject();
    test_url();
    test_order();
    test_timestamp();
    test_stats();
    test_schedule();
    test_result();
    test_intervals();
    (void)printf("hb_test: %d checks, %d failed\n", hb_test_checks, hb_test_failures);
    return hb_test_failures == 0 ? 0 : 1;
}
