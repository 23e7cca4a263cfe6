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
    uint64_t now_ticks = hft_ticks(), now_ns = hb_now_ns(), start_ns;
    if (p->measure_start >= now_ticks) start_ns = now_ns + hft_ticks_to_ns(p->measure_start - now_ticks);
    else start_ns = now_ns - hft_ticks_to_ns(now_ticks - p->measure_start);
    for (int side = p->sides - 1; side >= 0; side--) { /* a duet's peer (b) before its leader (a) */
        for (int t = 0; t < p->nw; t++) p->recorders[side][t] = p->w[t].stats[side].intervals;
        hb_interval_log_begin(&p->intervals[side], p->recorders[side], p->nw, p->opt->hlog_prefix, &p->measure_wall,
                              start_ns);
    }
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
        for (int side = 0; side < HFT_SIDES; side++) hb_stats_close(&w->stats[side]);
    }
    free(p->w);
    for (int side = 0; side < HFT_SIDES; side++) free(p->recorders[side]);
}

/* Start the --interval-s collector (it waits for the measured phase); a duet's side b is its
 * peer, writing hlog_b. @return 0 or an errno, with nothing started. */
static int start_intervals(hft_phase *p, FILE *hlog_b) {
    if (p->opt->interval_s <= 0) return 0;
    for (int side = 0; side < p->sides; side++)
        if ((p->recorders[side] = calloc((size_t)p->nw, sizeof(hb_interval_recorder *))) == NULL) return ENOMEM;
    int rc = hb_interval_log_start(&p->intervals[HFT_SIDE_A], p->opt->interval_s, p->open_loop, p->opt->interval_hlog);
    if (rc == 0 && p->sides > 1 &&
        (rc = hb_interval_log_start_peer(&p->intervals[HFT_SIDE_B], &p->intervals[HFT_SIDE_A], hlog_b)) != 0)
        (void)hb_interval_log_stop(&p->intervals[HFT_SIDE_A]);
    return rc;
}

/* The workers are joined: the collector writes the last intervals (both sides') and ends. */
static void stop_intervals(hft_phase *p, hft_outcome out[]) {
    if (p->opt->interval_s <= 0) return;
    for (int side = 0; side < p->sides; side++) { /* the leader (a) first */
        out[side].intervals_logged = hb_interval_log_begun(&p->intervals[side]);
        out[side].intervals_rc = hb_interval_log_stop(&p->intervals[side]);
    }
}

static void outcomes_close(hft_outcome out[], int sides) {
    for (int side = 0; side < sides; side++) hb_stats_close(&out[side].merged);
}

int hft_run_sides(const hb_config *const cfg[], int sides, const hft_options *opt, FILE *hlog_b, hft_outcome out[],
                  char *err, size_t errlen) {
    memset(out, 0, sizeof(hft_outcome) * (size_t)sides);
    if (sides < 1 || sides > HFT_SIDES || (sides > 1 && !hb_config_open_loop(cfg[HFT_SIDE_A]))) {
        snprintf(err, errlen, "a run over %d servers needs --rate (open loop); pass --rate", sides);
        return -1;
    }
    const hb_config *c = cfg[HFT_SIDE_A]; /* every flag but the URL and output is side a's */
    hft_phase p = {.cfg = c, .opt = opt, .sides = sides, .open_loop = hb_config_open_loop(c)};
    for (int side = 0; side < sides; side++) p.side_cfg[side] = cfg[side];
    p.nw = opt->cpus.n < c->connections ? opt->cpus.n : c->connections;
    p.busy = hft_busy_poll_resolve(opt->poll, p.nw, hft_cpus_allowed());
    p.timeout_ticks = hft_ns_to_ticks((double)c->timeout_ms * 1e6);
    p.total = c->duration_s > 0 ? UINT64_MAX : c->warmup + c->orders;
    p.w = aligned_alloc(HFT_CACHE_LINE, (size_t)p.nw * sizeof(hft_worker)); /* sizeof is a multiple of 64 */
    int rc = p.w == NULL ? ENOMEM : 0;
    for (int side = 0; rc == 0 && side < sides; side++) rc = hb_stats_init(&out[side].merged, p.open_loop);
    if (rc != 0) {
        free(p.w);
        outcomes_close(out, sides);
        snprintf(err, errlen, "out of memory; pass fewer --connections");
        return -1;
    }
    if (start_intervals(&p, hlog_b) != 0) {
        free(p.w);
        for (int side = 0; side < HFT_SIDES; side++) free(p.recorders[side]);
        outcomes_close(out, sides);
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
        w->n = c->connections / p.nw + (t < c->connections % p.nw);
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
    if (atomic_load(&p.abort)) {
        snprintf(err, errlen, "%s", p.abort_err);
        cleanup(&p);
        outcomes_close(out, sides);
        return -1;
    }
    uint64_t last = p.measure_start;
    for (int t = 0; t < p.nw; t++) {
        for (int side = 0; side < sides; side++) hb_stats_merge(&out[side].merged, &p.w[t].stats[side]);
        if (p.w[t].last_done > last) last = p.w[t].last_done;
    }
    for (int side = 0; side < sides; side++) {
        out[side].tuning = p.w[0].tuning;
        out[side].workers = p.nw;
        out[side].busy_poll = p.busy;
        out[side].started_at = p.measure_wall;
        out[side].duration_s = (double)hft_ticks_to_ns(last - p.measure_start) / 1e9;
        out[side].interrupted = hb_signal_stop_requested();
    }
    cleanup(&p);
    return 0;
}

int hft_run(const hb_config *cfg, const hft_options *opt, hft_outcome *out, char *err, size_t errlen) {
    const hb_config *one[1] = {cfg};
    return hft_run_sides(one, 1, opt, NULL, out, err, errlen);
}

void hft_outcome_close(hft_outcome *out) { hb_stats_close(&out->merged); }
