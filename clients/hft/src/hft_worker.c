/* hft_worker.c - one worker's phase: take tickets, send, poll, record (see hft_worker.h). */
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

static void finish(hft_worker *w, hft_conn *c, hft_step s, uint64_t now) {
    if (!c->measured) return;
    hb_stats *st = &w->stats[c->side];
    if (w->phase->open_loop) /* the send lateness, whatever the answer; t_start is never before t_intended */
        hb_stats_record_lateness(st, c->t_start > c->t_intended ? hft_ticks_to_ns(c->t_start - c->t_intended) : 0);
    if (s == HFT_STEP_DONE) {
        int kind = hb_error_kind_of_status(c->status);
        if (kind < 0)
            hb_stats_record_ok(st, hft_ticks_to_ns(now - c->t_intended), hft_ticks_to_ns(now - c->t_start));
        else
            hb_stats_record_error(st, (hb_error_kind)kind);
    } else {
        hb_stats_record_error(st, c->fail);
    }
    w->last_done = now;
}

static int watch(hft_worker *w, hft_conn *c) {
    if (w->ep < 0) return 0;
    struct epoll_event ev = {.events = EPOLLIN, .data.u32 = (uint32_t)(c - w->conns)};
    return epoll_ctl(w->ep, EPOLL_CTL_ADD, c->fd, &ev);
}

/* Send order k on c (reconnecting first if needed). Returns false when it failed at once. */
static bool start(hft_worker *w, hft_conn *c, uint64_t k, uint64_t intended, bool measured) {
    hft_phase *p = w->phase;
    c->measured = measured;
    c->t_intended = intended;
    if (c->state == HFT_DOWN &&
        (hft_conn_connect(c, &p->side_cfg[c->side]->url.addr, p->cfg->timeout_ms) != 0 || watch(w, c) != 0)) {
        hft_conn_close(c);
        c->fail = HB_ERR_CONNECT;
        c->t_start = hft_ticks();
        finish(w, c, HFT_STEP_FAILED, c->t_start);
        return false;
    }
    c->t_start = hft_ticks();
    if (intended == 0) c->t_intended = c->t_start;
    hft_step s = hft_conn_send(c, p->cfg->seed, k, &w->ts);
    if (s == HFT_STEP_FAILED) {
        finish(w, c, s, hft_ticks());
        return false;
    }
    return true;
}

static bool in_flight(const hft_conn *c) { return c->state == HFT_SENDING || c->state == HFT_RECEIVING; }

/* Advance one in-flight connection; true when its order ended. */
static bool progress(hft_worker *w, hft_conn *c) {
    hft_step s = c->state == HFT_SENDING ? hft_conn_write_more(c) : HFT_STEP_PENDING;
    if (s == HFT_STEP_PENDING && c->state == HFT_RECEIVING) s = hft_conn_read(c);
    uint64_t now = hft_ticks();
    if (s == HFT_STEP_PENDING && now - c->t_start > w->phase->timeout_ticks) {
        hft_conn_close(c); /* the late answer must not be read as the next one's */
        c->fail = HB_ERR_TIMEOUT;
        s = HFT_STEP_FAILED;
    }
    if (s == HFT_STEP_PENDING) return false;
    finish(w, c, s, now);
    return true;
}

/* Wait for (busy-poll: look at) the connections in flight; advance the ready ones. */
static void poll_conns(hft_worker *w, double sleep_ns, unsigned iter) {
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
        for (int j = 0; j < w->n * w->phase->sides; j++)
            if (in_flight(&w->conns[j])) progress(w, &w->conns[j]);
}

/* ---- the ticket source ---- */

/* Closed loop: the next number of the shared counter, taken HFT_CHUNK at a time. */
static bool take_counted(hft_worker *w, uint64_t *k) {
    hft_phase *p = w->phase;
    if (p->deadline != UINT64_MAX && hft_ticks() >= p->deadline) return false;
    if (w->lo >= w->hi) {
        uint64_t lo = atomic_fetch_add(&p->next, HFT_CHUNK);
        if (lo >= p->phase_hi) return false;
        w->lo = lo;
        w->hi = lo + HFT_CHUNK < p->phase_hi ? lo + HFT_CHUNK : p->phase_hi;
    }
    *k = w->lo++;
    return true;
}

