/**
 * cc_worker.h - one worker thread of the C client: a libcurl multi handle driving
 * its share of the connections, its own hb_stats, and the pacing timer.
 *
 * Event-driven: the worker waits in its own epoll for the sockets libcurl waits on
 * (cc_events.h).
 *
 * One loop over a ticket source (as clients/rust/src/worker.rs): a ticket is an order
 * number k and its intended send time. Closed loop: the workers take k from one shared
 * atomic counter, one phase at a time (warm-up, then measured), so a finished connection
 * gets the next order at once; intended = the send. Open loop: order i belongs to
 * connection slot i % C, so each worker's tickets are the orders of its slots, due at
 * t0 + i/R; it sends late when all its connections are busy, never skipping.
 */
#ifndef CC_WORKER_H
#define CC_WORKER_H

#include <curl/curl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "cc_conn.h"
#include "hb_args.h"
#include "hb_stats.h"

/**
 * What all workers share in a phase: read-only while it runs, except the order counter.
 * Closed loop: main moves it from warm-up to the measured phase between two barriers.
 * Open loop: one phase (warm-up orders are sent, not recorded).
 */
typedef struct cc_phase {
    const hb_config *cfg;
    bool open_loop;                /* tickets from the schedule (else from next_k) */
    uint64_t total;                /* orders of the whole run (warm-up included); UINT64_MAX: until deadline */
    _Atomic uint64_t next_k;       /* closed loop: next order number to send */
    uint64_t end_k;                /* closed loop: the phase's orders are k < end_k */
    uint64_t deadline_ns;          /* closed loop: no order starts at or after it (--duration); 0 = none */
    _Atomic int gate;              /* 0: threads wait; 1: go; -1: abort (a thread could not start) */
    pthread_barrier_t barrier;     /* closed loop: workers + main meet after warm-up and to start */
    uint64_t t0_ns;                /* open loop: intended send time of order 0 */
    uint64_t measure_start_ns;     /* start of the measured phase (set by main before the 2nd barrier) */
} cc_phase;

typedef struct cc_worker {
    cc_phase *phase;
    CURLM *multi;           /* owns this worker's connections (its connection cache) */
    cc_conn *conns;         /* n_conns connections */
    int n_conns;
    int first_slot;         /* open loop: slots first_slot .. first_slot + n_conns - 1 of C */
    int *free_stack;        /* indices of idle connections */
    int n_free;
    int timer_fd;           /* open loop: wakes the epoll HB_SPIN_NS before the next intended time */
    int epoll_fd;           /* the sockets libcurl waits on, and timer_fd */
    uint8_t *fd_state;      /* per fd: CC_FD_* bits of cc_events.c (the epoll registration and whether libcurl wants it) */
    int fd_cap;             /* entries in fd_state */
    uint64_t curl_due_ns;   /* when libcurl's next timeout is due (socket_action(TIMEOUT)); 0: none, 1: now */
    uint64_t timeout_ns;    /* --timeout-ms: an order in flight longer is abandoned as a timeout */
    uint64_t next_sweep_ns; /* when sweep_timeouts next looks at the orders in flight */
    uint64_t next_i;        /* open loop: this worker's next order number */
    hb_ts_cache ts;         /* per-thread client_timestamp cache */
    hb_stats stats;         /* measured orders only */
    uint64_t last_done_ns;  /* completion of its last measured order, for duration_s */
    pthread_t thread;
} cc_worker;

/** Allocate the worker's connections and handles. @return 0, or -1. */
int cc_worker_init(cc_worker *w, cc_phase *phase, int n_conns, int first_slot);
void cc_worker_close(cc_worker *w);

/** What the ticket source says about the worker's next order. */
typedef enum cc_ticket_state { CC_TICKET_DUE, CC_TICKET_LATER, CC_TICKET_END } cc_ticket_state;

/**
 * The worker's next ticket: order *k, due at *intended (0 in closed loop: the send is the
 * intended time). Closed loop: the next number of the shared counter below end_k, before
 * the deadline. Open loop: the next order of this worker's slots, DUE once its time is
 * now or past (late sends are never skipped), else LATER with *intended its due time;
 * END after the run's last order.
 */
cc_ticket_state cc_worker_take_ticket(cc_worker *w, uint64_t now, uint64_t *k, uint64_t *intended);

/** The thread body: runs the whole run (both phases) and returns NULL. */
void *cc_worker_main(void *arg);

#endif
