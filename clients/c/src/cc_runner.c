/* cc_runner.c - see cc_runner.h. */
#include "cc_runner.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cc_worker.h"
#include "hb_clock.h"
#include "hb_schedule.h"
#include "hb_signal.h"

/* Open loop: order 0 is due this long after the threads are released. */
#define OPEN_LOOP_LEAD_NS 2000000u

/* Closed loop: meet the workers after warm-up, set up the measured phase, release them. */
static void start_measuring(cc_phase *phase, struct timespec *wall)
{
    (void)pthread_barrier_wait(&phase->barrier);
    atomic_store_explicit(&phase->next_k, phase->cfg->warmup, memory_order_relaxed);
    phase->end_k = phase->total;
    phase->measure_start_ns = hb_now_ns();
    hb_wall_now(wall);
    if (phase->cfg->duration_s > 0) {
        phase->deadline_ns = phase->measure_start_ns + (uint64_t)(phase->cfg->duration_s * 1e9);
    }
    (void)pthread_barrier_wait(&phase->barrier); /* publishes the fields above to the workers */
}

static void add_ns(struct timespec *t, uint64_t ns)
{
    uint64_t total = (uint64_t)t->tv_nsec + ns;
    t->tv_sec += (time_t)(total / 1000000000u);
    t->tv_nsec = (long)(total % 1000000000u);
}

/* Start n threads; on failure abort the started ones. @return threads started == n. */
static bool launch(cc_worker *workers, int n, cc_phase *phase)
{
    for (int i = 0; i < n; i++) {
        if (pthread_create(&workers[i].thread, NULL, cc_worker_main, &workers[i]) != 0) {
            atomic_store_explicit(&phase->gate, -1, memory_order_release);
            for (int j = 0; j < i; j++) {
                (void)pthread_join(workers[j].thread, NULL);
            }
            return false;
        }
    }
    return true;
}

/* The first phase: the whole run in open loop, the warm-up (orders k < warmup) in closed loop. */
static int setup(const hb_config *cfg, cc_phase *phase, cc_worker *workers, int n, bool *barrier_made)
{
    memset(phase, 0, sizeof(*phase));
    phase->cfg = cfg;
    phase->open_loop = hb_config_open_loop(cfg);
    phase->total = hb_schedule_total(cfg);
    phase->end_k = cfg->warmup;
    *barrier_made = pthread_barrier_init(&phase->barrier, NULL, (unsigned)n + 1) == 0;
    if (!*barrier_made) {
        return -1;
    }
    int rc = 0;
    for (int i = 0; i < n; i++) {
        int first_slot = 0;
        int share = hb_schedule_share(cfg->connections, n, i, &first_slot);
        rc |= cc_worker_init(&workers[i], phase, share, first_slot);
    }
    return rc;
}

int cc_run(const hb_config *cfg, cc_outcome *out, char *err, size_t errlen)
{
    int n = hb_schedule_workers(cfg->connections, hb_usable_cpus());
    cc_phase phase;
    bool barrier_made = false;
    cc_worker *workers = calloc((size_t)n, sizeof(*workers));
    memset(out, 0, sizeof(*out));
    out->workers = n;
    int rc = workers == NULL ? -1 : setup(cfg, &phase, workers, n, &barrier_made);
    if (rc == 0 && hb_stats_init(&out->merged, phase.open_loop) != 0) {
        rc = -1;
    }
    if (rc != 0 || !launch(workers, n, &phase)) {
        (void)snprintf(err, errlen, "cannot set up %d connections in %d threads (out of memory or threads); "
                                    "pass fewer --connections", cfg->connections, n);
        rc = -1;
    } else {
        uint64_t mono0 = hb_now_ns();
        struct timespec wall0;
        hb_wall_now(&wall0);
        phase.t0_ns = mono0 + OPEN_LOOP_LEAD_NS;
        atomic_store_explicit(&phase.gate, 1, memory_order_release);
        if (phase.open_loop) { /* measured from the intended time of the first measured order */
            phase.measure_start_ns = hb_schedule_intended_ns(phase.t0_ns, cfg->warmup, cfg->rate);
            out->started_at = wall0;
            add_ns(&out->started_at, phase.measure_start_ns - mono0);
        } else {
            start_measuring(&phase, &out->started_at);
        }
        uint64_t end_ns = phase.measure_start_ns;
        for (int i = 0; i < n; i++) {
            (void)pthread_join(workers[i].thread, NULL);
            hb_stats_merge(&out->merged, &workers[i].stats);
            end_ns = workers[i].last_done_ns > end_ns ? workers[i].last_done_ns : end_ns;
        }
        out->duration_s = (double)(end_ns - phase.measure_start_ns) / 1e9;
        out->interrupted = hb_signal_stop_requested();
    }
    for (int i = 0; workers != NULL && i < n; i++) {
        cc_worker_close(&workers[i]);
    }
    if (barrier_made) {
        (void)pthread_barrier_destroy(&phase.barrier);
    }
    free(workers);
    if (rc != 0) {
        hb_stats_close(&out->merged);
    }
    return rc;
}
