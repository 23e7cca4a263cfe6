/* hft_engine.c - start the workers and move them through the phases (see hft_engine.h). */
#include "hft_engine.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "hb_clock.h"
#include "hb_signal.h"
#include "hft_clock.h"
#include "hft_worker.h"

#define STACK_BYTES ((size_t)256 * 1024) /* small stacks: less to lock with mlockall */

/* CPUs this process may run on (its affinity mask); the CPUs online if that cannot be read. */
static int cpus_allowed(void) {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) return CPU_COUNT(&set);
    return (int)sysconf(_SC_NPROCESSORS_ONLN);
}

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

/* --interval-s: the collector counts intervals from the measured phase's start. */
static void begin_intervals(engine *e) {
    if (e->opt->interval_s <= 0 || atomic_load(&e->abort)) return;
    for (int t = 0; t < e->nw; t++) e->recorders[t] = e->w[t].stats.intervals;
    uint64_t now_ticks = hft_ticks(), now_ns = hb_now_ns(), start_ns;
    if (e->measure_start >= now_ticks) start_ns = now_ns + hft_ticks_to_ns(e->measure_start - now_ticks);
    else start_ns = now_ns - hft_ticks_to_ns(now_ticks - e->measure_start);
    hb_interval_log_begin(&e->intervals, e->recorders, e->nw, e->opt->hlog_prefix, &e->measure_wall, start_ns);
}

/* ---- one order's end ---- */

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
        begin_intervals(e);
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
    begin_intervals(e);
}

static void *worker_main(void *arg) {
    worker *w = arg;
    engine *e = w->e;
    int gen;
    hft_worker_setup(w);
    if (barrier_arrive(e, &gen)) { go(e); barrier_release(e); }
    else barrier_wait(e, gen);
    if (atomic_load(&e->abort)) return NULL;
    if (hb_config_open_loop(e->cfg)) {
        while (hft_ticks() < e->t0) { }
        hft_worker_run_open(w);
        return NULL;
    }
    hft_worker_run_closed_phase(w); /* warm-up */
    if (barrier_arrive(e, &gen)) { measure(e); barrier_release(e); }
    else barrier_wait(e, gen);
    hft_worker_run_closed_phase(w);
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
    free(e->recorders);
}

/* Start the --interval-s collector (it waits for the measured phase). @return 0 or an errno. */
static int start_intervals(engine *e) {
    if (e->opt->interval_s <= 0) return 0;
    e->recorders = calloc((size_t)e->nw, sizeof(hb_interval_recorder *));
    if (e->recorders == NULL) return ENOMEM;
    return hb_interval_log_start(&e->intervals, e->opt->interval_s, hb_config_open_loop(e->cfg), e->opt->interval_hlog);
}

/* The workers are joined: the collector writes the last interval and ends. */
static void stop_intervals(engine *e, hft_outcome *out) {
    if (e->opt->interval_s <= 0) return;
    out->intervals_logged = hb_interval_log_begun(&e->intervals);
    out->intervals_rc = hb_interval_log_stop(&e->intervals);
}

int hft_run(const hb_config *cfg, const hft_options *opt, hft_outcome *out, char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    engine e = {.cfg = cfg, .opt = opt};
    e.nw = opt->cpus.n < cfg->connections ? opt->cpus.n : cfg->connections;
    e.busy = hft_busy_poll_resolve(opt->poll, e.nw, cpus_allowed());
    e.timeout_ticks = hft_ns_to_ticks((double)cfg->timeout_ms * 1e6);
    e.total = cfg->duration_s > 0 ? UINT64_MAX : cfg->warmup + cfg->orders;
    e.w = aligned_alloc(HFT_CACHE_LINE, (size_t)e.nw * sizeof(worker)); /* sizeof is a multiple of 64 */
    if (e.w == NULL || hb_stats_init(&out->merged, hb_config_open_loop(cfg)) != 0) {
        free(e.w);
        snprintf(err, errlen, "out of memory; pass fewer --connections");
        return -1;
    }
    if (start_intervals(&e) != 0) {
        free(e.w);
        free(e.recorders);
        hb_stats_close(&out->merged);
        snprintf(err, errlen, "cannot start the --interval-s thread (out of memory or threads); drop --interval-s");
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
    stop_intervals(&e, out);
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
