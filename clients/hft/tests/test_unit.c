/* Unit tests of the pure parts: the request template, the response parser, the canned
 * response, CPU lists, the tuning JSON, the clock, the workers' ticket source, the duet's
 * pair order and flag refusals. Run by
 * `make test` (sanitized build). */
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

/* Two workers of one phase, owning slots 0,2,4 and 1,3 of C = 5 (as hft_run splits them);
 * in a duet (sides 2) each slot has a connection to each side: conns[side * n + j]. */
#define T_CONNS 5
static hb_config t_cfg;
static hft_phase t_phase;
static hft_worker t_w[2];
static hft_conn t_conns[T_CONNS * HFT_SIDES];

static void tickets_setup_sides(bool open_loop, int sides) {
    memset(&t_cfg, 0, sizeof t_cfg);
    memset(&t_phase, 0, sizeof t_phase);
    memset(t_w, 0, sizeof t_w);
    memset(t_conns, 0, sizeof t_conns);
    t_cfg.connections = T_CONNS;
    t_cfg.seed = 7;
    t_phase.cfg = &t_cfg;
    t_phase.sides = sides;
    t_phase.open_loop = open_loop;
    t_phase.nw = 2;
    t_phase.w = t_w;
    t_phase.deadline = UINT64_MAX;
    for (int t = 0; t < 2; t++) {
        int n = t == 0 ? 3 : 2;
        hft_conn *conns = t == 0 ? t_conns : t_conns + (ptrdiff_t)3 * sides;
        t_w[t] = (hft_worker){.phase = &t_phase, .id = t, .n = n, .conns = conns};
        for (int j = 0; j < n * sides; j++) t_w[t].conns[j].side = j / n;
        hft_worker_reset_tickets(&t_w[t]);
    }
}

static void tickets_setup(bool open_loop) { tickets_setup_sides(open_loop, 1); }

/* Take every due ticket of every connection at time now; count each order. @return tickets taken. */
static int take_all(uint64_t now, unsigned char *seen, size_t n_seen) {
    int taken = 0;
    for (int t = 0; t < 2; t++) {
        for (int j = 0; j < t_w[t].n * t_phase.sides; j++) {
            const hft_conn *c = &t_w[t].conns[j];
            uint64_t k = 0, due = 0;
            while (hft_worker_take_ticket(&t_w[t], &t_w[t].conns[j], now, &k, &due) == HFT_TICKET_DUE) {
                CHECK(k < n_seen);
                if (k >= n_seen) return -1;
                seen[k]++;
                if (t_phase.open_loop) CHECK(k % T_CONNS == (uint64_t)(t + (j % t_w[t].n) * 2)); /* its slot's */
                if (t_phase.sides > 1) CHECK(hft_order_side(t_cfg.seed, k) == c->side);
                if (t_phase.open_loop) CHECK(due == t_phase.t0 + k * 10u && due <= now);
                else CHECK(due == 0);
                taken++;
            }
        }
    }
    return taken;
}

static void test_tickets_open_loop(void) {
    unsigned char seen[64] = {0};
    tickets_setup(true);
    t_phase.total = 23;
    t_phase.t0 = 1000;
    t_phase.ticks_per_order = 10.0;
    /* Before t0 nothing is due: each connection's first order is LATER, at its own time. */
    for (int t = 0; t < 2; t++) {
        for (int j = 0; j < t_w[t].n; j++) {
            uint64_t k = 0, due = 0, first = (uint64_t)t + (uint64_t)j * 2u;
            CHECK(hft_worker_take_ticket(&t_w[t], &t_w[t].conns[j], 999, &k, &due) == HFT_TICKET_LATER);
            CHECK(due == 1000 + first * 10u);
        }
    }
    /* At order 9's time, orders 0..9 are due, each once, none later. */
    CHECK(take_all(1000 + 9 * 10, seen, sizeof seen) == 10);
    for (int k = 0; k < 23; k++) CHECK(seen[k] == (k <= 9));
    /* Late (long past every due time): the rest are sent, never skipped, and then END. */
    CHECK(take_all(UINT64_MAX - 1, seen, sizeof seen) == 13);
    for (int k = 0; k < 64; k++) CHECK(seen[k] == (k < 23));
    uint64_t k = 0, due = 0;
    CHECK(hft_worker_take_ticket(&t_w[1], &t_w[1].conns[0], UINT64_MAX - 1, &k, &due) == HFT_TICKET_END);
    /* --duration: no order whose intended time is at or after the deadline. */
    memset(seen, 0, sizeof seen);
    tickets_setup(true);
    t_phase.total = 23;
    t_phase.t0 = 1000;
    t_phase.ticks_per_order = 10.0;
    t_phase.deadline = 1000 + 7 * 10;
    CHECK(take_all(UINT64_MAX - 1, seen, sizeof seen) == 7);
    for (int i = 0; i < 23; i++) CHECK(seen[i] == (i < 7));
}

