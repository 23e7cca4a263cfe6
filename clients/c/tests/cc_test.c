/* Unit tests of client-c's workers: the ticket source, on workers made by cc_worker_init
 * (libcurl handles, no network). Run by `make -C clients/c test`. */
#include <curl/curl.h>
#include <stdio.h>
#include <string.h>

#include "cc_worker.h"
#include "hb_schedule.h"
#include "tests/hb_check.h"

#define CONNS 5
#define WORKERS 2
#define SEEN 512

static hb_config cfg;
static cc_phase phase;
static cc_worker workers[WORKERS];

/* A phase and its workers as cc_run (cc_runner.c) sets them up (connections split by hb_schedule_share). */
static int setup(double rate, uint64_t total)
{
    hb_config_defaults(&cfg);
    cfg.connections = CONNS;
    cfg.rate = rate;
    memset(&phase, 0, sizeof(phase));
    phase.cfg = &cfg;
    phase.open_loop = hb_config_open_loop(&cfg);
    phase.total = total;
    phase.t0_ns = 1000000;
    int rc = 0;
    for (int i = 0; i < WORKERS; i++) {
        int first_slot = 0;
        int share = hb_schedule_share(CONNS, WORKERS, i, &first_slot);
        rc |= cc_worker_init(&workers[i], &phase, share, first_slot);
    }
    return rc;
}

static void teardown(void)
{
    for (int i = 0; i < WORKERS; i++) {
        cc_worker_close(&workers[i]);
    }
}

/* Take every due ticket of every worker at time now; count each order. @return tickets taken. */
static int take_all(uint64_t now, unsigned char *seen)
{
    int taken = 0;
    for (int i = 0; i < WORKERS; i++) {
        uint64_t k = 0;
        uint64_t intended = 0;
        while (cc_worker_take_ticket(&workers[i], now, &k, &intended) == CC_TICKET_DUE) {
            if (k >= SEEN) {
                CHECK(k < SEEN);
                return -1;
            }
            seen[k]++;
            if (phase.open_loop) {
                CHECK(intended == hb_schedule_intended_ns(phase.t0_ns, k, cfg.rate) && intended <= now);
                CHECK(k % CONNS >= (uint64_t)workers[i].first_slot &&
                      k % CONNS < (uint64_t)(workers[i].first_slot + workers[i].n_conns));
            } else {
                CHECK(intended == 0);
            }
            taken++;
        }
    }
    return taken;
}

static void test_open_loop(void)
{
    unsigned char seen[SEEN] = {0};
    CHECK(setup(1000.0, 23) == 0); /* 1 ms apart */
    uint64_t k = 0;
    uint64_t intended = 0;
    /* Before t0 nothing is due: each worker's first order is LATER, at its own time. */
    for (int i = 0; i < WORKERS; i++) {
        CHECK(cc_worker_take_ticket(&workers[i], phase.t0_ns - 1, &k, &intended) == CC_TICKET_LATER);
        CHECK(intended == hb_schedule_intended_ns(phase.t0_ns, (uint64_t)workers[i].first_slot, cfg.rate));
    }
    /* At order 9's time, orders 0..9 are due, each once, none later. */
    CHECK(take_all(hb_schedule_intended_ns(phase.t0_ns, 9, cfg.rate), seen) == 10);
    for (int i = 0; i < 23; i++) {
        CHECK(seen[i] == (i <= 9));
    }
    /* Late (long past every due time): the rest are sent, never skipped, and then END. */
    CHECK(take_all(UINT64_MAX - 1, seen) == 13);
    for (int i = 0; i < SEEN; i++) {
        CHECK(seen[i] == (i < 23));
    }
    CHECK(cc_worker_take_ticket(&workers[1], UINT64_MAX - 1, &k, &intended) == CC_TICKET_END);
    teardown();
}

static void test_closed_loop(void)
{
    unsigned char seen[SEEN] = {0};
    CHECK(setup(0.0, 300) == 0);
    atomic_store(&phase.next_k, 100); /* the measured phase of --warmup 100 --orders 200 */
    phase.end_k = 300;
    CHECK(take_all(0, seen) == 200);
    for (int i = 0; i < SEEN; i++) {
        CHECK(seen[i] == (i >= 100 && i < 300));
    }
    /* --duration: past the deadline nothing is taken from the counter. */
    uint64_t next = atomic_load(&phase.next_k);
    uint64_t k = 0;
    uint64_t intended = 0;
    phase.end_k = UINT64_MAX;
    phase.deadline_ns = 5000;
    CHECK(cc_worker_take_ticket(&workers[0], 5000, &k, &intended) == CC_TICKET_END);
    CHECK(atomic_load(&phase.next_k) == next);
    CHECK(cc_worker_take_ticket(&workers[0], 4999, &k, &intended) == CC_TICKET_DUE && k == next);
    teardown();
}

int main(void)
{
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        fprintf(stderr, "cc_test: cannot initialise libcurl\n");
        return 1;
    }
    test_open_loop();
    test_closed_loop();
    curl_global_cleanup();
    if (failures != 0) {
        fprintf(stderr, "cc_test: %d check(s) failed\n", failures);
        return 1;
    }
    printf("cc_test: all checks passed\n");
    return 0;
}
