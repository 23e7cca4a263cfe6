/* Unit tests of the pure parts: the request template, the response parser and reader, the canned
 * response, CPU lists, the tuning JSON, the clock, the busy-poll rule and the duet's flag
 * refusals (the schedule's: test_schedule.c). Run by `make test` (sanitized build). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hb_order.h"
#include "hft_clock.h"
#include "hft_cpus.h"
#include "hft_duet.h"
#include "hft_runner.h"
#include "hft_http.h"
#include "hft_tune.h"
#include "hft_worker.h"
#include "tests/hb_check.h"

static int parse(const char *text, hft_head *h) { return hft_parse_response_head(text, strlen(text), 8192, h); }

static void test_request_template(void) {
    hft_request r;
    CHECK(hft_request_init(&r, "/order", "127.0.0.1:8080") == 0);
    CHECK(((uintptr_t)r.buf % HFT_CACHE_LINE) == 0);
    const char *body = "{\"a\":1}";
    memcpy(hft_request_body(&r), body, strlen(body));
    hft_request_set_body_len(&r, strlen(body));
    char want[] = "POST /order HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nContent-Type: application/json\r\n"
                  "Connection: keep-alive\r\nContent-Length:     7\r\n\r\n{\"a\":1}";
    CHECK(r.len == strlen(want) && memcmp(r.buf, want, r.len) == 0);
    /* The head is parsed back by our own request parser: the floor's server relies on it. */
    hft_head h;
    CHECK(hft_parse_request_head(r.buf, r.len, 8192, &h) == HFT_HEAD_DONE);
    CHECK(h.content_length == 7 && h.head_len == r.len - 7 && !h.close);
    /* Rewriting with a longer body keeps the head in place. */
    hft_request_set_body_len(&r, 12345);
    CHECK(memcmp(r.buf + r.clen_off, "12345", 5) == 0 && r.len == r.head_len + 12345);
    hft_request_set_body_len(&r, 219);
    CHECK(memcmp(r.buf + r.clen_off, "  219", 5) == 0);
    hft_request_set_body_len(&r, 0);
    CHECK(memcmp(r.buf + r.clen_off, "    0", 5) == 0);
    char long_path[700];
    memset(long_path, 'a', sizeof long_path - 1);
    long_path[sizeof long_path - 1] = '\0';
    CHECK(hft_request_init(&r, long_path, "h:1") == -1);
}

static void test_order_body_fits(void) {
    hft_request r;
    hft_request_init(&r, "/order", "127.0.0.1:65535");
    CHECK(hft_request_body_cap(&r) >= HB_ORDER_BODY_MAX);
}

static void test_response_parser(void) {
    hft_head h;
    CHECK(parse("HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nhello", &h) == HFT_HEAD_DONE);
    CHECK(h.status == 200 && h.content_length == 5 && h.head_len == 38 && !h.close);
    CHECK(parse("HTTP/1.1 404 Not Found\r\nContent-Type: x\r\nContent-Length:  12 \r\nConnection: Close\r\n\r\n", &h) ==
          HFT_HEAD_DONE);
    CHECK(h.status == 404 && h.content_length == 12 && h.close);
    CHECK(parse("HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n", &h) == HFT_HEAD_DONE && h.close);
    /* Every prefix of a head is incomplete, never malformed (partial reads). */
    const char *full = "HTTP/1.1 200 OK\r\ncontent-length: 5\r\ndate: x\r\n\r\n";
    for (size_t n = 0; n < strlen(full); n++) CHECK(hft_parse_response_head(full, n, 8192, &h) == HFT_HEAD_INCOMPLETE);
    CHECK(parse("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", &h) == HFT_HEAD_MALFORMED);
    CHECK(parse("HTTP/1.1 200 OK\r\nServer: x\r\n\r\n", &h) == HFT_HEAD_MALFORMED); /* no length */
    CHECK(parse("HTTP/1.1 2x0 OK\r\ncontent-length: 1\r\n\r\n", &h) == HFT_HEAD_MALFORMED);
    CHECK(parse("HTTP/1.1 200 OK\r\ncontent-length: 1a\r\n\r\n", &h) == HFT_HEAD_MALFORMED);
    CHECK(parse("SSH-2.0-OpenSSH\r\n\r\n", &h) == HFT_HEAD_MALFORMED);
    CHECK(parse("HTTP/1.1 200 OK\r\nno colon here\r\n\r\n", &h) == HFT_HEAD_MALFORMED);
    /* A head that does not end within max_head is malformed, not forever incomplete. */
    CHECK(hft_parse_response_head("HTTP/1.1 200 OK\r\nx: yyyyyyyy", 27, 20, &h) == HFT_HEAD_MALFORMED);
    /* Found by fuzz/fuzz_reply.c (fuzz/corpus/regress-*): a status outside 100..599 is no
     * status code (RFC 9110 15), and a second Content-Length that differs makes the length
     * unknown (RFC 9112 6.3); the same length twice is one length. */
    const char *not_status[] = {"000", "020", "099", "600", "999"};
    char text[64];
    for (size_t i = 0; i < sizeof not_status / sizeof not_status[0]; i++) {
        snprintf(text, sizeof text, "HTTP/1.1 %s OK\r\ncontent-length: 0\r\n\r\n", not_status[i]);
        CHECK(parse(text, &h) == HFT_HEAD_MALFORMED);
    }
    CHECK(parse("HTTP/1.1 100 Continue\r\ncontent-length: 0\r\n\r\n", &h) == HFT_HEAD_DONE && h.status == 100);
    CHECK(parse("HTTP/1.1 599 x\r\ncontent-length: 0\r\n\r\n", &h) == HFT_HEAD_DONE && h.status == 599);
    CHECK(parse("HTTP/1.1 200 OK\r\ncontent-length:4\r\ncontent-length:6\r\n\r\n", &h) == HFT_HEAD_MALFORMED);
    CHECK(parse("HTTP/1.1 200 OK\r\ncontent-length: 4\r\nContent-Length: 4\r\n\r\n", &h) == HFT_HEAD_DONE &&
          h.content_length == 4);
}

