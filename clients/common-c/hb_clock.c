/* hb_clock.c - see hb_clock.h. */
#include "hb_clock.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/prctl.h>

uint64_t hb_now_ns(void)
{
    struct timespec ts;
    (void)clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * UINT64_C(1000000000) + (uint64_t)ts.tv_nsec;
}

void hb_wall_now(struct timespec *out) { (void)clock_gettime(CLOCK_REALTIME, out); }

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

int hb_clock_tight_timers(void) { return prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL); }

void hb_sleep_until_ns(uint64_t deadline_ns)
{
    static _Thread_local bool tight;
    if (!tight) {
        tight = true;
        (void)hb_clock_tight_timers();
    }
    if (deadline_ns > HB_SPIN_NS && hb_now_ns() + HB_SPIN_NS < deadline_ns) {
        uint64_t wake = deadline_ns - HB_SPIN_NS;
        struct timespec ts = {.tv_sec = (time_t)(wake / 1000000000u), .tv_nsec = (long)(wake % 1000000000u)};
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
        }
    }
    while (hb_now_ns() < deadline_ns) {
        cpu_relax();
    }
}

void hb_format_rfc3339(const struct timespec *wall, char *out, size_t cap)
{
    struct tm tm;
    char date[24];
    (void)gmtime_r(&wall->tv_sec, &tm);
    (void)strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%S", &tm);
    (void)snprintf(out, cap, "%s.%06ldZ", date, wall->tv_nsec / 1000);
}
