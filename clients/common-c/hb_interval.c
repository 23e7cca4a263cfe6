/* hb_interval.c - see hb_interval.h. */
#include "hb_interval.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "hb_clock.h"
#include "hb_stats.h"
#include "hdr_histogram_log.h"

static int new_histogram(struct hdr_histogram **h)
{
    return hdr_init(HB_HIST_LOWEST_NS, HB_HIST_HIGHEST_NS, HB_HIST_SIGFIGS, h) == 0 ? 0 : ENOMEM;
}

int hb_interval_recorder_init(hb_interval_recorder *r, bool open_loop)
{
    memset(r, 0, sizeof(*r));
    atomic_init(&r->start_epoch, 0);
    atomic_init(&r->even_end, 0);
    atomic_init(&r->odd_end, INT64_MIN);
    int rc = 0;
    for (int p = 0; p < 2 && rc == 0; p++) {
        rc = new_histogram(&r->latency[p]);
        if (rc == 0 && open_loop) {
            rc = new_histogram(&r->uncorrected[p]);
        }
    }
    if (rc != 0) {
        hb_interval_recorder_close(r);
    }
    return rc;
}

void hb_interval_recorder_close(hb_interval_recorder *r)
{
    for (int p = 0; p < 2; p++) {
        free(r->latency[p]); /* the vendored HdrHistogram_c: one malloc block, no hdr_close */
        free(r->uncorrected[p]);
        r->latency[p] = NULL;
        r->uncorrected[p] = NULL;
    }
}

int hb_interval_flip(hb_interval_recorder *r)
{
    /* WriterReaderPhaser.flipPhase: reset the new phase's end count, swap the start epoch,
     * then wait until every record that entered the old phase has left it. */
    bool next_even = atomic_load(&r->start_epoch) < 0;
    int64_t initial = next_even ? 0 : INT64_MIN;
    atomic_store(next_even ? &r->even_end : &r->odd_end, initial);
    int64_t at_flip = atomic_exchange(&r->start_epoch, initial);
    _Atomic int64_t *old_end = next_even ? &r->odd_end : &r->even_end;
    while (atomic_load(old_end) != at_flip) {
        sched_yield(); /* a record is a few ns: this almost never loops */
    }
    return next_even ? 1 : 0;
}

int hb_hlog_write_header(FILE *f, const char *prefix, const struct timespec *started_at)
{
    struct hdr_log_writer writer;
    /* The vendored hdr_log_write_header prints milliseconds without zero padding (5 ms ->
     * ".5"), so the header gets whole seconds, BaseTime says so, and the interval lines
     * carry the offset with "%.3f". */
    hdr_timespec base = {.tv_sec = started_at->tv_sec, .tv_nsec = 0};
    (void)hdr_log_writer_init(&writer);
    int rc = hdr_log_write_header(&writer, f, prefix, &base);
    if (rc != 0) {
        return rc;
    }
    (void)fprintf(f, "#[BaseTime: %lld.000 (seconds since epoch)]\n", (long long)base.tv_sec);
    return ferror(f) ? EIO : 0;
}

int hb_hlog_write_interval(FILE *f, const char *tag, double start_s, double length_s, struct hdr_histogram *h)
{
    char *encoded = NULL;
    int rc = hdr_log_encode(h, &encoded);
    if (rc != 0) {
        return rc;
    }
    if (tag != NULL) {
        (void)fprintf(f, "Tag=%s,", tag);
    }
    /* Interval_Max in ms for ns values: the standard tools' max_value_unit_ratio of 1e6. */
    (void)fprintf(f, "%.3f,%.3f,%.3f,%s\n", start_s, length_s, (double)hdr_max(h) / 1e6, encoded);
    free(encoded);
    return ferror(f) ? EIO : 0;
}

/* After the flip: merge the recorders' old phases, write the interval [start, end), reset. */
static void merge_write(hb_interval_log *log, uint64_t start_ns, uint64_t end_ns)
{
    for (int i = 0; i < log->n; i++) {
        hb_interval_recorder *r = log->recorders[i];
        int old = atomic_load(&r->start_epoch) < 0 ? 0 : 1; /* the phase before the flip */
        (void)hdr_add(log->latency, r->latency[old]);
        hdr_reset(r->latency[old]);
        if (log->uncorrected != NULL && r->uncorrected[old] != NULL) {
            (void)hdr_add(log->uncorrected, r->uncorrected[old]);
            hdr_reset(r->uncorrected[old]);
        }
    }
    double start_s = log->start_offset_s + (double)(start_ns - log->start_mono_ns) / 1e9;
    double length_s = (double)(end_ns - start_ns) / 1e9;
    int rc = hb_hlog_write_interval(log->hlog, NULL, start_s, length_s, log->latency);
    if (rc == 0 && log->uncorrected != NULL) {
        rc = hb_hlog_write_interval(log->hlog, "uncorrected", start_s, length_s, log->uncorrected);
    }
    if (rc == 0 && fflush(log->hlog) != 0) {
        rc = EIO;
    }
    if (log->rc == 0) {
        log->rc = rc;
    }
    hdr_reset(log->latency);
    if (log->uncorrected != NULL) {
        hdr_reset(log->uncorrected);
    }
    log->written++;
}

/* Flip every recorder of the log and of its peer (back to back: both sides' intervals end at
 * the same tick), then merge each log's old phases, write the interval [start, end), reset. */
