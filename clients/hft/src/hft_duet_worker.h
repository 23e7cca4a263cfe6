/**
 * hft_duet_worker.h - inside hft_duet (not for other modules): the duet's one worker
 * thread. It pins and tunes itself, connects every lane (--connections) to both sides, sends
 * the warm-up pairs, then the measured ones; on each lane each order runs to completion before
 * the next (closed loop, one in flight per lane), recording each side into out[side].merged. See hft_duet.h for what is paired and what is
 * random.
 */
#ifndef HFT_DUET_WORKER_H
#define HFT_DUET_WORKER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "hb_args.h"
#include "hft_runner.h"

/**
 * Run the duet: cfg[HFT_SIDE_A] (--url, --output) and cfg[HFT_SIDE_B] (--duet-url,
 * --duet-output) share every other flag; opt->interval_hlog is side a's .hlog, hlog_b side
 * b's. Setup failures (cannot connect, --strict and a tuning refused, out of memory) return
 * -1 with err = "<problem>; <fix>" before any order is sent; afterwards every failure is
 * counted in its side's out[].merged. *pairs = the measured pairs sent.
 * @return 0 (close both out[] with hft_outcome_close), or -1 with nothing to close.
 */
int hft_duet_run(const hb_config *const cfg[HFT_SIDES], const hft_options *opt, FILE *hlog_b,
                 hft_outcome out[HFT_SIDES], uint64_t *pairs, char *err, size_t errlen);

#endif
