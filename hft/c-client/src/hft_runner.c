/* hft_runner.c - start the workers and move them through the phases (see hft_runner.h). */
#include "hft_runner.h"

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

/* ---- barrier: the last thread to arrive runs the phase change, then releases ---- */

static bool barrier_arrive(hft_phase *p, int *gen) {
    *gen = atomic_load(&p->gen);
    return atomic_fetch_add(&p->arrived, 1) == p->nw - 1;
}

static void barrier_release(hft_phase *p) {
    atomic_store(&p->arrived, 0);
    atomic_fetch_add(&p->gen, 1);
}

static void barrier_wait(hft_phase *p, int gen) {
    for (unsigned spins = 0; atomic_load(&p->gen) == gen; spins++)
        if ((spins & 1023u) == 1023u) sched_yield(); /* not the hot path: be kind to the server */
}

/* --interval-s: the collector counts intervals from the measured phase's start. */
static void begin_intervals(hft_phase *p) {
    if (p->opt->interval_s <= 0 || atomic_load(&p->abort)) return;
    for (int t = 0; t < p->nw; t++) p->recorders[t] = p->w[t].stats.intervals;
    uint64_t now_ticks = hft_ticks(), now_ns = hb_now_ns(), start_ns;
    if (p->measure_start >= now_ticks) start_ns = now_ns + hft_ticks_to_ns(p->measure_start - now_ticks);
    else start_ns = now_ns - hft_ticks_to_ns(now_ticks - p->measure_start);
    hb_interval_log_begin(&p->intervals, p->recorders, p->nw, p->opt->hlog_prefix, &p->measure_wall, start_ns);
}

/* ---- the leader's phase changes ---- */

/* Leader, at the first barrier: check setups, lock memory, start the clock. */
static void go(hft_phase *p) {
    hft_tuning merged;
    hft_tuning_init(&merged);
    for (int t = 0; t < p->nw; t++) {
        if (p->w[t].err[0] && !atomic_load(&p->abort)) {
            memcpy(p->abort_err, p->w[t].err, sizeof p->abort_err);
            atomic_store(&p->abort, true);
        }
    }
    for (int i = 0; i < HFT_T_COUNT; i++) snprintf(merged.item[i].text, HFT_TUNE_LEN, "applied");
    for (int t = 0; t < p->nw; t++) hft_tuning_merge(&merged, &p->w[t].tuning);
    if (p->opt->mlockall) hft_tune_mlockall(&merged);
    else snprintf(merged.item[HFT_T_MLOCKALL].text, HFT_TUNE_LEN, "unavailable: not requested");
    p->w[0].tuning = merged; /* the run's view, picked up by hft_run */
    char bad[HB_ERR_LEN];
    if (p->opt->strict && !atomic_load(&p->abort) && !hft_tuning_all_applied(&merged, bad, sizeof bad)) {
        snprintf(p->abort_err, sizeof p->abort_err,
                 "--strict: tuning %.300s; run as root after hft/scripts/setup_hft_system.sh --apply, or drop --strict", bad);
        atomic_store(&p->abort, true);
    }
    if (p->open_loop) {
        p->ticks_per_order = 1e9 / p->cfg->rate * hft_clk.ticks_per_ns;
        struct timespec wall;
        hb_wall_now(&wall);
        p->t0 = hft_ticks() + hft_ns_to_ticks(100000.0); /* 100 µs: every worker is spinning by then */
        double off = 100e-6 + (double)p->cfg->warmup / p->cfg->rate;
        p->measure_start = p->t0 + (uint64_t)((double)p->cfg->warmup * p->ticks_per_order);
        uint64_t ns = (uint64_t)wall.tv_nsec + (uint64_t)(off * 1e9);
        p->measure_wall.tv_sec = wall.tv_sec + (time_t)(ns / 1000000000u);
        p->measure_wall.tv_nsec = (long)(ns % 1000000000u);
        p->deadline = p->cfg->duration_s > 0 ? p->measure_start + hft_ns_to_ticks(p->cfg->duration_s * 1e9) : UINT64_MAX;
        begin_intervals(p);
    } else {
        atomic_store(&p->next, 0);
        p->phase_hi = p->cfg->warmup;
        p->deadline = UINT64_MAX;
    }
}

/* Leader, between warm-up and the measured phase (closed loop). */
static void measure(hft_phase *p) {
    atomic_store(&p->next, p->cfg->warmup);
    p->phase_hi = p->cfg->duration_s > 0 ? UINT64_MAX : p->cfg->warmup + p->cfg->orders;
    hb_wall_now(&p->measure_wall);
    p->measure_start = hft_ticks();
    p->deadline = p->cfg->duration_s > 0 ? p->measure_start + hft_ns_to_ticks(p->cfg->duration_s * 1e9) : UINT64_MAX;
    begin_intervals(p);
}

