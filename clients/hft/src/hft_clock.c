/* hft_clock.c - TSC calibration (see hft_clock.h). */
#include "hft_clock.h"

#if HFT_HAVE_TSC
#include <cpuid.h>
#endif

hft_clock hft_clk = {false, 1.0, 1.0, 0.0};

bool hft_tsc_invariant(void) {
#if HFT_HAVE_TSC
    unsigned a, b, c, d;
    if (__get_cpuid_max(0x80000000u, NULL) < 0x80000007u) return false;
    __cpuid(0x80000007u, a, b, c, d);
    return (d >> 8) & 1u; /* "Invariant TSC" */
#else
    return false;
#endif
}

void hft_clock_init(bool want_tsc, int calib_ms) {
    hft_clk = (hft_clock){false, 1.0, 1.0, 0.0};
#if HFT_HAVE_TSC
    if (!want_tsc || !hft_tsc_invariant()) return;
    /* Bracket each TSC read between two clock reads and keep the tightest pair, so a
     * preemption during calibration (this machine is shared) cannot skew the rate. */
    uint64_t best_gap = UINT64_MAX, t0 = 0, c0 = 0;
    for (int i = 0; i < 16; i++) {
        uint64_t a = hft_raw_ns(), c = __rdtsc(), b = hft_raw_ns();
        if (b - a < best_gap) { best_gap = b - a; t0 = a + (b - a) / 2; c0 = c; }
    }
    uint64_t until = t0 + (uint64_t)calib_ms * 1000000u;
    while (hft_raw_ns() < until) { }
    best_gap = UINT64_MAX;
    uint64_t t1 = 0, c1 = 0;
    for (int i = 0; i < 16; i++) {
        uint64_t a = hft_raw_ns(), c = __rdtsc(), b = hft_raw_ns();
        if (b - a < best_gap) { best_gap = b - a; t1 = a + (b - a) / 2; c1 = c; }
    }
    if (c1 <= c0 || t1 <= t0) return;
    double hz = (double)(c1 - c0) * 1e9 / (double)(t1 - t0);
    hft_clk.tsc = true;
    hft_clk.tsc_hz = hz;
    hft_clk.ns_per_tick = 1e9 / hz;
    hft_clk.ticks_per_ns = hz / 1e9;
#else
    (void)want_tsc;
    (void)calib_ms;
#endif
}
