/* hft_duet_worker.c - the duet's one worker: pairs of orders, one in flight per lane (see hft_duet_worker.h). */
#include "hft_duet_worker.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "hb_clock.h"
#include "hb_interval.h"
#include "hb_signal.h"
#include "hft_clock.h"
#include "hft_conn.h"
#include "hft_duet.h"
#include "hft_tune.h"

#define STACK_BYTES ((size_t)256 * 1024) /* as the runner's workers: less to lock with mlockall */
#define SLEEP_MS 1                       /* --no-busy-poll: the longest wait in epoll before a timeout check */

#define MAX_EVENTS 64
#define LANE_IDLE (-1)

/* One lane: a connection to each side (conn[2 * lane + side]) and the pair it is sending. */
typedef struct lane {
    uint64_t k;    /* the pair's order index */
    int first;     /* the side sent first */
    int at;        /* the side whose order is in flight, or LANE_IDLE */
    bool second;   /* the order in flight is the pair's second */
    bool measured; /* record both (false during warm-up) */
} lane;

/* The duet's state: the worker thread's alone while it runs, read by hft_duet_run after join. */
typedef struct duet {
    const hb_config *const *cfg;  /* [side]: its --url and output; every other flag is shared */
    const hft_options *opt;       /* the HFT flags */
    hft_outcome *out;             /* [side]: out[side].merged is where the side records */
    int lanes;                    /* --connections: lanes, one connection to each side */
    lane *lane;                   /* [lanes], in mem */
    hft_conn *conn;               /* [2 * lanes], in mem */
    void *mem;                    /* the huge-page (or 4 KiB) mapping that holds lane and conn */
    size_t mapped;                /* its length, for munmap */
    int ep;                       /* epoll over every connection; -1 with one lane busy-polling */
    int in_flight;                /* lanes not idle */
    hft_pair_rng rng;             /* which side of a pair goes first */
    bool busy;                    /* spin on the sockets (true) or sleep in epoll */
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

static hft_conn *conn_of(duet *d, int i, int side) { return &d->conn[2 * i + side]; }

static void record(duet *d, int side, const hft_conn *c, hft_step s, uint64_t now) {
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

static int watch(duet *d, int index) {
    if (d->ep < 0) return 0;
    struct epoll_event ev = {.events = EPOLLIN, .data.u32 = (uint32_t)index};
    return epoll_ctl(d->ep, EPOLL_CTL_ADD, d->conn[index].fd, &ev);
}

/* Send lane i's order to side (reconnecting first if needed): PENDING, or FAILED at once. */
static hft_step begin_order(duet *d, int i, int side) {
    lane *l = &d->lane[i];
    hft_conn *c = conn_of(d, i, side);
    const hb_config *cfg = d->cfg[side];
    l->at = side;
    if (c->state == HFT_DOWN &&
        (hft_conn_connect(c, &cfg->url.addr, cfg->timeout_ms) != 0 || watch(d, 2 * i + side) != 0)) {
        hft_conn_close(c);
        c->fail = HB_ERR_CONNECT;
        c->t_start = hft_ticks();
        return HFT_STEP_FAILED;
    }
    c->t_start = hft_ticks();
    c->t_intended = c->t_start;
    return hft_conn_send(c, cfg->seed, l->k, &d->ts);
}

/* Lane i's order in flight ended with s at now: record it, then send the pair's second (which
   may fail at once and end the pair too) or go idle. */
static void end_order(duet *d, int i, hft_step s, uint64_t now) {
    lane *l = &d->lane[i];
    for (;;) {
        if (l->measured) record(d, l->at, conn_of(d, i, l->at), s, now);
        if (l->second) {
            l->at = LANE_IDLE;
            d->in_flight--;
            return;
        }
        l->second = true;
        s = begin_order(d, i, HFT_SIDE_A + HFT_SIDE_B - l->first);
        if (s == HFT_STEP_PENDING) return;
        now = hft_ticks();
    }
}

/* Pair k on the idle lane i: order k to both sides, the first drawn from the rng. */
static void start_pair(duet *d, int i, uint64_t k, bool measured) {
    lane *l = &d->lane[i];
    l->k = k;
    l->measured = measured;
    l->second = false;
    l->first = hft_pair_b_first(&d->rng) ? HFT_SIDE_B : HFT_SIDE_A;
    d->in_flight++;
    hft_step s = begin_order(d, i, l->first);
    if (s != HFT_STEP_PENDING) end_order(d, i, s, hft_ticks());
}

/* Advance lane i's order in flight: write, read, or time it out. */
static void progress(duet *d, int i) {
    hft_conn *c = conn_of(d, i, d->lane[i].at);
    hft_step s = c->state == HFT_SENDING ? hft_conn_write_more(c) : HFT_STEP_PENDING;
    if (s == HFT_STEP_PENDING && c->state == HFT_RECEIVING) s = hft_conn_read(c);
    uint64_t now = hft_ticks();
    if (s == HFT_STEP_PENDING && now - c->t_start > d->timeout_ticks) {
        hft_conn_close(c); /* the late answer must not be read as the next one's */
        c->fail = HB_ERR_TIMEOUT;
        s = HFT_STEP_FAILED;
    }
    if (s != HFT_STEP_PENDING) end_order(d, i, s, now);
}

/* Wait for (busy-poll: look at) the lanes in flight; advance the ready ones. */
static void poll_lanes(duet *d, unsigned iter) {
    if (d->ep < 0) { /* one lane, busy-polling: just read its connection */
        if (d->lane[0].at != LANE_IDLE) progress(d, 0);
        return;
    }
    struct epoll_event ev[MAX_EVENTS];
    int n = epoll_wait(d->ep, ev, MAX_EVENTS, d->busy ? 0 : SLEEP_MS);
    for (int e = 0; e < n; e++) {
        int i = (int)(ev[e].data.u32 / 2), side = (int)(ev[e].data.u32 % 2);
        if (d->lane[i].at == side) progress(d, i);
    }
    /* Partial writes and timeouts: look at every lane now and then. */
    if (n <= 0 || (iter & 255u) == 0)
        for (int i = 0; i < d->lanes; i++)
            if (d->lane[i].at != LANE_IDLE) progress(d, i);
}

/* Pairs [k, end) over the lanes, each lane one pair at a time, until all have ended. New pairs
   stop at the deadline (ticks) or a stop signal; those in flight end first. */
static uint64_t run_pairs(duet *d, uint64_t k, uint64_t end, uint64_t deadline, bool measured) {
    for (unsigned iter = 0;; iter++) {
        bool more = k < end && !hb_signal_stop_requested() && (deadline == UINT64_MAX || hft_ticks() < deadline);
        for (int i = 0; more && i < d->lanes && k < end; i++)
            if (d->lane[i].at == LANE_IDLE) {
                start_pair(d, i, k++, measured);
                if (measured) d->pairs++;
            }
        if (d->in_flight == 0) {
            if (!more) return k;
            continue;
        }
        poll_lanes(d, iter);
    }
}

/* Pin, tune, allocate, connect every lane to both sides; d->err says what failed. */
static void setup(duet *d) {
    hft_tuning_init(&d->tuning);
    hft_tune_thread(&d->tuning, d->opt->cpus.cpu[0], d->opt->rt_priority);
    hb_ts_cache_init(&d->ts);
    (void)prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL); /* epoll's wake-ups, as the runner's workers */
    size_t conns = (size_t)HFT_SIDES * (size_t)d->lanes;
    d->mem = hft_mem_alloc(sizeof(hft_conn) * conns + sizeof(lane) * (size_t)d->lanes, &d->mapped, &d->tuning);
    if (d->mem == NULL) {
        snprintf(d->err, sizeof d->err, "out of memory for the duet's %zu connections; pass fewer --connections", conns);
        return;
    }
    d->conn = d->mem; /* first: the mapping's alignment is the connections' */
    d->lane = (lane *)(d->conn + conns);
    static const char *const flag[HFT_SIDES] = {"--url", "--duet-url"};
    int bad_path = -1;
    for (size_t j = conns; j-- > 0;) /* all down (fd -1) before any can fail */
        if (hft_conn_init(&d->conn[j], d->cfg[j % 2]->url.order_path, d->cfg[j % 2]->url.hostport) != 0)
            bad_path = (int)(j % 2);
    for (int i = 0; i < d->lanes; i++) d->lane[i].at = LANE_IDLE;
    if (bad_path >= 0) {
        snprintf(d->err, sizeof d->err, "%s path too long (%.200s); pass a shorter %s", flag[bad_path],
                 d->cfg[bad_path]->url_text, flag[bad_path]);
        return;
    }
    if ((d->lanes > 1 || !d->busy) && (d->ep = epoll_create1(EPOLL_CLOEXEC)) < 0) {
        snprintf(d->err, sizeof d->err, "epoll_create1: %s; raise the open-files limit (ulimit -n)", strerror(errno));
        return;
    }
    for (size_t j = 0; j < conns; j++) {
        const hb_config *cfg = d->cfg[j % 2];
        if (hft_conn_connect(&d->conn[j], &cfg->url.addr, cfg->timeout_ms) != 0 || watch(d, (int)j) != 0) {
            snprintf(d->err, sizeof d->err, "cannot connect to %s (%s); start bin/hft-server or pass %s",
                     cfg->url.hostport, strerror(errno), flag[j % 2]);
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
    hft_pair_rng_init(&d->rng, cfg->seed);
    uint64_t k = run_pairs(d, 0, cfg->warmup, UINT64_MAX, false);
    begin_measure(d);
    uint64_t end = cfg->duration_s > 0 ? UINT64_MAX : k + cfg->orders;
    uint64_t deadline = cfg->duration_s > 0 ? d->measure_start + hft_ns_to_ticks(cfg->duration_s * 1e9) : UINT64_MAX;
    (void)run_pairs(d, k, end, deadline, true);
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
    for (int j = 0; d->conn != NULL && j < HFT_SIDES * d->lanes; j++) hft_conn_close(&d->conn[j]);
    if (d->ep >= 0) close(d->ep);
    hft_mem_free(d->mem, d->mapped);
}

int hft_duet_run(const hb_config *const cfg[HFT_SIDES], const hft_options *opt, FILE *hlog_b,
                 hft_outcome out[HFT_SIDES], uint64_t *pairs, char *err, size_t errlen) {
    memset(out, 0, sizeof(hft_outcome) * HFT_SIDES);
    duet d = {.cfg = cfg, .opt = opt, .out = out, .lanes = cfg[HFT_SIDE_A]->connections, .ep = -1};
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
