/* cc_worker.c - see cc_worker.h. The hot path: fill idle connections, let libcurl
 * send and read, record what finished, wait for sockets (or the pacing timer). */
#include "cc_worker.h"

#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "hb_clock.h"
#include "hb_schedule.h"
#include "hb_signal.h"

/* Longest sleep in poll: how often an idle worker re-checks SIGINT and the deadline. */
#define POLL_MS 100

int cc_worker_init(cc_worker *w, cc_plan *plan, int n_conns, int first_slot)
{
    memset(w, 0, sizeof(*w));
    w->plan = plan;
    w->timer_fd = -1;
    w->first_slot = first_slot;
    w->next_i = (uint64_t)first_slot;
    hb_ts_cache_init(&w->ts);
    bool open_loop = hb_config_open_loop(plan->cfg);
    if (hb_stats_init(&w->stats, open_loop) != 0) {
        return -1;
    }
    w->conns = calloc((size_t)n_conns, sizeof(*w->conns));
    w->free_stack = calloc((size_t)n_conns, sizeof(*w->free_stack));
    w->multi = curl_multi_init();
    if (w->conns == NULL || w->free_stack == NULL || w->multi == NULL) {
        return -1;
    }
    /* Keep every connection of this worker alive in its cache between orders. */
    (void)curl_multi_setopt(w->multi, CURLMOPT_MAXCONNECTS, (long)n_conns);
    w->n_conns = n_conns; /* calloc'd: cc_conn_close is safe on the ones not yet made */
    for (int i = n_conns - 1; i >= 0; i--) {
        if (cc_conn_init(&w->conns[i], plan->cfg) != 0) {
            return -1;
        }
        w->free_stack[w->n_free++] = i;
    }
    if (open_loop) {
        w->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
        if (w->timer_fd < 0) {
            return -1;
        }
    }
    return 0;
}

void cc_worker_close(cc_worker *w)
{
    if (w->multi != NULL) {
        curl_multi_cleanup(w->multi); /* closes the cached connections */
    }
    for (int i = 0; w->conns != NULL && i < w->n_conns; i++) {
        cc_conn_close(&w->conns[i]);
    }
    free(w->conns);
    free(w->free_stack);
    if (w->timer_fd >= 0) {
        (void)close(w->timer_fd);
    }
    hb_stats_close(&w->stats);
    memset(w, 0, sizeof(*w));
    w->timer_fd = -1;
}

static void start(cc_worker *w, uint64_t k, uint64_t intended_ns)
{
    cc_conn *c = &w->conns[w->free_stack[--w->n_free]];
    cc_conn_prepare(c, w->plan->cfg, &w->ts, k, intended_ns);
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
        if (c->measured) {
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

/* Let libcurl send what was added and read what arrived; record the finished. */
static int pump(cc_worker *w)
{
    int running = 0;
    (void)curl_multi_perform(w->multi, &running);
    return collect(w);
}

static bool idle(const cc_worker *w) { return w->n_free == w->n_conns; }

/* Closed loop: orders k < end_k from the shared counter until it runs out (or the deadline). */
static void run_closed_phase(cc_worker *w, uint64_t end_k, uint64_t deadline_ns)
{
    bool more = true;
    for (;;) {
        while (more && w->n_free > 0) {
            if (hb_signal_stop_requested() || (deadline_ns != 0 && hb_now_ns() >= deadline_ns)) {
                more = false;
                break;
            }
            uint64_t k = atomic_fetch_add_explicit(&w->plan->next_k, 1, memory_order_relaxed);
            if (k >= end_k) {
                more = false;
                break;
            }
            start(w, k, 0);
        }
        if (pump(w) > 0) {
            continue; /* refill the connections that just finished */
        }
        if (!more && idle(w)) {
            return;
        }
        (void)curl_multi_poll(w->multi, NULL, 0, POLL_MS, NULL);
    }
}

static uint64_t intended_ns(const cc_plan *p, uint64_t i) { return hb_schedule_intended_ns(p->t0_ns, i, p->cfg->rate); }

static uint64_t next_order(const cc_worker *w, uint64_t i)
{
    return hb_schedule_next(i, (uint64_t)w->plan->cfg->connections, (uint64_t)w->first_slot, (uint64_t)w->n_conns);
}

/* Sleep in poll until HB_SPIN_NS before due (timerfd: ns precision), answers still read. */
static void wait_until(cc_worker *w, uint64_t due)
{
    uint64_t now = hb_now_ns();
    if (due <= now + HB_SPIN_NS) {
        while (hb_now_ns() < due) { /* the last 50 µs: spin, reading answers meanwhile */
            (void)pump(w);
        }
        return;
    }
    uint64_t wake = due - HB_SPIN_NS;
    struct itimerspec its;
    memset(&its, 0, sizeof(its));
    its.it_value.tv_sec = (time_t)(wake / 1000000000u);
    its.it_value.tv_nsec = (long)(wake % 1000000000u);
    (void)timerfd_settime(w->timer_fd, TFD_TIMER_ABSTIME, &its, NULL);
    struct curl_waitfd tfd = {.fd = w->timer_fd, .events = CURL_WAIT_POLLIN, .revents = 0};
    (void)curl_multi_poll(w->multi, &tfd, 1, POLL_MS, NULL);
    if (tfd.revents != 0) {
        uint64_t expirations = 0;
        (void)!read(w->timer_fd, &expirations, sizeof(expirations));
    }
}

/* Open loop: each of this worker's orders at its intended time, late when no connection is idle. */
static void run_open(cc_worker *w)
{
    cc_plan *p = w->plan;
    for (;;) {
        bool more = w->next_i < p->total && !hb_signal_stop_requested();
        uint64_t now = hb_now_ns();
        while (more && w->n_free > 0 && intended_ns(p, w->next_i) <= now) {
            start(w, w->next_i, intended_ns(p, w->next_i));
            w->next_i = next_order(w, w->next_i);
            more = w->next_i < p->total;
        }
        if (pump(w) > 0) {
            continue;
        }
        if (!more && idle(w)) {
            return;
        }
        if (more && w->n_free > 0) {
            wait_until(w, intended_ns(p, w->next_i));
        } else {
            (void)curl_multi_poll(w->multi, NULL, 0, POLL_MS, NULL);
        }
    }
}

/* Wait for the go (1) or abort (-1) of the main thread. */
static bool wait_gate(const cc_plan *p)
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
    cc_plan *p = w->plan;
    (void)hb_clock_tight_timers(); /* poll timeouts and sleeps without the 50 µs slack */
    if (!wait_gate(p)) {
        return NULL;
    }
    if (hb_config_open_loop(p->cfg)) {
        run_open(w);
        return NULL;
    }
    run_closed_phase(w, p->cfg->warmup, 0);
    (void)pthread_barrier_wait(&p->phase); /* warm-up done everywhere */
    (void)pthread_barrier_wait(&p->phase); /* main has set the measured start */
    run_closed_phase(w, p->total, p->deadline_ns);
    return NULL;
}