/* Open loop: c->next_i to the first of its slot's orders from there on that is its own
 * (a duet: drawn to its side; a normal run: every one). */
static void skip_to_own(const hft_phase *p, hft_conn *c) {
    if (p->sides < 2) return;
    while (c->next_i < p->total && hft_order_side(p->cfg->seed, c->next_i) != c->side)
        c->next_i += (uint64_t)p->cfg->connections;
}

/* See hft_worker_take_ticket; static so that the loop below inlines it. */
static hft_ticket_state take_ticket(hft_worker *w, hft_conn *c, uint64_t now, uint64_t *k, uint64_t *due) {
    hft_phase *p = w->phase;
    if (w->tickets_out || hb_signal_stop_requested()) return HFT_TICKET_END;
    if (!p->open_loop) {
        *due = 0;
        if (take_counted(w, k)) return HFT_TICKET_DUE;
        w->tickets_out = true; /* no second look at the shared counter this phase */
        return HFT_TICKET_END;
    }
    if (c->next_i >= p->total) return HFT_TICKET_END;
    *due = p->t0 + (uint64_t)((double)c->next_i * p->ticks_per_order);
    if (*due >= p->deadline) return HFT_TICKET_END; /* --duration: no intended send at or after it */
    if (*due > now) return HFT_TICKET_LATER;
    *k = c->next_i;
    c->next_i += (uint64_t)p->cfg->connections;
    skip_to_own(p, c);
    return HFT_TICKET_DUE;
}

hft_ticket_state hft_worker_take_ticket(hft_worker *w, hft_conn *c, uint64_t now, uint64_t *k, uint64_t *due) {
    return take_ticket(w, c, now, k, due);
}

void hft_worker_reset_tickets(hft_worker *w) {
    hft_phase *p = w->phase;
    w->lo = w->hi = 0;
    w->tickets_out = false;
    if (!p->open_loop) return;
    for (int j = 0; j < w->n * p->sides; j++) { /* worker id owns slots id, id+nw, ... of the run's */
        w->conns[j].next_i = (uint64_t)w->id + (uint64_t)(j % w->n) * (uint64_t)p->nw;
        skip_to_own(p, &w->conns[j]);
    }
}

/* ---- the loop ---- */

/* Send what is due on c, one order in flight a connection (an order that fails at once frees
 * c for the next ticket); count c's pending ticket, its order in flight and the soonest due. */
static inline void feed(hft_worker *w, hft_conn *c, uint64_t now, uint64_t warm, int *busy, int *pending,
                        uint64_t *soonest) {
    while (!in_flight(c)) {
        uint64_t k = 0, due = 0;
        hft_ticket_state t = take_ticket(w, c, now, &k, &due);
        if (t == HFT_TICKET_END) break;
        (*pending)++;
        if (t == HFT_TICKET_LATER) {
            if (due < *soonest) *soonest = due;
            break;
        }
        start(w, c, k, due, k >= warm); /* warm-up orders: k < warmup, in both loops */
    }
    *busy += in_flight(c);
}

