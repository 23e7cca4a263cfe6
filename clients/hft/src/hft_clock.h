/**
 * hft_clock.h - the hot-path clock: the CPU's invariant TSC, calibrated against
 * CLOCK_MONOTONIC_RAW at start-up, or CLOCK_MONOTONIC_RAW itself (vDSO, no system
 * call) when the TSC is not invariant. Ticks are only ever subtracted and converted to
 * nanoseconds when recorded, so the hot path reads one counter.
 */
#ifndef HFT_CLOCK_H
#define HFT_CLOCK_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define HFT_HAVE_TSC 1
#else
#define HFT_HAVE_TSC 0
#endif

typedef struct hft_clock {
    bool tsc;               /* true: ticks are TSC cycles; false: CLOCK_MONOTONIC_RAW ns */
    double ns_per_tick;     /* 1.0 for CLOCK_MONOTONIC_RAW */
    double ticks_per_ns;    /* its inverse, for deadlines */
    double tsc_hz;          /* calibrated frequency; 0 without the TSC */
} hft_clock;

/** The process-wide clock, set once by hft_clock_init before any thread starts. */
extern hft_clock hft_clk;

/**
 * Pick and calibrate the clock. want_tsc=false forces CLOCK_MONOTONIC_RAW.
 * Calibration spins ~calib_ms against CLOCK_MONOTONIC_RAW.
 */
void hft_clock_init(bool want_tsc, int calib_ms);

/** True when CPUID says the TSC is invariant (constant rate, runs in every C-state). */
bool hft_tsc_invariant(void);

static inline uint64_t hft_raw_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/** Now, in ticks. */
static inline uint64_t hft_ticks(void) {
#if HFT_HAVE_TSC
    if (hft_clk.tsc) return __rdtsc();
#endif
    return hft_raw_ns();
}

static inline int64_t hft_ticks_to_ns(uint64_t ticks) { return (int64_t)((double)ticks * hft_clk.ns_per_tick); }
static inline uint64_t hft_ns_to_ticks(double ns) { return (uint64_t)(ns * hft_clk.ticks_per_ns); }

#endif
