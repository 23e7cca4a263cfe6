/* hft_engine.c - workers, phases and pacing of a run (see hft_engine.h). */
#include "hft_engine.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "hb_clock.h"
#include "hb_order.h"
#include "hb_signal.h"
#include "hft_clock.h"
#include "hft_conn.h"

#define STACK_BYTES ((size_t)256 * 1024) /* small stacks: less to lock with mlockall */
#define MAX_EVENTS 64
#define SPIN_MARGIN_NS 50000.0     /* --no-busy-poll sleeps until this long before a send */

typedef struct engine engine;

typedef struct worker {
    engine *e;
    int id, cpu;
    int n;                  /* connections owned */
    hft_conn *conns;        /* n of them, in mem */
    void *mem;
    size_t mapped;
    int ep;                 /* epoll fd when polling more than one connection, or sleeping */
    hb_stats stats;
    hft_tuning tuning;
    hb_ts_cache ts;
    uint64_t lo, hi;        /* closed loop: the chunk of order indices in hand */
    uint64_t last_done;     /* ticks: last measured completion */
    char err[HB_ERR_LEN];   /* setup failure, "" when fine */
    pthread_t th;
} worker;

/* The atomics sit on their own cache lines: the padding is the point. */
struct engine { // NOLINT(clang-analyzer-optin.performance.Padding)
    const hb_config *cfg;
    const hft_options *opt;
    int nw;
    worker *w;
    _Alignas(HFT_CACHE_LINE) atomic_uint_fast64_t next; /* closed loop: next unassigned order */
    _Alignas(HFT_CACHE_LINE) atomic_int arrived;        /* barrier */
    atomic_int gen;
    atomic_bool abort;
    char abort_err[HB_ERR_LEN];
    bool busy;               /* spin (true) or sleep in epoll */
    uint64_t timeout_ticks;
    uint64_t phase_hi;       /* closed loop: orders below this belong to the current phase */
    uint64_t deadline;       /* ticks: --duration end; UINT64_MAX without */
    bool record;             /* the current phase is measured */
    uint64_t t0;             /* open loop: ticks of order 0's intended send */
    double ticks_per_order;  /* open loop: ticks between intended sends, over all connections */
    uint64_t total;          /* warmup + orders; UINT64_MAX with --duration */
    uint64_t measure_start;  /* ticks */
    struct timespec measure_wall;
};

/* ---- barrier: the last thread to arrive runs the phase change, then releases ---- */

static bool barrier_arrive(engine *e, int *gen) {
    *gen = atomic_load(&e->gen);
    return atomic_fetch_add(&e->arrived, 1) == e->nw - 1;
}

static void barrier_release(engine *e) {
    atomic_store(&e->arrived, 0);
    atomic_fetch_add(&e->gen, 1);
}

static void barrier_wait(engine *e, int gen) {
    for (unsigned spins = 0; atomic_load(&e->gen) == gen; spins++)
        if ((spins & 1023u) == 1023u) sched_yield(); /* not the hot path: be kind to the server */
}

/* ---- one order's end ---- */

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

