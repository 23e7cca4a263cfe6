/* lk_model.c - see lk_model.h. */
#include "lk_model.h"

#include <math.h>

int lk_model_init(lk_model *m, int64_t delay_ns, int64_t jitter_ns, double loss_ratio, uint64_t seed) {
    if (delay_ns < 0 || jitter_ns < 0 || jitter_ns > delay_ns || !(loss_ratio >= 0.0 && loss_ratio <= 1.0)) return -1;
    m->delay_ns = delay_ns;
    m->jitter_ns = jitter_ns;
    m->loss_threshold = loss_ratio >= 1.0 ? UINT64_MAX : (uint64_t)ldexp(loss_ratio, 64);
    m->rng = seed ? seed : 0x9E3779B97F4A7C15ull;
    m->last_release_ns = INT64_MIN;
    return 0;
}

uint64_t lk_model_next(lk_model *m) {
    uint64_t x = m->rng;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    m->rng = x;
    return x * 0x2545F4914F6CDD1Dull;
}

int64_t lk_model_release(lk_model *m, int64_t arrival_ns) {
    if (m->loss_threshold && lk_model_next(m) < m->loss_threshold) return LK_DROP;
    int64_t delay = m->delay_ns;
    if (m->jitter_ns) delay += (int64_t)(lk_model_next(m) % (uint64_t)(2 * m->jitter_ns + 1)) - m->jitter_ns;
    int64_t release = arrival_ns + delay;
    if (release < m->last_release_ns) release = m->last_release_ns;
    m->last_release_ns = release;
    return release;
}