static void *worker_main(void *arg) {
    hft_worker *w = arg;
    hft_phase *p = w->phase;
    int gen;
    hft_worker_setup(w);
    if (barrier_arrive(p, &gen)) { go(p); barrier_release(p); }
    else barrier_wait(p, gen);
    if (atomic_load(&p->abort)) return NULL;
    if (p->open_loop) {
        while (hft_ticks() < p->t0) { }
        hft_worker_run(w); /* the whole schedule, warm-up included */
        return NULL;
    }
    hft_worker_run(w); /* warm-up */
    if (barrier_arrive(p, &gen)) { measure(p); barrier_release(p); }
    else barrier_wait(p, gen);
    hft_worker_run(w);
    return NULL;
}

static void cleanup(hft_phase *p) {
    for (int t = 0; t < p->nw; t++) {
        hft_worker *w = &p->w[t];
        for (int j = 0; w->conns && j < w->n; j++) hft_conn_close(&w->conns[j]);
        if (w->ep >= 0) close(w->ep);
        hft_mem_free(w->mem, w->mapped);
        hb_stats_close(&w->stats);
    }
    free(p->w);
    free(p->recorders);
}

/* Start the --interval-s collector (it waits for the measured phase). @return 0 or an errno. */
static int start_intervals(hft_phase *p) {
    if (p->opt->interval_s <= 0) return 0;
    p->recorders = calloc((size_t)p->nw, sizeof(hb_interval_recorder *));
    if (p->recorders == NULL) return ENOMEM;
    return hb_interval_log_start(&p->intervals, p->opt->interval_s, p->open_loop, p->opt->interval_hlog);
}

/* The workers are joined: the collector writes the last interval and ends. */
static void stop_intervals(hft_phase *p, hft_outcome *out) {
    if (p->opt->interval_s <= 0) return;
    out->intervals_logged = hb_interval_log_begun(&p->intervals);
    out->intervals_rc = hb_interval_log_stop(&p->intervals);
}

int hft_run(const hb_config *cfg, const hft_options *opt, hft_outcome *out, char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    hft_phase p = {.cfg = cfg, .opt = opt, .open_loop = hb_config_open_loop(cfg)};
    p.nw = opt->cpus.n < cfg->connections ? opt->cpus.n : cfg->connections;
    p.busy = hft_busy_poll_resolve(opt->poll, p.nw, hft_cpus_allowed());
    p.timeout_ticks = hft_ns_to_ticks((double)cfg->timeout_ms * 1e6);
    p.total = cfg->duration_s > 0 ? UINT64_MAX : cfg->warmup + cfg->orders;
    p.w = aligned_alloc(HFT_CACHE_LINE, (size_t)p.nw * sizeof(hft_worker)); /* sizeof is a multiple of 64 */
    if (p.w == NULL || hb_stats_init(&out->merged, p.open_loop) != 0) {
        free(p.w);
        snprintf(err, errlen, "out of memory; pass fewer --connections");
        return -1;
    }
    if (start_intervals(&p) != 0) {
        free(p.w);
        free(p.recorders);
        hb_stats_close(&out->merged);
        snprintf(err, errlen, "cannot start the --interval-s thread (out of memory or threads); drop --interval-s");
        return -1;
    }
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, STACK_BYTES);
    int started = 0;
    for (int t = 0; t < p.nw; t++) {
        hft_worker *w = &p.w[t];
        *w = (hft_worker){.phase = &p, .id = t, .cpu = opt->cpus.cpu[t], .ep = -1};
        w->n = cfg->connections / p.nw + (t < cfg->connections % p.nw);
    }
    for (; started < p.nw; started++)
        if (pthread_create(&p.w[started].th, &attr, worker_main, &p.w[started]) != 0) break;
    pthread_attr_destroy(&attr);
    if (started < p.nw) { /* the started ones wait at the barrier for the rest: stand in for them */
        snprintf(p.abort_err, sizeof p.abort_err, "cannot start %d threads; pass fewer --cpus", p.nw);
        atomic_store(&p.abort, true);
        for (int t = started; t < p.nw; t++) {
            int gen;
            if (barrier_arrive(&p, &gen)) barrier_release(&p);
        }
    }
    for (int t = 0; t < started; t++) pthread_join(p.w[t].th, NULL);
    stop_intervals(&p, out);
    if (opt->mlockall) munlockall(); /* the measured phase is over: writing the result may allocate */
    out->tuning = p.w[0].tuning;
    out->workers = p.nw;
    out->busy_poll = p.busy;
    if (atomic_load(&p.abort)) {
        snprintf(err, errlen, "%s", p.abort_err);
        cleanup(&p);
        hb_stats_close(&out->merged);
        return -1;
    }
    uint64_t last = p.measure_start;
    for (int t = 0; t < p.nw; t++) {
        hb_stats_merge(&out->merged, &p.w[t].stats);
        if (p.w[t].last_done > last) last = p.w[t].last_done;
    }
    out->started_at = p.measure_wall;
    out->duration_s = (double)hft_ticks_to_ns(last - p.measure_start) / 1e9;
    out->interrupted = hb_signal_stop_requested();
    cleanup(&p);
    return 0;
}

void hft_outcome_close(hft_outcome *out) { hb_stats_close(&out->merged); }
