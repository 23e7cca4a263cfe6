/**
 * hft_worker.h - inside the runner (not for other modules): the run's shared state
 * (hft_phase) and one worker's loop. hft_runner.c starts the workers and moves them
 * through the phases; hft_worker.c is what each worker does in a phase: take tickets,
 * send, poll, record.
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
#include "hft_runner.h"
#include "hft_tune.h"

typedef struct hft_phase hft_phase;

/* One per thread, on its own cache lines: workers write their counters without sharing. */
typedef struct hft_worker {
    _Alignas(HFT_CACHE_LINE) hft_phase *phase; /* the run it belongs to */
    int id;                 /* 0..nw-1; its connections are id, id+nw, ... of the run's */
    int cpu;                /* where it is pinned */
    int n;                  /* connection slots owned (per side) */
    hft_conn *conns;        /* n per side, in mem: conns[side * n + j] is slot j's connection to side */
    void *mem;              /* the huge-page (or 4 KiB) mapping that holds conns */
    size_t mapped;          /* its length, for munmap */
    int ep;                 /* epoll fd when polling more than one connection, or sleeping; else -1 */
    hb_stats stats[HFT_SIDES]; /* [side]: its own histograms and counters, merged after join; [B] in a duet only */
    hft_tuning tuning;      /* what its thread got (affinity, rt, numa, hugepages) */
    hb_ts_cache ts;         /* the client_timestamp text of the current second */
    uint64_t lo, hi;        /* closed loop: the chunk of order indices in hand */
    bool tickets_out;       /* closed loop: the counter is past the phase's end (or the deadline) */
    uint64_t last_done;     /* ticks: last measured completion */
    char err[HB_ERR_LEN];   /* setup failure, "" when fine */
    pthread_t th;           /* for pthread_join */
} hft_worker;

/*
 * What the workers share. Closed loop: the leader moves it from warm-up to the measured
 * phase at the barrier. Open loop: one phase (warm-up orders are sent, not recorded).
 * The atomics sit on their own cache lines: the padding is the point.
 */
struct hft_phase { // NOLINT(clang-analyzer-optin.performance.Padding)
    const hb_config *cfg;    /* the common flags (side a's) */
    const hb_config *side_cfg[HFT_SIDES]; /* [side]: its --url; [B] only in an open-loop duet */
    int sides;               /* 1, or 2 in an open-loop duet (hft_run_sides) */
    const hft_options *opt;  /* the HFT flags */
    bool open_loop;          /* tickets from the schedule (else from the shared counter) */
    int nw;                  /* workers */
    hft_worker *w;           /* nw of them, cache-line aligned */
    _Alignas(HFT_CACHE_LINE) atomic_uint_fast64_t next; /* closed loop: next unassigned order */
    _Alignas(HFT_CACHE_LINE) atomic_int arrived;        /* barrier: threads there so far */
    atomic_int gen;                                     /* barrier: bumped on each release */
    atomic_bool abort;                                  /* set-up failed: every worker returns */
    char abort_err[HB_ERR_LEN];                         /* why, for the one stderr line */
    bool busy;               /* spin (true) or sleep in epoll */
    uint64_t timeout_ticks;
    uint64_t phase_hi;       /* closed loop: orders below this belong to the current phase */
    uint64_t deadline;       /* ticks: --duration end; UINT64_MAX without */
    uint64_t t0;             /* open loop: ticks of order 0's intended send */
    double ticks_per_order;  /* open loop: ticks between intended sends, over all connections */
    uint64_t total;          /* warmup + orders; UINT64_MAX with --duration */
    uint64_t measure_start;  /* ticks */
    struct timespec measure_wall; /* wall clock at measure_start: the result's started_at */
    hb_interval_log intervals[HFT_SIDES]; /* --interval-s: [A] the collector, [B] its peer (a duet's) */
    hb_interval_recorder **recorders[HFT_SIDES]; /* --interval-s: [side] each worker's, handed to the log */
};

/** Pin, tune, allocate and connect the worker's connections; w->err says what failed. */
void hft_worker_setup(hft_worker *w);

/** What the ticket source says about a connection's next order. */
typedef enum hft_ticket_state { HFT_TICKET_DUE, HFT_TICKET_LATER, HFT_TICKET_END } hft_ticket_state;

/**
 * Start the worker's tickets of a phase: closed loop, no chunk in hand; open loop, each
 * connection's first order (in a duet: the first of its slot's orders drawn to its side).
 */
void hft_worker_reset_tickets(hft_worker *w);

/**
 * Connection c's next ticket: order *k, due at *due (ticks; 0 in closed loop: the send is
 * the intended time). Closed loop: the shared counter below phase_hi, before the deadline,
 * due at once; END stays END for the phase. Open loop: connection c of C sends orders c,
 * c+C, ..., DUE once t0 + i / rate is now or past (late, never skipped), else LATER with
 * *due its time; END at total or the deadline. In an open-loop duet the connection to side
 * s of slot c sends only those of c, c+C, ... with hft_order_side(seed, i) == s. now is
 * read only in open loop.
 */
hft_ticket_state hft_worker_take_ticket(hft_worker *w, hft_conn *c, uint64_t now, uint64_t *k, uint64_t *due);

/**
 * Which of an open-loop duet slot's two connections (its side a's and side b's) is fed first:
 * the one whose next order is due first, so after a stall the due orders go out in the
 * schedule's order and neither side's server is woken first every time.
 */
static inline int hft_slot_first(const hft_conn *a, const hft_conn *b) {
    return b->next_i < a->next_i ? HFT_SIDE_B : HFT_SIDE_A;
}

/**
 * One phase: send the phase's orders as their tickets come due (closed loop: the shared
 * counter until the phase's end or --duration; open loop: on schedule until the last
 * order or --duration), then drain.
 */
void hft_worker_run(hft_worker *w);

#endif
