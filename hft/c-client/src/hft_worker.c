/* hft_worker.c - one worker's phase: send, poll, record (see hft_worker.h). */
#include "hft_worker.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>

#include "hb_clock.h"
#include "hb_signal.h"
#include "hft_clock.h"

#define MAX_EVENTS 64
#define SPIN_MARGIN_NS 50000.0 /* --no-busy-poll sleeps until this long before a send */

static void finish(worker *w, hft_conn *c, hft_step s, uint64_t now) {
    if (!c->measured) return;
    if (s == HFT_STEP_DONE) {
        int kind = hb_error_kind_of_status(c->status);
        if (kind < 0)
            hb_stats_record_ok(&w->stats, hft_ticks_to_ns(now - c->t_intended), hft_ticks_to_ns(now - c->t_start));
        else
            hb_stats_record_error(&w->stats, (hb_error_kind)kind);
    } else {
        hb_stats_record_error(&w->stats, c->fail);
    }
    w->last_done = now;
}

static int watch(worker *w, hft_conn *c) {
    if (w->ep < 0) return 0;
    struct epoll_event ev = {.events = EPOLLIN, .data.u32 = (uint32_t)(c - w->conns)};
    return epoll_ctl(w->ep, EPOLL_CTL_ADD, c->fd, &ev);
}

/* Send order k on c (reconnecting first if needed). Returns false when it failed at once. */
static bool start(worker *w, hft_conn *c, uint64_t k, uint64_t intended, bool measured) {
    engine *e = w->e;
    c->measured = measured;
    c->t_intended = intended;
    if (c->state == HFT_DOWN &&
        (hft_conn_connect(c, &e->cfg->url.addr, e->cfg->timeout_ms) != 0 || watch(w, c) != 0)) {
        hft_conn_close(c);
        c->fail = HB_ERR_CONNECT;
        c->t_start = hft_ticks();
        finish(w, c, HFT_STEP_FAILED, c->t_start);
        return false;
    }
    c->t_start = hft_ticks();
    if (intended == 0) c->t_intended = c->t_start;
    hft_step s = hft_conn_send(c, e->cfg->seed, k, &w->ts);
    if (s == HFT_STEP_FAILED) {
        finish(w, c, s, hft_ticks());
        return false;
    }
    return true;
}

static bool in_flight(const hft_conn *c) { return c->state == HFT_SENDING || c->state == HFT_RECEIVING; }

/* Advance one in-flight connection; true when its order ended. */
static bool progress(worker *w, hft_conn *c) {
    hft_step s = c->state == HFT_SENDING ? hft_conn_write_more(c) : HFT_STEP_PENDING;
    if (s == HFT_STEP_PENDING && c->state == HFT_RECEIVING) s = hft_conn_read(c);
    uint64_t now = hft_ticks();
    if (s == HFT_STEP_PENDING && now - c->t_start > w->e->timeout_ticks) {
        hft_conn_close(c); /* the late answer must not be read as the next one's */
        c->fail = HB_ERR_TIMEOUT;
        s = HFT_STEP_FAILED;
    }
    if (s == HFT_STEP_PENDING) return false;
    finish(w, c, s, now);
    return true;
}

/* Wait for (busy-poll: look at) the connections in flight; advance the ready ones. */
static void poll_conns(worker *w, double sleep_ns, unsigned iter) {
    if (w->ep < 0) { /* one connection, busy-polling: just read it */
        if (in_flight(&w->conns[0])) progress(w, &w->conns[0]);
        return;
    }
    struct epoll_event ev[MAX_EVENTS];
    struct timespec ts = {.tv_sec = (time_t)(sleep_ns / 1e9), .tv_nsec = (long)((uint64_t)sleep_ns % 1000000000u)};
    int n = epoll_pwait2(w->ep, ev, MAX_EVENTS, &ts, NULL);
    for (int i = 0; i < n; i++) {
        hft_conn *c = &w->conns[ev[i].data.u32];
        if (in_flight(c)) progress(w, c);
    }
    /* Partial writes and timeouts: look at every connection now and then. */
    if (n <= 0 || (iter & 255u) == 0)
        for (int j = 0; j < w->n; j++)
            if (in_flight(&w->conns[j])) progress(w, &w->conns[j]);
}

/* ---- closed loop ---- */

static bool next_order(worker *w, uint64_t *k) {
    engine *e = w->e;
    if (hb_signal_stop_requested() || (e->deadline != UINT64_MAX && hft_ticks() >= e->deadline)) return false;
    if (w->lo >= w->hi) {
        uint64_t lo = atomic_fetch_add(&e->next, HFT_CHUNK);
        if (lo >= e->phase_hi) return false;
        w->lo = lo;
        w->hi = lo + HFT_CHUNK < e->phase_hi ? lo + HFT_CHUNK : e->phase_hi;
    }
    *k = w->lo++;
    return true;
}

