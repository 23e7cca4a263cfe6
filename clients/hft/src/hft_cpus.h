/**
 * hft_cpus.h - the --cpus list ("0-3,6") and the default: every CPU this process may
 * run on, highest first (CPU 0 takes most interrupts and housekeeping, so it is used last).
 */
#ifndef HFT_CPUS_H
#define HFT_CPUS_H

#include <stddef.h>

#define HFT_MAX_CPUS 1024

typedef struct hft_cpus {
    int cpu[HFT_MAX_CPUS]; /* in the order threads are pinned: thread t gets cpu[t % n] */
    int n;
} hft_cpus;

/**
 * Parse "0-3,6" (ranges and single CPUs, no duplicates, each < HFT_MAX_CPUS).
 * @return 0, or -1 with err = "<problem>; <fix>".
 */
int hft_cpus_parse(const char *text, hft_cpus *out, char *err, size_t errlen);

/** The CPUs of this process's affinity mask, highest first. @return 0, or -1. */
int hft_cpus_default(hft_cpus *out);

/** CPUs this process may run on (its affinity mask); the CPUs online if that cannot be read. */
int hft_cpus_allowed(void);

/** "1,0" into buf. */
void hft_cpus_format(const hft_cpus *c, char *buf, size_t cap);

#endif
