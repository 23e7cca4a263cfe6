/**
 * cc_worker.h - one worker thread of the C client: a libcurl multi handle driving
 * its share of the connections, its own hb_stats, and the pacing timer.
 *
 * Event-driven: libcurl tells the worker which sockets it waits on
 * (CURLMOPT_SOCKETFUNCTION) and when its next timeout is due (CURLMOPT_TIMERFUNCTION);
 * the worker waits in its own epoll and hands libcurl only the sockets that are ready
 * (curl_multi_socket_action), instead of curl_multi_perform walking every transfer
 * and poll()ing each one on every wake-up.
 *
 * Closed loop: the workers take order numbers from one shared atomic counter, one
 * phase at a time (warm-up, then measured), so a finished connection gets the next
 * order at once. Open loop: order i belongs to connection slot i % C, so each worker
 * paces the orders of its slots at t0 + i/R and sends late when all its connections
 * are busy, never skipping.
 */
#ifndef CC_WORKER_H
#define CC_WORKER_H

#include <curl/curl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "cc_conn.h"
#include "hb_args.h"
#include "hb_stats.h"

/** What all workers share: read-only during a phase, except the order counter. */
typedef struct cc_plan {
    const hb_config *cfg;
    uint64_t total;                /* orders of the whole run (warm-up included); UINT64_MAX: until deadline */
    _Atomic uint64_t next_k;       /* closed loop: next order number to send */
    _Atomic int gate;              /* 0: threads wait; 1: go; -1: abort (a thread could not start) */
    pthread_barrier_t phase;       /* closed loop: workers + main meet after warm-up and to start */
    uint64_t t0_ns;                /* open loop: intended send time of order 0 */
    uint64_t measure_start_ns;     /* start of the measured phase (set by main before the 2nd barrier) */
    uint64_t deadline_ns;          /* --duration, closed loop: no measured order starts after it; 0 = none */
} cc_plan;

typedef struct cc_worker {
    cc_plan *plan;
    CURLM *multi;           /* owns this worker's connections (its connection cache) */
    cc_conn *conns;         /* n_conns connections */
    int n_conns;
    int first_slot;         /* open loop: slots first_slot .. first_slot + n_conns - 1 of C */
    int *free_stack;        /* indices of idle connections */
    int n_free;
    int timer_fd;           /* open loop: wakes the epoll HB_SPIN_NS before the next intended time */
    int epoll_fd;           /* the sockets libcurl waits on, and timer_fd */
    uint8_t *fd_state;      /* per fd: CC_FD_* bits (the epoll registration and whether libcurl wants it) */
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
int cc_worker_init(cc_worker *w, cc_plan *plan, int n_conns, int first_slot);
void cc_worker_close(cc_worker *w);

/** The thread body: runs the whole run (both phases) and returns NULL. */
void *cc_worker_main(void *arg);

#endif