static void write_interval(hb_interval_log *log, uint64_t start_ns, uint64_t end_ns)
{
    hb_interval_log *logs[2] = {log, log->peer};
    int n_logs = log->peer != NULL ? 2 : 1;
    for (int l = 0; l < n_logs; l++) {
        for (int i = 0; i < logs[l]->n; i++) {
            (void)hb_interval_flip(logs[l]->recorders[i]);
        }
    }
    for (int l = 0; l < n_logs; l++) {
        merge_write(logs[l], start_ns, end_ns);
    }
}

static struct timespec mono_timespec(uint64_t ns)
{
    return (struct timespec){.tv_sec = (time_t)(ns / 1000000000u), .tv_nsec = (long)(ns % 1000000000u)};
}

static void *collector_main(void *arg)
{
    hb_interval_log *log = arg;
    (void)pthread_mutex_lock(&log->mu);
    while (!log->begun && !log->stopping) {
        (void)pthread_cond_wait(&log->wake, &log->mu);
    }
    while (log->begun && !log->stopping) {
        uint64_t start_ns = log->start_mono_ns + log->written * log->interval_ns;
        uint64_t end_ns = start_ns + log->interval_ns;
        struct timespec until = mono_timespec(end_ns);
        while (!log->stopping && hb_now_ns() < end_ns) {
            (void)pthread_cond_timedwait(&log->wake, &log->mu, &until);
        }
        if (log->stopping) {
            break;
        }
        (void)pthread_mutex_unlock(&log->mu);
        write_interval(log, start_ns, end_ns);
        (void)pthread_mutex_lock(&log->mu);
    }
    (void)pthread_mutex_unlock(&log->mu);
    return NULL;
}

/* The histograms and settings of a log, no thread. @return 0 or ENOMEM (nothing kept). */
static int log_init(hb_interval_log *log, uint64_t interval_ns, bool open_loop, FILE *hlog)
{
    memset(log, 0, sizeof(*log));
    log->interval_ns = interval_ns;
    log->hlog = hlog;
    int rc = new_histogram(&log->latency);
    if (rc == 0 && open_loop) {
        rc = new_histogram(&log->uncorrected);
    }
    if (rc != 0) {
        free(log->latency);
        log->latency = NULL;
    }
    return rc;
}

int hb_interval_log_start_peer(hb_interval_log *peer, hb_interval_log *leader, FILE *hlog)
{
    int rc = log_init(peer, leader->interval_ns, leader->uncorrected != NULL, hlog);
    if (rc == 0) {
        peer->is_peer = true;
        leader->peer = peer;
    }
    return rc;
}

int hb_interval_log_start(hb_interval_log *log, double interval_s, bool open_loop, FILE *hlog)
{
    int rc = log_init(log, (uint64_t)(interval_s * 1e9), open_loop, hlog);
    pthread_condattr_t attr;
    bool cond_made = false, mu_made = false;
    if (rc == 0 && (rc = pthread_condattr_init(&attr)) == 0) {
        (void)pthread_condattr_setclock(&attr, CLOCK_MONOTONIC); /* hb_now_ns's clock */
        cond_made = (rc = pthread_cond_init(&log->wake, &attr)) == 0;
        (void)pthread_condattr_destroy(&attr);
    }
    if (rc == 0) {
        mu_made = (rc = pthread_mutex_init(&log->mu, NULL)) == 0;
    }
    if (rc == 0) {
        log->thread_started = (rc = pthread_create(&log->thread, NULL, collector_main, log)) == 0;
    }
    if (rc != 0) {
        if (cond_made) {
            (void)pthread_cond_destroy(&log->wake);
        }
        if (mu_made) {
            (void)pthread_mutex_destroy(&log->mu);
        }
        free(log->latency);
        free(log->uncorrected);
        log->latency = log->uncorrected = NULL;
    }
    return rc;
}

void hb_interval_log_begin(hb_interval_log *log, hb_interval_recorder **recorders, int n, const char *prefix,
                           const struct timespec *started_at, uint64_t start_mono_ns)
{
    int rc = hb_hlog_write_header(log->hlog, prefix, started_at);
    if (log->is_peer) { /* no thread: the leader's begin (after this one) publishes these fields */
        log->recorders = recorders;
        log->n = n;
        log->rc = rc;
        log->start_mono_ns = start_mono_ns;
        log->start_offset_s = (double)started_at->tv_nsec / 1e9;
        log->begun = true;
        return;
    }
    (void)pthread_mutex_lock(&log->mu);
    log->recorders = recorders;
    log->n = n;
    log->rc = rc;
    log->start_mono_ns = start_mono_ns;
    log->start_offset_s = (double)started_at->tv_nsec / 1e9;
    log->begun = true;
    (void)pthread_cond_signal(&log->wake);
    (void)pthread_mutex_unlock(&log->mu);
}

int hb_interval_log_stop(hb_interval_log *log)
{
    if (log->is_peer) {
        free(log->latency);
        free(log->uncorrected);
        log->latency = log->uncorrected = NULL;
        return log->rc;
    }
    if (!log->thread_started) {
        return log->rc;
    }
    (void)pthread_mutex_lock(&log->mu);
    log->stopping = true;
    (void)pthread_cond_signal(&log->wake);
    (void)pthread_mutex_unlock(&log->mu);
    (void)pthread_join(log->thread, NULL);
    log->thread_started = false;
    if (log->begun) { /* the open interval, up to now: the workers have been joined */
        uint64_t start_ns = log->start_mono_ns + log->written * log->interval_ns;
        uint64_t now = hb_now_ns();
        write_interval(log, start_ns, now > start_ns ? now : start_ns);
    }
    (void)pthread_cond_destroy(&log->wake);
    (void)pthread_mutex_destroy(&log->mu);
    free(log->latency);
    free(log->uncorrected);
    log->latency = log->uncorrected = NULL;
    return log->rc;
}