/* The open-loop duet: every order once, on its slot's connection to the side drawn for it. */
static void test_tickets_duet(void) {
    static unsigned char seen[2000];
    tickets_setup_sides(true, HFT_SIDES);
    t_phase.total = 2000;
    t_phase.t0 = 1000;
    t_phase.ticks_per_order = 10.0;
    for (int t = 0; t < 2; t++) hft_worker_reset_tickets(&t_w[t]); /* as the runner: total known */
    CHECK(take_all(1000 + 99 * 10, seen, sizeof seen) == 100); /* orders 0..99 due, whichever side */
    for (int k = 0; k < 2000; k++) CHECK(seen[k] == (k < 100));
    CHECK(take_all(UINT64_MAX - 1, seen, sizeof seen) == 1900); /* late: the rest, none skipped */
    int b = 0;
    for (int k = 0; k < 2000; k++) {
        CHECK(seen[k] == 1);
        b += hft_order_side(t_cfg.seed, (uint64_t)k);
    }
    CHECK(b > 0 && b < 2000); /* both sides got orders */
}

static void test_tickets_closed_loop(void) {
    unsigned char seen[512] = {0};
    tickets_setup(false);
    atomic_store(&t_phase.next, 100); /* the measured phase of --warmup 100 --orders 200 */
    t_phase.phase_hi = 300;
    CHECK(take_all(0, seen, sizeof seen) == 200);
    for (int k = 0; k < 512; k++) CHECK(seen[k] == (k >= 100 && k < 300));
    /* END stays END for the phase: the shared counter is not touched again. */
    uint64_t next = atomic_load(&t_phase.next), k = 0, due = 0;
    CHECK(hft_worker_take_ticket(&t_w[0], &t_w[0].conns[0], 0, &k, &due) == HFT_TICKET_END);
    CHECK(atomic_load(&t_phase.next) == next);
    /* Past the --duration deadline nothing is taken. */
    tickets_setup(false);
    t_phase.phase_hi = UINT64_MAX;
    t_phase.deadline = 1; /* ticks: long past */
    CHECK(hft_worker_take_ticket(&t_w[0], &t_w[0].conns[0], 0, &k, &due) == HFT_TICKET_END);
    CHECK(atomic_load(&t_phase.next) == 0);
}

/* The duet's pair order: the same seed, the same draws; both orders, neither over 55 %. */
static void test_pair_order(void) {
    const uint64_t seeds[] = {0, 1, 2, 42, UINT64_MAX};
    for (size_t i = 0; i < sizeof seeds / sizeof seeds[0]; i++) {
        hft_pair_rng r1, r2;
        hft_pair_rng_init(&r1, seeds[i]);
        hft_pair_rng_init(&r2, seeds[i]);
        int b_first = 0, same = 1, longest = 0, run = 0;
        bool prev = false;
        for (int k = 0; k < 10000; k++) {
            bool b = hft_pair_b_first(&r1);
            same &= b == hft_pair_b_first(&r2);
            b_first += b;
            run = k > 0 && b == prev ? run + 1 : 1;
            if (run > longest) longest = run;
            prev = b;
        }
        CHECK(same);
        CHECK(b_first >= 4500 && b_first <= 5500);
        CHECK(longest > 1 && longest < 40); /* not alternating, not stuck */
    }
    hft_pair_rng a, b;
    hft_pair_rng_init(&a, 1);
    hft_pair_rng_init(&b, 2);
    int differ = 0;
    for (int k = 0; k < 64; k++) differ += hft_pair_b_first(&a) != hft_pair_b_first(&b);
    CHECK(differ > 0); /* another seed, another order */
}

