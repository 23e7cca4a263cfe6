/* hb_stats.c - see hb_stats.h. */
#include "hb_stats.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hb_interval.h"

const char *const HB_ERROR_KIND_NAMES[HB_ERR_KINDS] = {"connect", "timeout", "http_4xx", "http_5xx", "other"};

int hb_stats_init(hb_stats *s, bool open_loop)
{
    memset(s, 0, sizeof(*s));
    if (hdr_init(HB_HIST_LOWEST_NS, HB_HIST_HIGHEST_NS, HB_HIST_SIGFIGS, &s->latency) != 0) {
        return ENOMEM;
    }
    if (open_loop && (hdr_init(HB_HIST_LOWEST_NS, HB_HIST_HIGHEST_NS, HB_HIST_SIGFIGS, &s->uncorrected) != 0 ||
                      hdr_init(HB_HIST_LOWEST_NS, HB_HIST_HIGHEST_NS, HB_HIST_SIGFIGS, &s->lateness) != 0)) {
        hb_stats_close(s);
        return ENOMEM;
    }
    return 0;
}

void hb_stats_close(hb_stats *s)
{
    /* The vendored HdrHistogram_c has no hdr_close: hdr_init makes one malloc block. */
    free(s->latency);
    free(s->uncorrected);
    free(s->lateness);
    s->latency = NULL;
    s->uncorrected = NULL;
    s->lateness = NULL;
    if (s->intervals != NULL) {
        hb_interval_recorder_close(s->intervals);
        free(s->intervals);
        s->intervals = NULL;
    }
}

int hb_stats_enable_intervals(hb_stats *s)
{
    s->intervals = malloc(sizeof(*s->intervals));
    if (s->intervals == NULL || hb_interval_recorder_init(s->intervals, s->uncorrected != NULL) != 0) {
        free(s->intervals);
        s->intervals = NULL;
        return ENOMEM;
    }
    return 0;
}

static int64_t clamp_ns(int64_t v)
{
    if (v < HB_HIST_LOWEST_NS) {
        return HB_HIST_LOWEST_NS;
    }
    return v > HB_HIST_HIGHEST_NS ? HB_HIST_HIGHEST_NS : v;
}

void hb_stats_record_ok(hb_stats *s, int64_t latency_ns, int64_t uncorrected_ns)
{
    latency_ns = clamp_ns(latency_ns);
    uncorrected_ns = clamp_ns(uncorrected_ns);
    (void)hdr_record_value(s->latency, latency_ns);
    if (s->uncorrected != NULL) {
        (void)hdr_record_value(s->uncorrected, uncorrected_ns);
    }
    if (s->intervals != NULL) {
        hb_interval_record(s->intervals, latency_ns, uncorrected_ns);
    }
    s->ok++;
}

void hb_stats_record_lateness(hb_stats *s, int64_t lateness_ns)
{
    if (s->lateness == NULL) {
        return;
    }
    if (lateness_ns < 0) {
        lateness_ns = 0;
    }
    (void)hdr_record_value(s->lateness, lateness_ns > HB_HIST_HIGHEST_NS ? HB_HIST_HIGHEST_NS : lateness_ns);
}

void hb_stats_merge(hb_stats *into, const hb_stats *from)
{
    (void)hdr_add(into->latency, from->latency);
    if (into->uncorrected != NULL && from->uncorrected != NULL) {
        (void)hdr_add(into->uncorrected, from->uncorrected);
    }
    if (into->lateness != NULL && from->lateness != NULL) {
        (void)hdr_add(into->lateness, from->lateness);
    }
    into->ok += from->ok;
    for (int k = 0; k < HB_ERR_KINDS; k++) {
        into->errors[k] += from->errors[k];
    }
}

uint64_t hb_stats_error_total(const hb_stats *s)
{
    uint64_t total = 0;
    for (int k = 0; k < HB_ERR_KINDS; k++) {
        total += s->errors[k];
    }
    return total;
}

void hb_latency_from(const struct hdr_histogram *h, hb_latency *out)
{
    memset(out, 0, sizeof(*out));
    out->empty = h == NULL || h->total_count == 0;
    if (out->empty) {
        return;
    }
    /* hdr_min/hdr_max report the bucket's equivalent values, like every HdrHistogram port. */
    out->min = (double)hdr_min(h) / 1e3;
    out->mean = hdr_mean(h) / 1e3;
    out->stddev = hdr_stddev(h) / 1e3;
    out->p50 = (double)hdr_value_at_percentile(h, 50.0) / 1e3;
    out->p90 = (double)hdr_value_at_percentile(h, 90.0) / 1e3;
    out->p95 = (double)hdr_value_at_percentile(h, 95.0) / 1e3;
    out->p99 = (double)hdr_value_at_percentile(h, 99.0) / 1e3;
    out->p999 = (double)hdr_value_at_percentile(h, 99.9) / 1e3;
    out->p9999 = (double)hdr_value_at_percentile(h, 99.99) / 1e3;
    out->max = (double)hdr_max(h) / 1e3;
}

int hb_error_kind_of_status(long status)
{
    if (status == 200) {
        return -1;
    }
    if (status >= 400 && status < 500) {
        return HB_ERR_HTTP_4XX;
    }
    if (status >= 500 && status < 600) {
        return HB_ERR_HTTP_5XX;
    }
    return HB_ERR_OTHER;
}
