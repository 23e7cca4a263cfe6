/**
 * hft_runner.h - the run: one pinned worker thread per CPU used, each owning its
 * connections and busy-polling them; per-worker hb_stats merged after join.
 *
 * Closed loop: warm-up, a barrier, then the measured phase; order indices come from a
 * shared counter in chunks, so a worker touches it once per HFT_CHUNK orders.
 * Open loop: connection c of C sends orders c, c+C, ... at t0 + i / rate (warm-up
 * included); latency from the intended time and, separately, from the actual send.
 */
#ifndef HFT_RUNNER_H
#define HFT_RUNNER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "hb_args.h"
#include "hb_stats.h"
#include "hft_cpus.h"
#include "hft_tune.h"

#define HFT_CHUNK 64

/** How workers wait for their sockets. */
typedef enum hft_poll {
    HFT_POLL_AUTO,  /* busy-poll when the workers leave a CPU free, else sleep (the default) */
    HFT_POLL_BUSY,  /* --busy-poll: spin, never sleep */
    HFT_POLL_SLEEP, /* --no-busy-poll: sleep in epoll between events */
} hft_poll;

/**
 * AUTO's rule: spin only when workers < the CPUs this process may run on (its affinity
 * mask: what a `taskset` or hftbench's --client-cpus leaves it). A client spinning on every
 * CPU starves a server on the same machine (here: 67K vs 117K orders/s at 50 connections);
 * confined to the one CPU it shares with the server, a spinning worker stretched P99 by up
 * to 2x in some runs.
 */
static inline bool hft_busy_poll_resolve(hft_poll mode, int workers, int cpus_allowed) {
    return mode == HFT_POLL_AUTO ? workers < cpus_allowed : mode == HFT_POLL_BUSY;
}

/** The HFT client's own flags. */
typedef struct hft_options {
    hft_cpus cpus;     /* --cpus: thread t is pinned to cpus.cpu[t] */
    int rt_priority;   /* --rt-priority N (SCHED_FIFO); 0 = not asked */
    bool strict;       /* --strict: a tuning not applied is exit 2 */
    hft_poll poll;     /* --busy-poll / --no-busy-poll / neither (auto) */
    bool mlockall;     /* lock memory (on; the floor and the tests too) */
    double interval_s; /* --interval-s: one .hlog line per interval of this length; 0 = one for the run */
    FILE *interval_hlog; /* where those lines go: the .hlog beside --output (set by hft_app_run) */
    char hlog_prefix[96]; /* the .hlog header's comment (set by hft_app_run) */
} hft_options;

/** Everything a finished run hands to the result writer. */
typedef struct hft_outcome {
    hb_stats merged;              /* every worker's record */
    hft_tuning tuning;            /* what was applied, merged over the workers */
    int workers;                  /* threads used */
    bool busy_poll;               /* how they waited: spinning (true) or in epoll */
    struct timespec started_at;   /* wall clock at the start of the measured phase */
    double duration_s;            /* wall time of the measured phase */
    bool interrupted;             /* SIGINT/SIGTERM stopped it */
    bool intervals_logged;        /* --interval-s: the .hlog is written (header + intervals) */
    int intervals_rc;             /* the first error writing it (errno / HdrHistogram code), 0 when fine */
} hft_outcome;

/**
 * Run the load cfg describes with opt. Setup failures (cannot connect, --strict and a
 * tuning refused, out of memory) return -1 with err = "<problem>; <fix>" before any
 * order is sent; afterwards every failure is counted in out->merged.
 */
int hft_run(const hb_config *cfg, const hft_options *opt, hft_outcome *out, char *err, size_t errlen);

/** Free out->merged. */
void hft_outcome_close(hft_outcome *out);

#endif
