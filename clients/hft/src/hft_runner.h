/**
 * hft_runner.h - the run: one pinned worker thread per CPU used, each owning its
 * connections and busy-polling them; per-worker hb_stats merged after join.
 *
 * Closed loop: warm-up, a barrier, then the measured phase; order indices come from a
 * shared counter in chunks, so a worker touches it once per HFT_CHUNK orders.
 * Open loop: connection c of C sends orders c, c+C, ... at t0 + i / rate (warm-up
 * included); latency from the intended time and, separately, from the actual send; the
 * send lateness (actual - intended send) of each measured order into its own histogram.
 * An open-loop duet (hft_run_sides) runs the same schedule over two servers.
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

/** The sides of a run: a normal run has side a only; an open-loop duet (hft_duet.h) has both. */
enum { HFT_SIDE_A, HFT_SIDE_B, HFT_SIDES };

/** The duet's seeds are --seed mixed with this ("duet frs"), so they differ from the order stream's. */
#define HFT_DUET_SEED_MIX UINT64_C(0x6475657420667273)

/**
 * An open-loop duet's side of order i (HFT_SIDE_A or HFT_SIDE_B): orders 2k and 2k+1 are a
 * pair, one to each side; which side takes the pair's first order is the top bit of output
 * number k of a splitmix64 seeded with seed ^ HFT_DUET_SEED_MIX (hft_pair_rng's stream),
 * computed from (seed, k) alone, so whichever worker sends order i draws the same side.
 * In pairs, not per order: a host stall delays the orders due in it, and drawn per order
 * their split between the sides is binomial, which moved the load series' P99 ratio by
 * tens of percent per round; in pairs each side gets half of every stretch of the schedule
 * to within one order.
 */
static inline int hft_order_side(uint64_t seed, uint64_t i) {
    uint64_t z = (seed ^ HFT_DUET_SEED_MIX) + (i / 2 + 1) * UINT64_C(0x9E3779B97F4A7C15);
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return (int)((z ^ (z >> 31)) >> 63) ^ (int)(i & 1);
}

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

/**
 * hft_run over sides servers: 1 is hft_run; 2 is the open-loop duet (cfg[HFT_SIDE_B] is
 * --duet-url's config, every flag but the URL and output shared; open loop only, else -1).
 * Each of the C connection slots of the schedule holds one connection to each side; order i
 * goes to side hft_order_side(seed, i) (orders in pairs, one to each side) on slot i % C's
 * connection of that side, which sends its own orders at their intended times, late never
 * skipped. Each side records into
 * out[side] (both with the run's started_at and duration_s); with --interval-s, side a's
 * collector (opt->interval_hlog) also closes side b's intervals (hlog_b) at the same tick.
 */
int hft_run_sides(const hb_config *const cfg[], int sides, const hft_options *opt, FILE *hlog_b, hft_outcome out[],
                  char *err, size_t errlen);

/** Free out->merged. */
void hft_outcome_close(hft_outcome *out);

#endif