void hft_worker_run_closed_phase(worker *w) {
    engine *e = w->e;
    bool more = true;
    w->lo = w->hi = 0;
    double sleep_ns = e->busy ? 0.0 : 1e6;
    for (unsigned iter = 0;; iter++) {
        int busy = 0;
        for (int j = 0; j < w->n; j++) {
            hft_conn *c = &w->conns[j];
            uint64_t k;
            while (more && !in_flight(c)) {
                if (!(more = next_order(w, &k))) break;
                start(w, c, k, 0, e->record);
            }
            busy += in_flight(c);
        }
        if (!busy && !more) return;
        poll_conns(w, sleep_ns, iter);
    }
}

/* ---- open loop ---- */

void hft_worker_run_open(worker *w) {
    engine *e = w->e;
    uint64_t warm = e->cfg->warmup, conns = (uint64_t)e->cfg->connections;
    uint64_t end = e->deadline; /* no intended send at or after this (with --duration) */
    for (int j = 0; j < w->n; j++) w->conns[j].next_i = (uint64_t)w->id + (uint64_t)j * (uint64_t)e->nw;
    for (unsigned iter = 0;; iter++) {
        int busy = 0, pending = 0;
        uint64_t now = hft_ticks(), soonest = UINT64_MAX;
        bool stop = hb_signal_stop_requested();
        for (int j = 0; j < w->n; j++) {
            hft_conn *c = &w->conns[j];
            if (!in_flight(c) && !stop && c->next_i < e->total) {
                uint64_t due = e->t0 + (uint64_t)((double)c->next_i * e->ticks_per_order);
                if (due < end) {
                    pending++;
                    if (due <= now) { /* late or on time: a busy connection sends late, never skips */
                        uint64_t i = c->next_i;
                        c->next_i += conns;
                        start(w, c, i, due, i >= warm);
                    } else if (due < soonest) {
                        soonest = due;
                    }
                }
            }
            busy += in_flight(c);
        }
        if (!busy && !pending) return;
        double sleep_ns = 0.0;
        if (!e->busy && soonest != UINT64_MAX) {
            sleep_ns = (double)(soonest - now) * hft_clk.ns_per_tick - SPIN_MARGIN_NS;
            if (sleep_ns < 0) sleep_ns = 0;
            if (sleep_ns > 1e6) sleep_ns = 1e6;
        } else if (!e->busy && busy) {
            sleep_ns = 1e6;
        }
        poll_conns(w, sleep_ns, iter);
    }
}

/* ---- a worker's life ---- */

void hft_worker_setup(worker *w) {
    engine *e = w->e;
    hft_tuning_init(&w->tuning);
    hft_tune_thread(&w->tuning, w->cpu, e->opt->rt_priority);
    hb_ts_cache_init(&w->ts);
    /* Sleeps in epoll_pwait2 end 50 µs before a send; the default 50 µs timer slack would eat that. */
    (void)prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
    w->ep = -1;
    w->mem = hft_mem_alloc(sizeof(hft_conn) * (size_t)w->n, &w->mapped, &w->tuning);
    if (w->mem == NULL || hb_stats_init(&w->stats, hb_config_open_loop(e->cfg)) != 0 ||
        (e->opt->interval_s > 0 && hb_stats_enable_intervals(&w->stats) != 0)) {
        snprintf(w->err, sizeof w->err, "out of memory for %d connections; pass fewer --connections", w->n);
        return;
    }
    w->conns = w->mem;
    if (w->n > 1 || !e->busy) {
        if ((w->ep = epoll_create1(EPOLL_CLOEXEC)) < 0) {
            snprintf(w->err, sizeof w->err, "epoll_create1: %s; raise the open-files limit (ulimit -n)", strerror(errno));
            return;
        }
    }
    for (int j = 0; j < w->n; j++) {
        hft_conn *c = &w->conns[j];
        if (hft_conn_init(c, e->cfg->url.order_path, e->cfg->url.hostport) != 0) {
            snprintf(w->err, sizeof w->err, "--url path too long (%.200s); pass a shorter --url", e->cfg->url_text);
            return;
        }
        if (hft_conn_connect(c, &e->cfg->url.addr, e->cfg->timeout_ms) != 0 || watch(w, c) != 0) {
            snprintf(w->err, sizeof w->err, "cannot connect to %s (%s); start bin/hft-server or pass --url",
                     e->cfg->url.hostport, strerror(errno));
            return;
        }
    }
}

/* Leader, at the first barrier: check setups, lock memory, start the clock. */
