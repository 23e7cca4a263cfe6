/* hft_duet_worker.c - the duet's one worker: pairs of orders, one in flight (see hft_duet_worker.h). */
#include "hft_duet_worker.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>

#include "hb_clock.h"
#include "hb_interval.h"
#include "hb_signal.h"
#include "hft_clock.h"
#include "hft_conn.h"
#include "hft_duet.h"
#include "hft_tune.h"

#define STACK_BYTES ((size_t)256 * 1024) /* as the runner's workers: less to lock with mlockall */
#define SLEEP_NS 1000000L                /* --no-busy-poll: the longest wait in ppoll before a timeout check */

/* The duet's state: the worker thread's alone while it runs, read by hft_duet_run after join. */
typedef struct duet {
    const hb_config *const *cfg;  /* [side]: its --url and output; every other flag is shared */
    const hft_options *opt;       /* the HFT flags */
    hft_outcome *out;             /* [side]: out[side].merged is where the side records */
    hft_conn *conn;               /* [side], in mem */
    void *mem;                    /* the huge-page (or 4 KiB) mapping that holds conn */
    size_t mapped;                /* its length, for munmap */
    bool busy;                    /* spin on the socket (true) or sleep in ppoll */
    uint64_t timeout_ticks;       /* --timeout-ms */
    hft_tuning tuning;            /* what the thread got, then the run's view (mlockall) */
    hb_ts_cache ts;               /* the client_timestamp text of the current second */
    hb_interval_log log[HFT_SIDES];          /* --interval-s: a's collector, b its peer */
    hb_interval_recorder *recorder[HFT_SIDES]; /* --interval-s: each side's, handed to its log */
    bool logs_started;            /* --interval-s: both logs started (stop them after join) */
    uint64_t measure_start;       /* ticks */
    struct timespec measure_wall; /* wall clock at measure_start: both results' started_at */
    uint64_t last_done;           /* ticks: last measured completion */
    uint64_t pairs;               /* measured pairs sent */
    char err[HB_ERR_LEN];         /* setup failure, "" when fine */
} duet;

static void record(duet *d, int side, hft_step s, uint64_t now) {
    hft_conn *c = &d->conn[side];
    hb_stats *st = &d->out[side].merged;
    if (s == HFT_STEP_DONE) {
        int kind = hb_error_kind_of_status(c->status);
        int64_t ns = hft_ticks_to_ns(now - c->t_start);
        if (kind < 0) hb_stats_record_ok(st, ns, ns);
        else hb_stats_record_error(st, (hb_error_kind)kind);
    } else {
        hb_stats_record_error(st, c->fail);
    }
    d->last_done = now;
}

/* --no-busy-poll: sleep until the socket is ready (or SLEEP_NS, to look at the timeout). */
static void wait_ready(const hft_conn *c) {
    struct pollfd pfd = {.fd = c->fd, .events = c->state == HFT_SENDING ? POLLOUT : POLLIN};
    struct timespec ts = {.tv_sec = 0, .tv_nsec = SLEEP_NS};
    (void)ppoll(&pfd, 1, &ts, NULL);
}

/* Order k to one side, to its end: answered, failed or timed out. Recorded when measured. */
static void one_order(duet *d, int side, uint64_t k, bool measured) {
    hft_conn *c = &d->conn[side];
    const hb_config *cfg = d->cfg[side];
    if (c->state == HFT_DOWN && hft_conn_connect(c, &cfg->url.addr, cfg->timeout_ms) != 0) {
        hft_conn_close(c);
        c->fail = HB_ERR_CONNECT;
        if (measured) record(d, side, HFT_STEP_FAILED, hft_ticks());
        return;
    }
    c->t_start = hft_ticks();
    c->t_intended = c->t_start;
    hft_step s = hft_conn_send(c, cfg->seed, k, &d->ts);
    uint64_t now = c->t_start;
    while (s == HFT_STEP_PENDING) {
        if (!d->busy) wait_ready(c);
        if (c->state == HFT_SENDING) s = hft_conn_write_more(c);
        if (s == HFT_STEP_PENDING && c->state == HFT_RECEIVING) s = hft_conn_read(c);
        now = hft_ticks();
        if (s == HFT_STEP_PENDING && now - c->t_start > d->timeout_ticks) {
            hft_conn_close(c); /* the late answer must not be read as the next one's */
            c->fail = HB_ERR_TIMEOUT;
            s = HFT_STEP_FAILED;
        }
    }
    if (measured) record(d, side, s, now);
}

