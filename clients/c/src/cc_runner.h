/**
 * cc_runner.h - one run of the C client: split the connections over a fixed pool of
 * worker threads (<= usable CPUs, <= connections), run warm-up and measured phase, join,
 * merge the per-worker records (hb_stats_merge).
 */
#ifndef CC_RUNNER_H
#define CC_RUNNER_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "hb_args.h"
#include "hb_stats.h"

typedef struct cc_outcome {
    hb_stats merged;            /* every worker's record, added up */
    struct timespec started_at; /* wall clock at the start of the measured phase */
    double duration_s;          /* measured start to the last measured answer */
    bool interrupted;           /* SIGINT stopped it early */
    int workers;                /* threads used */
} cc_outcome;

/** @return 0 (the caller then owns out->merged: hb_stats_close), or -1 with err = "<problem>; <fix>". */
int cc_run(const hb_config *cfg, cc_outcome *out, char *err, size_t errlen);

#endif