/* hft_reply_absorb: the reads of one reply, as hft_conn_read makes them (n bytes each). */
static int absorb(hft_reply *r, char *buf, size_t cap, const char *bytes, size_t n) {
    memcpy(buf + r->fill, bytes, n);
    return hft_reply_absorb(r, buf, cap, n);
}
#define ABSORB(r, buf, text) absorb(r, buf, sizeof(buf), text, sizeof(text) - 1)

static void test_reply_reads(void) {
    char buf[64];
    hft_reply r;
    /* Byte by byte: pending until the last body byte, whatever the split. */
    static const char full[] = "HTTP/1.1 200 OK\r\ncontent-length: 3\r\n\r\n{x}";
    hft_reply_start(&r);
    for (size_t i = 0; i + 2 < sizeof full; i++)
        CHECK(absorb(&r, buf, sizeof buf, full + i, 1) == HFT_REPLY_PENDING && r.fill < sizeof buf);
    CHECK(ABSORB(&r, buf, "}") == HFT_REPLY_DONE && r.head.status == 200 && r.body_got == 3);
    /* Once the head is parsed the body is only counted: the buffer starts over. */
    hft_reply_start(&r);
    CHECK(ABSORB(&r, buf, "HTTP/1.1 503 x\r\ncontent-length: 100\r\n\r\n{") == HFT_REPLY_PENDING);
    CHECK(r.head_done && r.fill == 0 && r.body_got == 1);
    for (int i = 0; i < 98; i++) CHECK(ABSORB(&r, buf, " ") == HFT_REPLY_PENDING && r.fill == 0);
    CHECK(ABSORB(&r, buf, "}") == HFT_REPLY_DONE && r.head.status == 503);
    /* No pipelining: a byte beyond the reply in the same read is an error. */
    hft_reply_start(&r);
    CHECK(ABSORB(&r, buf, "HTTP/1.1 200 OK\r\ncontent-length: 1\r\n\r\n{}") == HFT_REPLY_MALFORMED);
    /* A head that fills the buffer without ending is an error, never a read of 0 bytes. */
    hft_reply_start(&r);
    CHECK(ABSORB(&r, buf, "HTTP/1.1 200 OK\r\nx-pad: 012345678901234567890123") == HFT_REPLY_PENDING);
    CHECK(r.fill == 48 && ABSORB(&r, buf, "0123456789abcd\r\n") == HFT_REPLY_MALFORMED);
}

