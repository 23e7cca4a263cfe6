/**
 * hb_stats.h - the per-worker record of a run and the statistics computed from it.
 *
 * Each worker owns one hb_stats and records into it without locks; after join the
 * records are merged with hb_stats_merge, and hb_latency_from computes the result's
 * latency fields from the merged histogram (pure, tested).
 */
#ifndef HB_STATS_H
#define HB_STATS_H

#include <stdbool.h>
#include <stdint.h>

#include "hdr_histogram.h"

#ifdef __cplusplus
extern "C" {
#endif

/* hb_interval.h (C only: it uses C11 atomics); the C++ client sees the pointer. */
struct hb_interval_recorder;

#define HB_HIST_LOWEST_NS 1
#define HB_HIST_HIGHEST_NS INT64_C(60000000000) /* 60 s */
#define HB_HIST_SIGFIGS 3

/** The error kinds of Contract 3, in the order the result lists them. */
typedef enum hb_error_kind {
    HB_ERR_CONNECT = 0, /* refused / reset while connecting / DNS */
    HB_ERR_TIMEOUT,     /* no full answer within --timeout-ms */
    HB_ERR_HTTP_4XX,
    HB_ERR_HTTP_5XX,
    HB_ERR_OTHER,       /* broken connection mid-answer, malformed response, other status */
    HB_ERR_KINDS
} hb_error_kind;

extern const char *const HB_ERROR_KIND_NAMES[HB_ERR_KINDS];

typedef struct hb_stats {
    struct hdr_histogram *latency;     /* ns; from the intended send time in open loop, else the send */
    struct hdr_histogram *uncorrected; /* ns; open loop only: from the actual send; NULL in closed loop */
    struct hdr_histogram *lateness;    /* ns; open loop only: actual send - intended send; NULL in closed loop */
    uint64_t ok;                       /* measured orders answered with HTTP 200 */
    uint64_t errors[HB_ERR_KINDS];     /* measured orders failed, by kind */
    struct hb_interval_recorder *intervals;   /* --interval-s: the same orders per interval; NULL without */
} hb_stats;

/** @return 0, or ENOMEM. open_loop also allocates the uncorrected and lateness histograms. */
int hb_stats_init(hb_stats *s, bool open_loop);
void hb_stats_close(hb_stats *s);

/** --interval-s: also record into an interval recorder (freed by hb_stats_close). @return 0 or ENOMEM. */
int hb_stats_enable_intervals(hb_stats *s);

/** Record one successful order. Values are clamped into 1 ns .. 60 s. */
void hb_stats_record_ok(hb_stats *s, int64_t latency_ns, int64_t uncorrected_ns);

/**
 * Open loop: record one measured order's send lateness (actual send - intended send), once
 * per measured order sent, whatever its answer. Clamped into 0 .. 60 s (a send is never
 * early: a negative value is a clock quirk and counts as 0). No-op in closed loop.
 */
void hb_stats_record_lateness(hb_stats *s, int64_t lateness_ns);

static inline void hb_stats_record_error(hb_stats *s, hb_error_kind kind) { s->errors[kind]++; }

/** Add from into into (every histogram both have, counters). */
void hb_stats_merge(hb_stats *into, const hb_stats *from);

uint64_t hb_stats_error_total(const hb_stats *s);

/** Latency fields of the result, in microseconds. */
typedef struct hb_latency {
    bool empty; /* no sample: every field is written as null */
    double min, mean, stddev, p50, p90, p95, p99, p999, p9999, max;
} hb_latency;

/** Compute the result's latency fields from a histogram in nanoseconds. */
void hb_latency_from(const struct hdr_histogram *h, hb_latency *out);

/** Map an HTTP status (or 0 for a transport failure already classified) to a kind; -1 = 200 OK. */
int hb_error_kind_of_status(long status);

#ifdef __cplusplus
}
#endif
#endif
