/* hb_bench_sleep.c - how late hb_sleep_until_ns wakes (the open loop's pacing), against a
 * plain clock_nanosleep to the same deadline. Prints percentiles in µs; asserts nothing
 * (a benchmark: the figures depend on the machine's load). */
#include <stdio.h>
#include <time.h>

#include "hb_clock.h"
#include "hb_stats.h"

#define SAMPLES 2000
#define PERIOD_NS 200000u /* 5,000 sends/s, the open-5k scenario's per-worker pace order */

static void report(const char *name, struct hdr_histogram *h)
{
    (void)printf("%-22s p50 %7.2f  p99 %7.2f  p99.9 %8.2f  max %8.2f µs late\n", name,
                 (double)hdr_value_at_percentile(h, 50) / 1e3, (double)hdr_value_at_percentile(h, 99) / 1e3,
                 (double)hdr_value_at_percentile(h, 99.9) / 1e3, (double)hdr_max(h) / 1e3);
}

int main(void)
{
    hb_stats spin;
    hb_stats plain;
    if (hb_stats_init(&spin, false) != 0 || hb_stats_init(&plain, false) != 0) {
        return 1;
    }
    /* First the plain timer with the default 50 µs timer slack; hb_sleep_until_ns then tightens it. */
    uint64_t due = hb_now_ns() + PERIOD_NS;
    for (int i = 0; i < SAMPLES; i++, due += PERIOD_NS) {
        struct timespec ts = {.tv_sec = (time_t)(due / 1000000000u), .tv_nsec = (long)(due % 1000000000u)};
        (void)clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
        hb_stats_record_ok(&plain, (int64_t)(hb_now_ns() - due), 0);
    }
    due = hb_now_ns() + PERIOD_NS;
    for (int i = 0; i < SAMPLES; i++, due += PERIOD_NS) {
        hb_sleep_until_ns(due);
        hb_stats_record_ok(&spin, (int64_t)(hb_now_ns() - due), 0);
    }
    report("clock_nanosleep alone", plain.latency);
    report("hb_sleep_until_ns", spin.latency);
    hb_stats_close(&spin);
    hb_stats_close(&plain);
    return 0;
}
