/* Unit tests of hft-linkem's pure parts: the link model (delay bounds, order, loss rate,
 * determinism) and the delay line (FIFO through many wraps, full, contents). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lk_model.h"
#include "lk_ring.h"

static int failures;
#define CHECK(cond)                                                                  \
    do {                                                                             \
        if (!(cond)) {                                                               \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
            failures++;                                                              \
        }                                                                            \
    } while (0)

static void test_model_rejects_bad_parameters(void) {
    lk_model m;
    CHECK(lk_model_init(&m, 1000, 2000, 0, 1) == -1); /* jitter > delay */
    CHECK(lk_model_init(&m, -1, 0, 0, 1) == -1);
    CHECK(lk_model_init(&m, 1000, 0, 1.5, 1) == -1);
    CHECK(lk_model_init(&m, 1000, 0, -0.1, 1) == -1);
    CHECK(lk_model_init(&m, 0, 0, 0, 0) == 0 && m.rng != 0);
}

static void test_model_fixed_delay(void) {
    lk_model m;
    lk_model_init(&m, 25000, 0, 0, 1);
    for (int64_t t = 0; t < 1000000; t += 1000) CHECK(lk_model_release(&m, t) == t + 25000);
}

/* Jitter stays within +-J, spreads over the whole range, and never reorders. */
static void test_model_jitter_bounds_and_order(void) {
    lk_model m;
    lk_model_init(&m, 250000, 50000, 0, 7);
    int64_t prev = INT64_MIN, lo = INT64_MAX, hi = INT64_MIN;
    int below_mean = 0;
    const int n = 100000;
    for (int i = 0; i < n; i++) {
        int64_t arrival = (int64_t)i * 1000000; /* 1 ms apart: the order rule never binds */
        int64_t r = lk_model_release(&m, arrival);
        int64_t d = r - arrival;
        CHECK(d >= 200000 && d <= 300000);
        CHECK(r >= prev);
        prev = r;
        if (d < lo) lo = d;
        if (d > hi) hi = d;
        below_mean += d < 250000;
    }
    CHECK(lo < 201000 && hi > 299000);
    CHECK(below_mean > n * 0.48 && below_mean < n * 0.52);
    /* Back to back arrivals: a frame never leaves before the one ahead of it. */
    prev = INT64_MIN;
    for (int i = 0; i < 1000; i++) {
        int64_t r = lk_model_release(&m, 1000000000000LL + i);
        CHECK(r >= prev && r >= 1000000000000LL + i + 200000);
        prev = r;
    }
}

static void test_model_loss_rate(void) {
    lk_model m;
    lk_model_init(&m, 0, 0, 0.01, 3);
    int lost = 0;
    const int n = 1000000;
    for (int i = 0; i < n; i++) lost += lk_model_release(&m, i) == LK_DROP;
    CHECK(lost > 9500 && lost < 10500); /* 1 %: 10,000 +- 5 sigma */
    lk_model_init(&m, 0, 0, 0, 3);
    for (int i = 0; i < n; i++) CHECK(lk_model_release(&m, i) != LK_DROP);
    lk_model_init(&m, 0, 0, 1.0, 3);
    CHECK(lk_model_release(&m, 0) == LK_DROP);
}

static void test_model_is_deterministic(void) {
    lk_model a, b;
    lk_model_init(&a, 100000, 30000, 0.1, 42);
    lk_model_init(&b, 100000, 30000, 0.1, 42);
    for (int i = 0; i < 10000; i++) CHECK(lk_model_release(&a, (int64_t)i * 5000) == lk_model_release(&b, (int64_t)i * 5000));
}

/* Frames of varying sizes through a small ring, many times around: FIFO, intact. */
static void test_ring_fifo_through_wraps(void) {
    lk_ring r;
    CHECK(lk_ring_init(&r, 4096) == 0);
    unsigned char frame[700];
    uint32_t pushed = 0, popped = 0;
    for (int round = 0; round < 5000; round++) {
        uint32_t len = 40 + (uint32_t)(round * 37) % 600;
        memset(frame, (int)(pushed & 0xff), len);
        if (lk_ring_push(&r, frame, len, pushed, pushed + 1) == 0) {
            pushed++;
        }
        if (round % 3 == 2 || r.count >= 4) { /* drain sometimes, so the ring fills and empties */
            const lk_frame *f = lk_ring_peek(&r);
            CHECK(f != NULL);
            if (f) {
                CHECK(f->arrival_ns == popped && f->release_ns == popped + 1);
                CHECK(f->data[0] == (popped & 0xff) && f->data[f->len - 1] == (popped & 0xff));
                lk_ring_pop(&r);
                popped++;
            }
        }
    }
    while (lk_ring_peek(&r)) {
        CHECK(lk_ring_peek(&r)->arrival_ns == popped);
        lk_ring_pop(&r);
        popped++;
    }
    CHECK(pushed == popped && pushed > 3000 && r.count == 0);
    lk_ring_close(&r);
}

static void test_ring_full_and_too_large(void) {
    lk_ring r;
    lk_ring_init(&r, 1024);
    unsigned char frame[2000] = {0};
    CHECK(lk_ring_push(&r, frame, 2000, 0, 0) == -1); /* never fits */
    int n = 0;
    while (lk_ring_push(&r, frame, 100, n, n) == 0) n++;
    CHECK(n == 1024 / (24 + 104) && r.count == (size_t)n);
    lk_ring_pop(&r); /* one slot at the start frees up: the next push wraps into it */
    CHECK(lk_ring_push(&r, frame, 100, 99, 99) == 0);
    CHECK(lk_ring_push(&r, frame, 100, 100, 100) == -1);
    for (int i = 1; i < n; i++) {
        CHECK(lk_ring_peek(&r)->arrival_ns == i);
        lk_ring_pop(&r);
    }
    CHECK(lk_ring_peek(&r)->arrival_ns == 99);
    lk_ring_pop(&r);
    CHECK(lk_ring_peek(&r) == NULL);
    lk_ring_close(&r);
}

int main(void) {
    test_model_rejects_bad_parameters();
    test_model_fixed_delay();
    test_model_jitter_bounds_and_order();
    test_model_loss_rate();
    test_model_is_deterministic();
    test_ring_fifo_through_wraps();
    test_ring_full_and_too_large();
    if (failures) {
        fprintf(stderr, "test_linkem: %d checks failed\n", failures);
        return 1;
    }
    printf("test_linkem: all checks passed\n");
    return 0;
}