/* Pair k: order k to both sides, the first drawn from rng. */
static void one_pair(duet *d, hft_pair_rng *rng, uint64_t k, bool measured) {
    int first = hft_pair_b_first(rng) ? HFT_SIDE_B : HFT_SIDE_A;
    one_order(d, first, k, measured);
    one_order(d, HFT_SIDE_A + HFT_SIDE_B - first, k, measured);
}

/* Pin, tune, allocate, connect both sides; d->err says what failed. */
static void setup(duet *d) {
    hft_tuning_init(&d->tuning);
    hft_tune_thread(&d->tuning, d->opt->cpus.cpu[0], d->opt->rt_priority);
    hb_ts_cache_init(&d->ts);
    (void)prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL); /* ppoll's wake-ups, as the runner's workers */
    d->mem = hft_mem_alloc(sizeof(hft_conn) * HFT_SIDES, &d->mapped, &d->tuning);
    if (d->mem == NULL) {
        snprintf(d->err, sizeof d->err, "out of memory for the duet's 2 connections; free some memory");
        return;
    }
    d->conn = d->mem;
    static const char *const flag[HFT_SIDES] = {"--url", "--duet-url"};
    int bad_path = -1;
    for (int side = HFT_SIDES - 1; side >= 0; side--) /* both down (fd -1) before any can fail */
        if (hft_conn_init(&d->conn[side], d->cfg[side]->url.order_path, d->cfg[side]->url.hostport) != 0) bad_path = side;
    if (bad_path >= 0) {
        snprintf(d->err, sizeof d->err, "%s path too long (%.200s); pass a shorter %s", flag[bad_path],
                 d->cfg[bad_path]->url_text, flag[bad_path]);
        return;
    }
    for (int side = 0; side < HFT_SIDES; side++) {
        const hb_config *cfg = d->cfg[side];
        hft_conn *c = &d->conn[side];
        if (hft_conn_connect(c, &cfg->url.addr, cfg->timeout_ms) != 0) {
            snprintf(d->err, sizeof d->err, "cannot connect to %s (%s); start bin/hft-server or pass %s",
                     cfg->url.hostport, strerror(errno), flag[side]);
            return;
        }
    }
    hft_tuning merged;
    hft_tuning_init(&merged);
    for (int i = 0; i < HFT_T_COUNT; i++) snprintf(merged.item[i].text, HFT_TUNE_LEN, "applied");
    hft_tuning_merge(&merged, &d->tuning);
    if (d->opt->mlockall) hft_tune_mlockall(&merged);
    else snprintf(merged.item[HFT_T_MLOCKALL].text, HFT_TUNE_LEN, "unavailable: not requested");
    d->tuning = merged;
    char bad[HB_ERR_LEN];
    if (d->opt->strict && !hft_tuning_all_applied(&merged, bad, sizeof bad))
        snprintf(d->err, sizeof d->err,
                 "--strict: tuning %.300s; run as root after hft/scripts/setup_hft_system.sh --apply, or drop --strict", bad);
}

/* The measured phase starts now: both results' start, and both logs' first interval. */
static void begin_measure(duet *d) {
    hb_wall_now(&d->measure_wall);
    d->measure_start = hft_ticks();
    d->last_done = d->measure_start;
    if (!d->logs_started) return;
    uint64_t start_ns = hb_now_ns();
    /* The peer first: the leader's begin hands both to its collector. */
    hb_interval_log_begin(&d->log[HFT_SIDE_B], &d->recorder[HFT_SIDE_B], 1, d->opt->hlog_prefix, &d->measure_wall,
                          start_ns);
    hb_interval_log_begin(&d->log[HFT_SIDE_A], &d->recorder[HFT_SIDE_A], 1, d->opt->hlog_prefix, &d->measure_wall,
                          start_ns);
}