void hft_worker_run(hft_worker *w) {
    hft_phase *p = w->phase;
    uint64_t warm = p->cfg->warmup;
    hft_worker_reset_tickets(w);
    for (unsigned iter = 0;; iter++) {
        int busy = 0, pending = 0;
        /* Only the open loop reads the clock here: closed-loop tickets are due at once and
         * start() reads the send time, so a read per round would be one more per order. */
        uint64_t now = p->open_loop ? hft_ticks() : 0, soonest = UINT64_MAX;
        for (int s = 0; s < w->n; s++) {
            hft_conn *first = &w->conns[s];
            if (p->sides > 1) {
                /* A duet's slot holds a connection to each side, fed earlier-due first
                 * (hft_slot_first). Side a first every time woke a's server first after every
                 * stall: side b's load P99 read 40 % above a's, round after round. */
                hft_conn *second = &w->conns[w->n + s];
                if (hft_slot_first(first, second) == HFT_SIDE_B) {
                    hft_conn *t = first;
                    first = second;
                    second = t;
                }
                feed(w, first, now, warm, &busy, &pending, &soonest);
                feed(w, second, now, warm, &busy, &pending, &soonest);
            } else {
                feed(w, first, now, warm, &busy, &pending, &soonest);
            }
        }
        if (!busy && !pending) return;
        double sleep_ns = 0.0;
        if (!p->busy && soonest != UINT64_MAX) { /* sleep until SPIN_MARGIN_NS before the next send */
            sleep_ns = (double)(soonest - now) * hft_clk.ns_per_tick - SPIN_MARGIN_NS;
            if (sleep_ns < 0) sleep_ns = 0;
            if (sleep_ns > 1e6) sleep_ns = 1e6;
        } else if (!p->busy && busy) {
            sleep_ns = 1e6;
        }
        poll_conns(w, sleep_ns, iter);
    }
}

/* ---- a worker's life ---- */

/* Each side's statistics (with an interval recorder under --interval-s). @return 0 or ENOMEM. */
static int stats_init(hft_worker *w) {
    hft_phase *p = w->phase;
    for (int side = 0; side < p->sides; side++)
        if (hb_stats_init(&w->stats[side], p->open_loop) != 0 ||
            (p->opt->interval_s > 0 && hb_stats_enable_intervals(&w->stats[side]) != 0))
            return ENOMEM;
    return 0;
}

void hft_worker_setup(hft_worker *w) {
    static const char *const flag[HFT_SIDES] = {"--url", "--duet-url"};
    hft_phase *p = w->phase;
    int nc = w->n * p->sides;
    hft_tuning_init(&w->tuning);
    hft_tune_thread(&w->tuning, w->cpu, p->opt->rt_priority);
    hb_ts_cache_init(&w->ts);
    /* Sleeps in epoll_pwait2 end 50 µs before a send; the default 50 µs timer slack would eat that. */
    (void)prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
    w->ep = -1;
    w->mem = hft_mem_alloc(sizeof(hft_conn) * (size_t)nc, &w->mapped, &w->tuning);
    if (w->mem == NULL || stats_init(w) != 0) {
        snprintf(w->err, sizeof w->err, "out of memory for %d connections; pass fewer --connections", nc);
        return;
    }
    w->conns = w->mem;
    for (int j = 0; j < nc; j++) { /* every one down (fd -1) before any can fail */
        hft_conn *c = &w->conns[j];
        const hb_config *cfg = p->side_cfg[j / w->n];
        if (hft_conn_init(c, cfg->url.order_path, cfg->url.hostport) != 0) {
            snprintf(w->err, sizeof w->err, "%s path too long (%.200s); pass a shorter %s", flag[j / w->n],
                     cfg->url_text, flag[j / w->n]);
            return;
        }
        c->side = j / w->n;
    }
    if (nc > 1 || !p->busy) {
        if ((w->ep = epoll_create1(EPOLL_CLOEXEC)) < 0) {
            snprintf(w->err, sizeof w->err, "epoll_create1: %s; raise the open-files limit (ulimit -n)", strerror(errno));
            return;
        }
    }
    for (int j = 0; j < nc; j++) {
        hft_conn *c = &w->conns[j];
        const hb_config *cfg = p->side_cfg[c->side];
        if (hft_conn_connect(c, &cfg->url.addr, cfg->timeout_ms) != 0 || watch(w, c) != 0) {
            snprintf(w->err, sizeof w->err, "cannot connect to %s (%s); start bin/hft-server or pass %s",
                     cfg->url.hostport, strerror(errno), flag[c->side]);
            return;
        }
    }
}