static void test_canned_response(void) {
    char buf[1024];
    hft_head h;
    CHECK(hft_canned_response(buf, sizeof buf, 400) == 400);
    CHECK(hft_parse_response_head(buf, 400, sizeof buf, &h) == HFT_HEAD_DONE);
    CHECK(h.status == 200 && h.head_len + h.content_length == 400);
    CHECK(buf[h.head_len] == '{' && buf[399] == '}');
    CHECK(hft_canned_response(buf, sizeof buf, 10) == 0);
    CHECK(hft_canned_response(buf, sizeof buf, 2000) == 0);
}

static void test_cpus(void) {
    hft_cpus c;
    char err[256], text[64];
    CHECK(hft_cpus_parse("0-3,6", &c, err, sizeof err) == 0 && c.n == 5 && c.cpu[3] == 3 && c.cpu[4] == 6);
    hft_cpus_format(&c, text, sizeof text);
    CHECK(strcmp(text, "0,1,2,3,6") == 0);
    CHECK(hft_cpus_parse("1", &c, err, sizeof err) == 0 && c.n == 1 && c.cpu[0] == 1);
    const char *bad[] = {"", "a", "1-", "3-1", "1,1", "0-2,2", "1,", "99999", "1;2"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK(hft_cpus_parse(bad[i], &c, err, sizeof err) == -1);
        CHECK(strstr(err, "--cpus") != NULL && strstr(err, "pass e.g.") != NULL);
    }
    CHECK(hft_cpus_default(&c) == 0 && c.n >= 1);
    for (int i = 1; i < c.n; i++) CHECK(c.cpu[i - 1] > c.cpu[i]); /* highest first */
}

static void test_tuning_json(void) {
    hft_tuning t, w;
    char json[1024], bad[256];
    hft_tuning_init(&t);
    for (int i = 0; i < HFT_T_COUNT; i++) strcpy(t.item[i].text, "applied");
    strcpy(t.item[HFT_T_RT].text, "unavailable: not requested (pass --rt-priority N)");
    CHECK(hft_tuning_all_applied(&t, bad, sizeof bad));
    hft_tuning_init(&w);
    for (int i = 0; i < HFT_T_COUNT; i++) strcpy(w.item[i].text, "applied");
    strcpy(w.item[HFT_T_HUGEPAGES].text, "unavailable: no \"pages\"");
    hft_tuning_merge(&t, &w);
    CHECK(!hft_tuning_all_applied(&t, bad, sizeof bad) && strncmp(bad, "hugepages: ", 11) == 0);
    hft_tuning_json(&t, json, sizeof json);
    CHECK(strcmp(json, "{\"mlockall\": \"applied\", \"affinity\": \"applied\", \"numa\": \"applied\", "
                       "\"rt_priority\": \"unavailable: not requested (pass --rt-priority N)\", "
                       "\"hugepages\": \"unavailable: no 'pages'\"}") == 0);
}

/* The calibrated TSC agrees with CLOCK_MONOTONIC_RAW over the same interval. Each end is a
 * tight bracket of raw reads around one tick read; an attempt preempted inside a bracket is
 * retried, so the shared machine's load cannot fail it (no wall-clock time is asserted). */
static void test_clock(void) {
    hft_clock_init(true, 20);
    int agreed = 0, tried = 0;
    for (int attempt = 0; attempt < 20 && !agreed; attempt++) {
        uint64_t a0 = hft_raw_ns(), t0 = hft_ticks(), a1 = hft_raw_ns();
        while (hft_raw_ns() - a1 < 20000000u) { }
        uint64_t b0 = hft_raw_ns(), t1 = hft_ticks(), b1 = hft_raw_ns();
        if (a1 - a0 > 5000 || b1 - b0 > 5000) continue;
        tried++;
        double ref = (double)(b0 + b1) / 2 - (double)(a0 + a1) / 2, got = (double)hft_ticks_to_ns(t1 - t0);
        agreed = got > ref * 0.98 && got < ref * 1.02;
    }
    CHECK(tried == 0 || agreed);
    if (hft_clk.tsc) CHECK(hft_clk.tsc_hz > 1e8 && hft_clk.tsc_hz < 1e10);
    hft_clock_init(false, 0);
    CHECK(!hft_clk.tsc && hft_clk.ns_per_tick == 1.0);
}