/* The open-loop duet's side per order: orders 2k and 2k+1 one to each side, the first's side
 * output k of hft_pair_rng's stream, a function of (seed, i); each side exactly half of any
 * even stretch; the first order's side 45-55 % each of 10,000 pairs; another seed, other draws. */
static void test_order_side(void) {
    const uint64_t seeds[] = {0, 1, 7, 42, UINT64_MAX};
    for (size_t s = 0; s < sizeof seeds / sizeof seeds[0]; s++) {
        hft_pair_rng r;
        hft_pair_rng_init(&r, seeds[s]);
        int b_first = 0, same = 1, stream = 1, paired = 1;
        for (uint64_t k = 0; k < 10000; k++) {
            int first = hft_order_side(seeds[s], 2 * k), second = hft_order_side(seeds[s], 2 * k + 1);
            same &= first == hft_order_side(seeds[s], 2 * k) && second == hft_order_side(seeds[s], 2 * k + 1);
            stream &= first == (int)(hft_pair_rng_next(&r) >> 63);
            paired &= first != second;
            CHECK(first == HFT_SIDE_A || first == HFT_SIDE_B);
            b_first += first == HFT_SIDE_B;
        }
        CHECK(same && stream && paired);
        CHECK(b_first >= 4500 && b_first <= 5500);
        int b = 0;
        for (uint64_t i = 1000; i < 1000 + 64; i++) b += hft_order_side(seeds[s], i) == HFT_SIDE_B;
        CHECK(b == 32); /* any stretch of whole pairs: half each */
    }
    int differ = 0;
    for (uint64_t i = 0; i < 64; i++) differ += hft_order_side(1, i) != hft_order_side(2, i);
    CHECK(differ > 0);
}

/* An open-loop duet's slot fed by hft_slot_first, one order at a time, sends its orders in the
 * schedule's order (c, c+C, c+2C, ...) whichever side each is drawn to, and both sides lead. */
static void test_slot_first(void) {
    tickets_setup_sides(true, 2);
    t_phase.total = 400;
    t_phase.t0 = 0;
    t_phase.ticks_per_order = 10.0;
    for (int t = 0; t < 2; t++) hft_worker_reset_tickets(&t_w[t]);
    int led[HFT_SIDES] = {0, 0};
    for (int t = 0; t < 2; t++) {
        for (int s = 0; s < t_w[t].n; s++) {
            hft_conn *pair[HFT_SIDES] = {&t_w[t].conns[s], &t_w[t].conns[t_w[t].n + s]};
            uint64_t expect = (uint64_t)t + (uint64_t)s * 2u, k = 0, due = 0; /* slot t + 2s of T_CONNS */
            for (;;) {
                int first = hft_slot_first(pair[HFT_SIDE_A], pair[HFT_SIDE_B]);
                if (hft_worker_take_ticket(&t_w[t], pair[first], UINT64_MAX - 1, &k, &due) != HFT_TICKET_DUE) break;
                CHECK(k == expect); /* the slot's next order in the schedule, on its side's connection */
                CHECK(hft_order_side(t_cfg.seed, k) == first);
                led[first]++;
                expect += T_CONNS;
            }
            CHECK(expect >= 400); /* every one of the slot's orders, none skipped */
        }
    }
    CHECK(led[HFT_SIDE_A] > 50 && led[HFT_SIDE_B] > 50);
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
    /* The closed-loop duet keeps one connection a side. */
    CHECK(DUET("--duet-url", "http://127.0.0.1:8081", "--duet-output", "b.json", "--connections", "2") == -1);
    CHECK(strstr(err, "--connections 2") != NULL && strstr(err, "pass --rate") != NULL);
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
    test_canned_response();
    test_cpus();
    test_tuning_json();
    test_clock();
    test_busy_poll_rule();
    test_tickets_open_loop();
    test_tickets_duet();
    test_tickets_closed_loop();
    test_pair_order();
    test_order_side();
    test_slot_first();
    test_duet_flags();
    if (failures) {
        fprintf(stderr, "test_unit: %d check(s) failed\n", failures);
        return 1;
    }
    printf("test_unit: all checks passed\n");
    return 0;
}
