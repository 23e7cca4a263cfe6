/* cc_worker.c - see cc_worker.h. The hot path: fill idle connections, let libcurl
 * send them, wait in epoll for ready sockets (or the pacing timer), hand those to
 * libcurl, record what finished. */
#include "cc_worker.h"

#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "cc_events.h"
#include "hb_clock.h"
#include "hb_schedule.h"
#include "hb_signal.h"

/* Longest sleep in epoll_wait: how often an idle worker re-checks SIGINT and the deadline. */
#define POLL_MS 100
/* The timeout sweep runs every timeout/SWEEP_DIV (at least every SWEEP_MIN_NS): an order times
 * out between 1 and 1 + 1/SWEEP_DIV timeouts after it was sent. */
#define SWEEP_DIV 16u
#define SWEEP_MIN_NS 1000000u

int cc_worker_init(cc_worker *w, cc_phase *phase, int n_conns, int first_slot)
{
    memset(w, 0, sizeof(*w));
    w->phase = phase;
    w->timer_fd = -1;
    w->epoll_fd = -1;
    w->first_slot = first_slot;
    w->next_i = (uint64_t)first_slot;
    w->timeout_ns = (uint64_t)phase->cfg->timeout_ms * 1000000u;
    hb_ts_cache_init(&w->ts);
    bool open_loop = phase->open_loop;
    if (hb_stats_init(&w->stats, open_loop) != 0) {
        return -1;
    }
    w->conns = calloc((size_t)n_conns, sizeof(*w->conns));
    w->free_stack = calloc((size_t)n_conns, sizeof(*w->free_stack));
    w->multi = curl_multi_init();
    w->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    if (w->conns == NULL || w->free_stack == NULL || w->multi == NULL || w->epoll_fd < 0) {
        return -1;
    }
    /* Keep every connection of this worker alive in its cache between orders. */
    int bad = curl_multi_setopt(w->multi, CURLMOPT_MAXCONNECTS, (long)n_conns) != CURLM_OK;
    bad |= cc_events_attach(w) != 0;
    w->n_conns = n_conns; /* calloc'd: cc_conn_close is safe on the ones not yet made */
    for (int i = n_conns - 1; i >= 0 && !bad; i--) {
        CURL *e = NULL;
        bad |= cc_conn_init(&w->conns[i], phase->cfg) != 0;
        e = w->conns[i].easy;
        bad |= e == NULL || cc_events_attach_conn(w, e) != 0;
        w->free_stack[w->n_free++] = i;
    }
    if (bad) {
        return -1;
    }
    if (open_loop) {
        w->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
        struct epoll_event e = {.events = EPOLLIN, .data.fd = w->timer_fd};
        if (w->timer_fd < 0 || epoll_ctl(w->epoll_fd, EPOLL_CTL_ADD, w->timer_fd, &e) != 0) {
            return -1;
        }
    }
    return 0;
}

void cc_worker_close(cc_worker *w)
{
    if (w->multi != NULL) {
        curl_multi_cleanup(w->multi); /* closes the cached connections (through cc_events' close-socket callback) */
    }
    for (int i = 0; w->conns != NULL && i < w->n_conns; i++) {
        cc_conn_close(&w->conns[i]);
    }
    free(w->conns);
    free(w->free_stack);
    free(w->fd_state);
    if (w->timer_fd >= 0) {
        (void)close(w->timer_fd);
    }
    if (w->epoll_fd >= 0) {
        (void)close(w->epoll_fd);
    }
    hb_stats_close(&w->stats);
    memset(w, 0, sizeof(*w));
    w->timer_fd = -1;
    w->epoll_fd = -1;
}

static void start(cc_worker *w, uint64_t k, uint64_t intended_ns, uint64_t now_ns)
{
    cc_conn *c = &w->conns[w->free_stack[--w->n_free]];
    cc_conn_prepare(c, w->phase->cfg, &w->ts, k, intended_ns, now_ns);
    (void)curl_multi_add_handle(w->multi, c->easy);
}

