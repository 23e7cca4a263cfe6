/**
 * hft_tune.h - the seed's process tunings, each applied when possible and reported in
 * the result's extra.tuning. Every value is a string that starts with one of
 *   "applied"       (optionally ": <detail>")
 *   "unavailable: " why this machine or build cannot (or was not asked to) do it
 *   "refused: "     the error text of the system call that said no
 * A missing capability is a warning on stderr; with --strict it is exit 2.
 */
#ifndef HFT_TUNE_H
#define HFT_TUNE_H

#include <stdbool.h>
#include <stddef.h>

#define HFT_TUNE_LEN 160

/** One entry of extra.tuning. */
typedef struct hft_tune_item {
    const char *key;           /* "mlockall", "affinity", "numa", "rt_priority", "hugepages" */
    char text[HFT_TUNE_LEN];   /* "applied", "unavailable: ...", "refused: ..." */
} hft_tune_item;

enum { HFT_T_MLOCKALL, HFT_T_AFFINITY, HFT_T_NUMA, HFT_T_RT, HFT_T_HUGEPAGES, HFT_T_COUNT };

typedef struct hft_tuning {
    hft_tune_item item[HFT_T_COUNT];
} hft_tuning;

void hft_tuning_init(hft_tuning *t);

/** Process-wide, before the threads: mlockall(MCL_CURRENT | MCL_FUTURE). */
void hft_tune_mlockall(hft_tuning *t);

/**
 * Per worker thread, on the thread itself: pin to cpu, SCHED_FIFO rt_priority (0 = not
 * asked), NUMA-local allocation. Writes into the thread's own t (merged later).
 */
void hft_tune_thread(hft_tuning *t, int cpu, int rt_priority);

/**
 * Memory for a worker's connections: 2 MiB pages (MAP_HUGETLB) when reserved, else
 * normal pages with a THP hint; pre-faulted. Records which into t. NULL on failure.
 */
void *hft_mem_alloc(size_t size, size_t *mapped, hft_tuning *t);
void hft_mem_free(void *p, size_t mapped);

/** Merge a worker's items into the run's: the first non-"applied" wins; a bare "applied" takes the detail. */
void hft_tuning_merge(hft_tuning *into, const hft_tuning *from);

/** True when every item is applied or was not asked for ("unavailable: not requested"). */
bool hft_tuning_all_applied(const hft_tuning *t, char *first_bad, size_t cap);

/** The JSON object {"mlockall": "...", ...} into buf. */
void hft_tuning_json(const hft_tuning *t, char *buf, size_t cap);

/** One "warning: tuning KEY: TEXT" line on stderr per item that is not applied. */
void hft_tuning_warn(const hft_tuning *t, const char *prog);

#endif
