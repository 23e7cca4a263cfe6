/* Unit tests of the schedule: the workers' ticket source (closed loop, open loop, the
 * open-loop duet), the closed-loop duet's pair order, the open-loop duet's side per order and
 * the order its slots are fed in. Run by `make test` (sanitized build). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hft_duet.h"
#include "hft_runner.h"
#include "hft_worker.h"
#include "tests/hb_check.h"

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

int main(void) {
    test_tickets_open_loop();
    test_tickets_duet();
    test_tickets_closed_loop();
    test_pair_order();
    test_order_side();
    test_slot_first();
    if (failures) {
        fprintf(stderr, "test_schedule: %d check(s) failed\n", failures);
        return 1;
    }
    printf("test_schedule: all checks passed\n");
    return 0;
}