/* Record every finished transfer and return its connection to the idle stack. */
static int collect(cc_worker *w)
{
    int done = 0;
    int left = 0;
    CURLMsg *m = NULL;
    while ((m = curl_multi_info_read(w->multi, &left)) != NULL) {
        if (m->msg != CURLMSG_DONE) {
            continue;
        }
        uint64_t now = hb_now_ns();
        CURL *easy = m->easy_handle;
        CURLcode result = m->data.result; /* m is invalid after remove_handle */
        cc_conn *c = NULL;
        (void)curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&c);
        (void)curl_multi_remove_handle(w->multi, easy);
        c->in_flight = false;
        if (c->measured) {
            /* send lateness, once per measured order whatever its answer (a no-op in closed loop) */
            hb_stats_record_lateness(&w->stats, (int64_t)(c->sent_ns - c->intended_ns));
            int kind = cc_conn_outcome(c, result);
            if (kind < 0) {
                hb_stats_record_ok(&w->stats, (int64_t)(now - c->intended_ns), (int64_t)(now - c->sent_ns));
            } else {
                hb_stats_record_error(&w->stats, (hb_error_kind)kind);
            }
            w->last_done_ns = now;
        }
        w->free_stack[w->n_free++] = (int)(c - w->conns);
        done++;
    }
    return done;
}

/* The per-order timeout (instead of CURLOPT_TIMEOUT_MS): every sweep period, abandon the orders
 * in flight for timeout_ns or more. Removing an unfinished transfer makes libcurl close its
 * connection, as its own timeout did; the next order on that handle connects anew. */
static uint64_t sweep_period_ns(const cc_worker *w)
{
    uint64_t period = w->timeout_ns / SWEEP_DIV;
    return period > SWEEP_MIN_NS ? period : SWEEP_MIN_NS;
}

static void sweep_timeouts(cc_worker *w)
{
    uint64_t now = hb_now_ns();
    if (now < w->next_sweep_ns) {
        return;
    }
    w->next_sweep_ns = now + sweep_period_ns(w);
    for (int i = 0; i < w->n_conns; i++) {
        cc_conn *c = &w->conns[i];
        if (!c->in_flight || now - c->sent_ns < w->timeout_ns) {
            continue;
        }
        (void)curl_multi_remove_handle(w->multi, c->easy);
        c->in_flight = false;
        if (c->measured) {
            hb_stats_record_lateness(&w->stats, (int64_t)(c->sent_ns - c->intended_ns));
            hb_stats_record_error(&w->stats, HB_ERR_TIMEOUT);
            w->last_done_ns = now;
        }
        w->free_stack[w->n_free++] = i;
    }
}

/* Wait up to timeout_ms for ready sockets or the pacing timer (cc_events_wait); while orders
 * are in flight, no longer than the next timeout sweep. */
static void wait_events(cc_worker *w, int timeout_ms)
{
    if (w->n_free < w->n_conns) {
        int sweep_ms = (int)((sweep_period_ns(w) + 999999u) / 1000000u);
        timeout_ms = sweep_ms < timeout_ms ? sweep_ms : timeout_ms;
    }
    cc_events_wait(w, timeout_ms);
}

static bool idle(const cc_worker *w) { return w->n_free == w->n_conns; }

static uint64_t intended_ns(const cc_phase *p, uint64_t i) { return hb_schedule_intended_ns(p->t0_ns, i, p->cfg->rate); }

/* Sleep in epoll until HB_SPIN_NS before due (timerfd: ns precision), answers still read. */
static void wait_until(cc_worker *w, uint64_t due)
{
    uint64_t now = hb_now_ns();
    if (due <= now + HB_SPIN_NS) {
        while (hb_now_ns() < due) { /* the last 50 µs: spin, reading and recording answers meanwhile */
            wait_events(w, 0);
            (void)collect(w);
        }
        return;
    }
    uint64_t wake = due - HB_SPIN_NS;
    struct itimerspec its;
    memset(&its, 0, sizeof(its));
    its.it_value.tv_sec = (time_t)(wake / 1000000000u);
    its.it_value.tv_nsec = (long)(wake % 1000000000u);
    (void)timerfd_settime(w->timer_fd, TFD_TIMER_ABSTIME, &its, NULL);
    wait_events(w, POLL_MS);
}

