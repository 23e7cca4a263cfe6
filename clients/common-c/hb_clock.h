/**
 * hb_clock.h - the clocks of a run: CLOCK_MONOTONIC nanoseconds for latencies and
 * pacing, CLOCK_REALTIME for timestamps, and a sleep finer than 50 µs.
 */
#ifndef HB_CLOCK_H
#define HB_CLOCK_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

/** How long before a deadline hb_sleep_until_ns stops sleeping and starts spinning. */
#define HB_SPIN_NS 50000

/** CLOCK_MONOTONIC in nanoseconds. */
uint64_t hb_now_ns(void);

/** CLOCK_REALTIME. */
void hb_wall_now(struct timespec *out);

/**
 * Return at monotonic time deadline_ns (or at once when it has passed):
 * clock_nanosleep to HB_SPIN_NS before it, then spin, since a timer alone wakes
 * tens of µs late. Calls hb_clock_tight_timers() once per thread.
 */
void hb_sleep_until_ns(uint64_t deadline_ns);

/**
 * Set the calling thread's timer slack to 1 ns (Linux defaults to 50 µs, which makes
 * every sleep and poll timeout wake up to 50 µs late). Call once at the start of a
 * thread that paces. @return 0, or -1 with errno set.
 */
int hb_clock_tight_timers(void);

/** RFC 3339 UTC with microseconds, "2026-11-22T03:00:00.123456Z", into out[cap >= 28]. */
void hb_format_rfc3339(const struct timespec *wall, char *out, size_t cap);

#ifdef __cplusplus
}
#endif
#endif