static void run_closed_phase(worker *w) {
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

static void run_open(worker *w) {
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

static void setup(worker *w) {
    engine *e = w->e;
    hft_tuning_init(&w->tuning);
    hft_tune_thread(&w->tuning, w->cpu, e->opt->rt_priority);
    hb_ts_cache_init(&w->ts);
    /* Sleeps in epoll_pwait2 end 50 µs before a send; the default 50 µs timer slack would eat that. */
    (void)prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
    w->ep = -1;
    w->mem = hft_mem_alloc(sizeof(hft_conn) * (size_t)w->n, &w->mapped, &w->tuning);
    if (w->mem == NULL || hb_stats_init(&w->stats, hb_config_open_loop(e->cfg)) != 0) {
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
static void go(engine *e) {
    hft_tuning merged;
    hft_tuning_init(&merged);
    for (int t = 0; t < e->nw; t++) {
        if (e->w[t].err[0] && !atomic_load(&e->abort)) {
            memcpy(e->abort_err, e->w[t].err, sizeof e->abort_err);
            atomic_store(&e->abort, true);
        }
    }
    for (int i = 0; i < HFT_T_COUNT; i++) snprintf(merged.item[i].text, HFT_TUNE_LEN, "applied");
    for (int t = 0; t < e->nw; t++) hft_tuning_merge(&merged, &e->w[t].tuning);
    if (e->opt->mlockall) hft_tune_mlockall(&merged);
    else snprintf(merged.item[HFT_T_MLOCKALL].text, HFT_TUNE_LEN, "unavailable: not requested");
    e->w[0].tuning = merged; /* the run's view, picked up by hft_run */
    char bad[HB_ERR_LEN];
    if (e->opt->strict && !atomic_load(&e->abort) && !hft_tuning_all_applied(&merged, bad, sizeof bad)) {
        snprintf(e->abort_err, sizeof e->abort_err,
                 "--strict: tuning %.300s; run as root after hft/scripts/setup_hft_system.sh --apply, or drop --strict", bad);
        atomic_store(&e->abort, true);
    }
    if (hb_config_open_loop(e->cfg)) {
        e->ticks_per_order = 1e9 / e->cfg->rate * hft_clk.ticks_per_ns;
        struct timespec wall;
        hb_wall_now(&wall);
        e->t0 = hft_ticks() + hft_ns_to_ticks(100000.0); /* 100 µs: every worker is spinning by then */
        double off = 100e-6 + (double)e->cfg->warmup / e->cfg->rate;
        e->measure_start = e->t0 + (uint64_t)((double)e->cfg->warmup * e->ticks_per_order);
        uint64_t ns = (uint64_t)wall.tv_nsec + (uint64_t)(off * 1e9);
        e->measure_wall.tv_sec = wall.tv_sec + (time_t)(ns / 1000000000u);
        e->measure_wall.tv_nsec = (long)(ns % 1000000000u);
        e->deadline = e->cfg->duration_s > 0 ? e->measure_start + hft_ns_to_ticks(e->cfg->duration_s * 1e9) : UINT64_MAX;
    } else {
        atomic_store(&e->next, 0);
        e->phase_hi = e->cfg->warmup;
        e->record = false;
        e->deadline = UINT64_MAX;
    }
}

/* Leader, between warm-up and the measured phase (closed loop). */
static void measure(engine *e) {
    atomic_store(&e->next, e->cfg->warmup);
    e->phase_hi = e->cfg->duration_s > 0 ? UINT64_MAX : e->cfg->warmup + e->cfg->orders;
    e->record = true;
    hb_wall_now(&e->measure_wall);
    e->measure_start = hft_ticks();
    e->deadline = e->cfg->duration_s > 0 ? e->measure_start + hft_ns_to_ticks(e->cfg->duration_s * 1e9) : UINT64_MAX;
}

static void *worker_main(void *arg) {
    worker *w = arg;
    engine *e = w->e;
    int gen;
    setup(w);
    if (barrier_arrive(e, &gen)) { go(e); barrier_release(e); }
    else barrier_wait(e, gen);
    if (atomic_load(&e->abort)) return NULL;
    if (hb_config_open_loop(e->cfg)) {
        while (hft_ticks() < e->t0) { }
        run_open(w);
        return NULL;
    }
    run_closed_phase(w); /* warm-up */
    if (barrier_arrive(e, &gen)) { measure(e); barrier_release(e); }
    else barrier_wait(e, gen);
    run_closed_phase(w);
    return NULL;
}

static void cleanup(engine *e) {
    for (int t = 0; t < e->nw; t++) {
        worker *w = &e->w[t];
        for (int j = 0; w->conns && j < w->n; j++) hft_conn_close(&w->conns[j]);
        if (w->ep >= 0) close(w->ep);
        hft_mem_free(w->mem, w->mapped);
        hb_stats_close(&w->stats);
    }
    free(e->w);
}

int hft_run(const hb_config *cfg, const hft_options *opt, hft_outcome *out, char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    engine e = {.cfg = cfg, .opt = opt};
    e.nw = opt->cpus.n < cfg->connections ? opt->cpus.n : cfg->connections;
    e.busy = hft_busy_poll_resolve(opt->poll, e.nw, (int)sysconf(_SC_NPROCESSORS_ONLN));
    e.timeout_ticks = hft_ns_to_ticks((double)cfg->timeout_ms * 1e6);
    e.total = cfg->duration_s > 0 ? UINT64_MAX : cfg->warmup + cfg->orders;
    e.w = calloc((size_t)e.nw, sizeof(worker));
    if (e.w == NULL || hb_stats_init(&out->merged, hb_config_open_loop(cfg)) != 0) {
        free(e.w);
        snprintf(err, errlen, "out of memory; pass fewer --connections");
        return -1;
    }
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, STACK_BYTES);
    int started = 0;
    for (int t = 0; t < e.nw; t++) {
        worker *w = &e.w[t];
        *w = (worker){.e = &e, .id = t, .cpu = opt->cpus.cpu[t], .ep = -1};
        w->n = cfg->connections / e.nw + (t < cfg->connections % e.nw);
    }
    for (; started < e.nw; started++)
        if (pthread_create(&e.w[started].th, &attr, worker_main, &e.w[started]) != 0) break;
    pthread_attr_destroy(&attr);
    if (started < e.nw) { /* the started ones wait at the barrier for the rest: stand in for them */
        snprintf(e.abort_err, sizeof e.abort_err, "cannot start %d threads; pass fewer --cpus", e.nw);
        atomic_store(&e.abort, true);
        for (int t = started; t < e.nw; t++) {
            int gen;
            if (barrier_arrive(&e, &gen)) barrier_release(&e);
        }
    }
    for (int t = 0; t < started; t++) pthread_join(e.w[t].th, NULL);
    if (opt->mlockall) munlockall(); /* the measured phase is over: writing the result may allocate */
    out->tuning = e.w[0].tuning;
    out->workers = e.nw;
    out->busy_poll = e.busy;
    if (atomic_load(&e.abort)) {
        snprintf(err, errlen, "%s", e.abort_err);
        cleanup(&e);
        hb_stats_close(&out->merged);
        return -1;
    }
    uint64_t last = e.measure_start;
    for (int t = 0; t < e.nw; t++) {
        hb_stats_merge(&out->merged, &e.w[t].stats);
        if (e.w[t].last_done > last) last = e.w[t].last_done;
    }
    out->started_at = e.measure_wall;
    out->duration_s = (double)hft_ticks_to_ns(last - e.measure_start) / 1e9;
    out->interrupted = hb_signal_stop_requested();
    cleanup(&e);
    return 0;
}

void hft_outcome_close(hft_outcome *out) { hb_stats_close(&out->merged); }
