/**
 * lk_model.h - the link model of hft-linkem: when a frame that arrived at time t leaves,
 * or whether it is lost. Pure (no clock, no I/O), so the tests drive it with made-up times.
 *
 * One-way delay = delay + uniform jitter in [-jitter, +jitter] (netem's default shape),
 * never reordered: a frame never leaves before the one ahead of it (FIFO, as on a real
 * link), so with jitter a frame right behind a slow one waits a little longer.
 * Loss: each frame independently (Bernoulli), from a seeded xorshift64* stream.
 */
#ifndef LK_MODEL_H
#define LK_MODEL_H

#include <stdint.h>

#define LK_DROP INT64_MIN /* lk_model_release: the frame is lost */

typedef struct lk_model {
    int64_t delay_ns;        /* mean one-way delay */
    int64_t jitter_ns;       /* half-width of the uniform jitter (0 = none) */
    uint64_t loss_threshold; /* a frame is lost when the next random number is below this */
    uint64_t rng;            /* xorshift64* state, never 0 */
    int64_t last_release_ns; /* release time of the previous frame: keeps the order */
} lk_model;

/**
 * Set up one direction. loss_ratio in [0, 1] (0.0001 = 0.01 %); seed any value (0 is mapped
 * to a fixed non-zero state). @return 0, or -1 when an argument is out of range.
 */
int lk_model_init(lk_model *m, int64_t delay_ns, int64_t jitter_ns, double loss_ratio, uint64_t seed);

/** The next number of the model's xorshift64* stream. */
uint64_t lk_model_next(lk_model *m);

/** When the frame that arrived at arrival_ns may leave, or LK_DROP when it is lost. */
int64_t lk_model_release(lk_model *m, int64_t arrival_ns);

#endif
