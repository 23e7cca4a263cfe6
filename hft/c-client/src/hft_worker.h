/**
 * hft_worker.h - inside the engine (not for other modules): the run's shared state and
 * one worker's loops. hft_engine.c starts the workers and moves them through the phases;
 * hft_worker.c is what each worker does in a phase: send, poll, record.
 */
#ifndef HFT_WORKER_H
#define HFT_WORKER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "hb_interval.h"
#include "hb_order.h"
#include "hb_stats.h"
#include "hft_conn.h"
#include "hft_engine.h"
#include "hft_tune.h"

typedef struct engine engine;

/* One per thread, on its own cache lines: workers write their counters without sharing. */
typedef struct worker {
    _Alignas(HFT_CACHE_LINE) engine *e; /* the run it belongs to */
    int id;                 /* 0..nw-1; its connections are id, id+nw, ... of the run's */
    int cpu;                /* where it is pinned */
    int n;                  /* connections owned */
    hft_conn *conns;        /* n of them, in mem */
    void *mem;              /* the huge-page (or 4 KiB) mapping that holds conns */
    size_t mapped;          /* its length, for munmap */
    int ep;                 /* epoll fd when polling more than one connection, or sleeping; else -1 */
    hb_stats stats;         /* its own histograms and counters, merged after join */
    hft_tuning tuning;      /* what its thread got (affinity, rt, numa, hugepages) */
    hb_ts_cache ts;         /* the client_timestamp text of the current second */
    uint64_t lo, hi;        /* closed loop: the chunk of order indices in hand */
    uint64_t last_done;     /* ticks: last measured completion */
    char err[HB_ERR_LEN];   /* setup failure, "" when fine */
    pthread_t th;           /* for pthread_join */
} worker;

/* The atomics sit on their own cache lines: the padding is the point. */
struct engine { // NOLINT(clang-analyzer-optin.performance.Padding)
    const hb_config *cfg;    /* the common flags */
    const hft_options *opt;  /* the HFT flags */
    int nw;                  /* workers */
    worker *w;               /* nw of them, cache-line aligned */
    _Alignas(HFT_CACHE_LINE) atomic_uint_fast64_t next; /* closed loop: next unassigned order */
    _Alignas(HFT_CACHE_LINE) atomic_int arrived;        /* barrier: threads there so far */
    atomic_int gen;                                     /* barrier: bumped on each release */
    atomic_bool abort;                                  /* set-up failed: every worker returns */
    char abort_err[HB_ERR_LEN];                         /* why, for the one stderr line */
    bool busy;               /* spin (true) or sleep in epoll */
    uint64_t timeout_ticks;
    uint64_t phase_hi;       /* closed loop: orders below this belong to the current phase */
    uint64_t deadline;       /* ticks: --duration end; UINT64_MAX without */
    bool record;             /* the current phase is measured */
    uint64_t t0;             /* open loop: ticks of order 0's intended send */
    double ticks_per_order;  /* open loop: ticks between intended sends, over all connections */
    uint64_t total;          /* warmup + orders; UINT64_MAX with --duration */
    uint64_t measure_start;  /* ticks */
    struct timespec measure_wall; /* wall clock at measure_start: the result's started_at */
    hb_interval_log intervals;    /* --interval-s: the collector writing the .hlog per interval */
    hb_interval_recorder **recorders; /* --interval-s: each worker's, handed to the collector */
};

/** Pin, tune, allocate and connect the worker's connections; w->err says what failed. */
void hft_worker_setup(worker *w);

/** Closed loop: send orders from the shared counter until the phase ends, then drain. */
void hft_worker_run_closed_phase(worker *w);

/** Open loop: send on schedule until the last order (or --duration), then drain. */
void hft_worker_run_open(worker *w);

#endif
