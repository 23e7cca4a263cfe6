/**
 * hb_interval.h - per-interval histograms for the .hlog (--interval-s), without a lock on
 * the hot path.
 *
 * Each worker owns one hb_interval_recorder: two histograms (one per phase) and the epoch
 * counters of HdrHistogram's WriterReaderPhaser. A record is two uncontended atomic adds
 * around hdr_record_value into the active phase's histogram; it never allocates, locks or
 * logs. One collector thread (hb_interval_log) wakes every interval, flips each recorder's
 * phase, waits for any record still in the old phase to leave it, merges the old phase's
 * histograms, writes one interval line to the .hlog, and resets them. A soak thus leaves
 * its intervals on disk as they close: a killed client loses at most the open interval.
 */
#ifndef HB_INTERVAL_H
#define HB_INTERVAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "hdr_histogram.h"

#ifdef __cplusplus
extern "C" {
#endif

/** One worker's interval histograms; written by that worker only, read by the collector. */
typedef struct hb_interval_recorder {
    _Atomic int64_t start_epoch; /* records entered; the sign bit is the phase (set = odd) */
    _Atomic int64_t even_end;    /* records finished in the even phase */
    _Atomic int64_t odd_end;     /* records finished in the odd phase (counts up from INT64_MIN) */
    struct hdr_histogram *latency[2];     /* [phase]: ns, as hb_stats.latency */
    struct hdr_histogram *uncorrected[2]; /* [phase]: open loop only, else NULL */
} hb_interval_recorder;

/** @return 0, or ENOMEM. */
int hb_interval_recorder_init(hb_interval_recorder *r, bool open_loop);
void hb_interval_recorder_close(hb_interval_recorder *r);

/** Record one order (values already clamped), from the owning worker. */
static inline void hb_interval_record(hb_interval_recorder *r, int64_t latency_ns, int64_t uncorrected_ns)
{
    int64_t entered = atomic_fetch_add(&r->start_epoch, 1);
    int phase = entered < 0;
    (void)hdr_record_value(r->latency[phase], latency_ns);
    if (r->uncorrected[phase] != NULL) {
        (void)hdr_record_value(r->uncorrected[phase], uncorrected_ns);
    }
    (void)atomic_fetch_add(phase ? &r->odd_end : &r->even_end, 1);
}

/**
 * Collector side: start a new phase and wait until no record is left in the old one.
 * @return the old phase (0 or 1); its histograms are the collector's until the next flip.
 */
int hb_interval_flip(hb_interval_recorder *r);

/** The collector: one thread writing one .hlog interval line per interval. */
typedef struct hb_interval_log {
    hb_interval_recorder **recorders; /* one per worker, owned by the caller */
    int n;
    uint64_t interval_ns;             /* --interval-s */
    FILE *hlog;                       /* the .hlog, header already written by hb_interval_log_begin */
    struct hdr_histogram *latency;    /* the merged interval being written */
    struct hdr_histogram *uncorrected;
    uint64_t start_mono_ns;           /* hb_now_ns() of the measured phase's start */
    double start_offset_s;            /* that start after the header's whole-second BaseTime */
    uint64_t written;                 /* intervals written so far */
    int rc;                           /* first write error (errno / HdrHistogram code), 0 when fine */
    bool begun, stopping;
    struct hb_interval_log *peer;     /* a duet's other side: closed by this collector at the same ticks; NULL */
    bool is_peer;                     /* this log has no thread: its leader's collector writes it */
    pthread_mutex_t mu;               /* guards begun/stopping for the condition variable only */
    pthread_cond_t wake;
    pthread_t thread;
    bool thread_started;
} hb_interval_log;

/**
 * Start the collector thread; it waits for hb_interval_log_begin. @return 0, or an errno
 * (ENOMEM, EAGAIN) with nothing started.
 */
int hb_interval_log_start(hb_interval_log *log, double interval_s, bool open_loop, FILE *hlog);

/**
 * A duet's second log (another .hlog, other recorders) that has no thread of its own: the
 * collector of leader (started, not yet begun) closes both logs' intervals at the same tick,
 * flipping every recorder of both before it merges and writes either, so interval i of the
 * two files covers the same span. Begin the peer before the leader; stop the leader (it
 * writes both last intervals) before the peer. @return 0, or ENOMEM with nothing kept.
 */
int hb_interval_log_start_peer(hb_interval_log *peer, hb_interval_log *leader, FILE *hlog);

/**
 * The measured phase starts (or started) at start_mono_ns on hb_now_ns()'s clock and at
 * started_at on the wall clock: write the .hlog header (prefix is its comment) and let the
 * collector read the workers' recorders (the caller's array, alive until stop) every
 * interval from there. Called once, by whoever starts the measured phase.
 */
void hb_interval_log_begin(hb_interval_log *log, hb_interval_recorder **recorders, int n, const char *prefix,
                           const struct timespec *started_at, uint64_t start_mono_ns);

/** Whether begin was called: the .hlog then holds the header and the intervals. */
static inline bool hb_interval_log_begun(const hb_interval_log *log) { return log->begun; }

/**
 * The workers have stopped (joined): write the last, partial interval and end the thread
 * (a peer's: only free it; its leader's stop wrote its last interval).
 * @return 0, or the first write error (an errno or HdrHistogram code).
 */
int hb_interval_log_stop(hb_interval_log *log);

/** Write the .hlog header (comment, StartTime, BaseTime, legend). @return 0 or an error code. */
int hb_hlog_write_header(FILE *f, const char *prefix, const struct timespec *started_at);

/** One interval line in the Java/Python format: [Tag=T,]start,length,max,histogram. */
int hb_hlog_write_interval(FILE *f, const char *tag, double start_s, double length_s, struct hdr_histogram *h);

#ifdef __cplusplus
}
#endif
#endif