static void test_busy_poll_rule(void) {
    CHECK(hft_busy_poll_resolve(HFT_POLL_AUTO, 1, 2));   /* a CPU left for the server: spin */
    CHECK(!hft_busy_poll_resolve(HFT_POLL_AUTO, 2, 2));  /* every CPU busy: sleep */
    CHECK(!hft_busy_poll_resolve(HFT_POLL_AUTO, 1, 1));
    CHECK(hft_busy_poll_resolve(HFT_POLL_BUSY, 2, 2));
    CHECK(!hft_busy_poll_resolve(HFT_POLL_SLEEP, 1, 8));
}

/* Parse argv with the duet's options, then resolve: 0, or -1 with err naming the flag. */
static int duet_args(int argc, char *const argv[], hb_config *cfg, hft_duet_flags *d, char *err, size_t errlen) {
    hb_extra_option o[HFT_DUET_N_OPTIONS];
    hft_duet_options(d, o);
    if (hb_args_parse(cfg, argc, argv, "client-hft", o, HFT_DUET_N_OPTIONS, err, errlen) != HB_ARGS_OK) return -1;
    return hft_duet_resolve(cfg, d, hft_duet_connections_given(argc, argv), err, errlen);
}

static void test_duet_flags(void) {
    hb_config cfg;
    hft_duet_flags d;
    char err[HB_ERR_LEN];
#define ARGV(...) ((char *const[]){"client-hft", __VA_ARGS__})
#define NARGS(...) ((int)(sizeof((char *const[]){"client-hft", __VA_ARGS__}) / sizeof(char *)))
#define DUET(...) duet_args(NARGS(__VA_ARGS__), ARGV(__VA_ARGS__), &cfg, &d, err, sizeof err)
    CHECK(DUET("--url", "http://127.0.0.1:8080", "--duet-url", "http://127.0.0.1:8081", "--duet-output", "b.json",
               "--output", "a.json") == 0);
    CHECK(d.on && cfg.connections == 1 && d.url.port == 8081 && strcmp(d.output, "b.json") == 0);
    hb_config b;
    hft_duet_config_b(&cfg, &d, &b);
    CHECK(b.url.port == 8081 && strcmp(b.output, "b.json") == 0 && b.seed == cfg.seed && b.warmup == cfg.warmup);
    CHECK(DUET("--duet-url", "http://127.0.0.1:8081", "--duet-output=b.json", "--connections=1") == 0);
    CHECK(DUET("--orders", "5") == 0 && !d.on && cfg.connections == 10); /* no duet: nothing changes */
    /* The refusals: each names the flag and the fix. */
    /* The open-loop duet: --rate with any --connections (default: the common one). */
    CHECK(DUET("--duet-url", "http://127.0.0.1:8081", "--duet-output", "b.json", "--rate", "100") == 0);
    CHECK(d.on && cfg.connections == 10 && hb_config_open_loop(&cfg));
    CHECK(DUET("--duet-url", "http://127.0.0.1:8081", "--duet-output", "b.json", "--rate", "100", "--connections",
               "4") == 0 && cfg.connections == 4);
    /* The closed-loop duet: --connections lanes when given, else one. */
    CHECK(DUET("--duet-url", "http://127.0.0.1:8081", "--duet-output", "b.json", "--connections", "8") == 0);
    CHECK(cfg.connections == 8);
    CHECK(DUET("--duet-url", "http://127.0.0.1:8081") == -1 && strstr(err, "--duet-output PATH") != NULL);
    CHECK(DUET("--url", "http://127.0.0.1:8081", "--duet-url", "http://127.0.0.1:8081/", "--duet-output", "b.json") == -1);
    CHECK(strstr(err, "the server of --url") != NULL);
    CHECK(DUET("--duet-url", "http://127.0.0.1:8081", "--duet-output", "x.json", "--output", "x.json") == -1);
    CHECK(strstr(err, "same file as --output") != NULL);
    CHECK(DUET("--duet-output", "b.json") == -1 && strstr(err, "pass --duet-url") != NULL);
    CHECK(DUET("--duet-url", "ftp://x") == -1 && strstr(err, "--duet-url must be") != NULL);
#undef DUET
#undef NARGS
#undef ARGV
}

int main(void) {
    test_request_template();
    test_order_body_fits();
    test_response_parser();
    test_reply_reads();
    test_canned_response();
    test_cpus();
    test_tuning_json();
    test_clock();
    test_busy_poll_rule();
    test_duet_flags();
    if (failures) {
        fprintf(stderr, "test_unit: %d check(s) failed\n", failures);
        return 1;
    }
    printf("test_unit: all checks passed\n");
    return 0;
}