static void *duet_main(void *arg) {
    duet *d = arg;
    const hb_config *cfg = d->cfg[HFT_SIDE_A];
    setup(d);
    if (d->err[0]) return NULL;
    hft_pair_rng rng;
    hft_pair_rng_init(&rng, cfg->seed);
    uint64_t k = 0;
    for (; k < cfg->warmup && !hb_signal_stop_requested(); k++) one_pair(d, &rng, k, false);
    begin_measure(d);
    uint64_t end = cfg->duration_s > 0 ? UINT64_MAX : cfg->warmup + cfg->orders;
    uint64_t deadline = cfg->duration_s > 0 ? d->measure_start + hft_ns_to_ticks(cfg->duration_s * 1e9) : UINT64_MAX;
    for (; k < end && !hb_signal_stop_requested(); k++) {
        if (deadline != UINT64_MAX && hft_ticks() >= deadline) break;
        one_pair(d, &rng, k, true);
        d->pairs++;
    }
    return NULL;
}

/* Each side's statistics (with interval recorders under --interval-s) and the two logs. */
static int start_records(duet *d, FILE *hlog_b) {
    for (int side = 0; side < HFT_SIDES; side++) {
        if (hb_stats_init(&d->out[side].merged, false) != 0) return ENOMEM;
        if (d->opt->interval_s > 0 && hb_stats_enable_intervals(&d->out[side].merged) != 0) return ENOMEM;
        d->recorder[side] = d->out[side].merged.intervals;
    }
    if (d->opt->interval_s <= 0) return 0;
    int rc = hb_interval_log_start(&d->log[HFT_SIDE_A], d->opt->interval_s, false, d->opt->interval_hlog);
    if (rc != 0) return rc;
    if ((rc = hb_interval_log_start_peer(&d->log[HFT_SIDE_B], &d->log[HFT_SIDE_A], hlog_b)) != 0) {
        (void)hb_interval_log_stop(&d->log[HFT_SIDE_A]);
        return rc;
    }
    d->logs_started = true;
    return 0;
}

static void cleanup(duet *d) {
    for (int side = 0; d->conn != NULL && side < HFT_SIDES; side++) hft_conn_close(&d->conn[side]);
    hft_mem_free(d->mem, d->mapped);
}

int hft_duet_run(const hb_config *const cfg[HFT_SIDES], const hft_options *opt, FILE *hlog_b,
                 hft_outcome out[HFT_SIDES], uint64_t *pairs, char *err, size_t errlen) {
    memset(out, 0, sizeof(hft_outcome) * HFT_SIDES);
    duet d = {.cfg = cfg, .opt = opt, .out = out};
    d.busy = hft_busy_poll_resolve(opt->poll, 1, hft_cpus_allowed());
    d.timeout_ticks = hft_ns_to_ticks((double)cfg[HFT_SIDE_A]->timeout_ms * 1e6);
    if (start_records(&d, hlog_b) != 0) {
        for (int side = 0; side < HFT_SIDES; side++) hb_stats_close(&out[side].merged);
        snprintf(err, errlen, "cannot start the duet (out of memory or threads); free some memory or drop --interval-s");
        return -1;
    }
    pthread_attr_t attr;
    pthread_t th;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, STACK_BYTES);
    int rc = pthread_create(&th, &attr, duet_main, &d);
    pthread_attr_destroy(&attr);
    if (rc != 0) snprintf(d.err, sizeof d.err, "cannot start the duet's thread (%s); raise the process limit", strerror(rc));
    else pthread_join(th, NULL);
    if (d.logs_started) { /* the leader first: it writes both sides' last intervals */
        for (int side = 0; side < HFT_SIDES; side++) {
            out[side].intervals_logged = hb_interval_log_begun(&d.log[side]);
            out[side].intervals_rc = hb_interval_log_stop(&d.log[side]);
        }
    }
    if (opt->mlockall) munlockall(); /* the measured phase is over: writing the results may allocate */
    cleanup(&d);
    if (d.err[0]) {
        snprintf(err, errlen, "%s", d.err);
        for (int side = 0; side < HFT_SIDES; side++) hb_stats_close(&out[side].merged);
        return -1;
    }
    for (int side = 0; side < HFT_SIDES; side++) {
        out[side].tuning = d.tuning;
        out[side].workers = 1;
        out[side].busy_poll = d.busy;
        out[side].started_at = d.measure_wall;
        out[side].duration_s = (double)hft_ticks_to_ns(d.last_done - d.measure_start) / 1e9;
        out[side].interrupted = hb_signal_stop_requested();
    }
    *pairs = d.pairs;
    return 0;
}