/* See cc_worker_take_ticket; static so that run_phase inlines it. */
static cc_ticket_state take_ticket(cc_worker *w, uint64_t now, uint64_t *k, uint64_t *intended)
{
    cc_phase *p = w->phase;
    if (hb_signal_stop_requested()) {
        return CC_TICKET_END;
    }
    if (p->open_loop) {
        if (w->next_i >= p->total) {
            return CC_TICKET_END;
        }
        *k = w->next_i;
        *intended = intended_ns(p, w->next_i);
        if (*intended > now) {
            return CC_TICKET_LATER;
        }
        w->next_i = hb_schedule_next(w->next_i, (uint64_t)p->cfg->connections, (uint64_t)w->first_slot,
                                     (uint64_t)w->n_conns);
        return CC_TICKET_DUE;
    }
    if (p->deadline_ns != 0 && now >= p->deadline_ns) {
        return CC_TICKET_END;
    }
    *k = atomic_fetch_add_explicit(&p->next_k, 1, memory_order_relaxed);
    *intended = 0;
    return *k < p->end_k ? CC_TICKET_DUE : CC_TICKET_END;
}

cc_ticket_state cc_worker_take_ticket(cc_worker *w, uint64_t now, uint64_t *k, uint64_t *intended)
{
    return take_ticket(w, now, k, intended);
}

/* One phase: start every due ticket on an idle connection, let libcurl send them, wait for
 * answers (or, open loop, for the next due time), record what finished; until the tickets
 * end and every order in flight is answered or timed out. */
static void run_phase(cc_worker *w)
{
    bool more = true;
    for (;;) {
        sweep_timeouts(w);
        /* one clock read per refill round: the due and deadline checks and the send time of
         * the round's orders (all are sent together by cc_events_run_due right after) */
        uint64_t now = more && w->n_free > 0 ? hb_now_ns() : 0;
        uint64_t next_due = 0;
        while (more && w->n_free > 0) {
            uint64_t k = 0;
            uint64_t intended = 0;
            cc_ticket_state t = take_ticket(w, now, &k, &intended);
            if (t == CC_TICKET_DUE) {
                start(w, k, intended, now);
                continue;
            }
            more = t == CC_TICKET_LATER;
            next_due = intended;
            break;
        }
        cc_events_run_due(w); /* sends what was just added */
        if (collect(w) > 0) {
            continue; /* refill the connections that just finished */
        }
        if (!more && idle(w)) {
            return;
        }
        if (next_due != 0) {
            wait_until(w, next_due);
        } else {
            wait_events(w, POLL_MS);
        }
        (void)collect(w);
    }
}

/* Wait for the go (1) or abort (-1) of the main thread. */
static bool wait_gate(const cc_phase *p)
{
    int g = 0;
    while ((g = atomic_load_explicit(&p->gate, memory_order_acquire)) == 0) {
        hb_sleep_until_ns(hb_now_ns() + 200000);
    }
    return g > 0;
}

void *cc_worker_main(void *arg)
{
    cc_worker *w = arg;
    cc_phase *p = w->phase;
    (void)hb_clock_tight_timers(); /* poll timeouts and sleeps without the 50 µs slack */
    if (!wait_gate(p)) {
        return NULL;
    }
    run_phase(w); /* open loop: the whole run; closed loop: warm-up */
    if (p->open_loop) {
        return NULL;
    }
    (void)pthread_barrier_wait(&p->barrier); /* warm-up done everywhere */
    (void)pthread_barrier_wait(&p->barrier); /* main has set up the measured phase */
    run_phase(w);
    return NULL;
}
