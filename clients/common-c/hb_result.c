/* hb_result.c - see hb_result.h. */
#include "hb_result.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "hb_clock.h"
#include "hb_interval.h"
#include "hdr_histogram_log.h"

/* A JSON string literal, escaped. */
static void put_json_string(FILE *f, const char *s)
{
    (void)fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p != '\0'; p++) {
        if (*p == '"' || *p == '\\') {
            (void)fprintf(f, "\\%c", *p);
        } else if (*p < 0x20) {
            (void)fprintf(f, "\\u%04x", *p);
        } else {
            (void)fputc(*p, f);
        }
    }
    (void)fputc('"', f);
}

static void put_us(FILE *f, const char *key, double v, bool empty, bool last)
{
    if (empty) {
        (void)fprintf(f, "\"%s\": null%s", key, last ? "" : ", ");
    } else {
        (void)fprintf(f, "\"%s\": %.3f%s", key, v, last ? "" : ", ");
    }
}

static void put_latency(FILE *f, const char *name, const struct hdr_histogram *h)
{
    hb_latency l;
    hb_latency_from(h, &l);
    (void)fprintf(f, "  \"%s\": {", name);
    put_us(f, "min", l.min, l.empty, false);
    put_us(f, "mean", l.mean, l.empty, false);
    put_us(f, "stddev", l.stddev, l.empty, false);
    put_us(f, "p50", l.p50, l.empty, false);
    put_us(f, "p90", l.p90, l.empty, false);
    put_us(f, "p95", l.p95, l.empty, false);
    put_us(f, "p99", l.p99, l.empty, false);
    put_us(f, "p999", l.p999, l.empty, false);
    put_us(f, "p9999", l.p9999, l.empty, false);
    put_us(f, "max", l.max, l.empty, true);
    (void)fprintf(f, "},\n");
}

static int put_histogram(FILE *f, const char *name, struct hdr_histogram *h)
{
    char *encoded = NULL;
    int rc = hdr_log_encode(h, &encoded);
    if (rc != 0) {
        return rc;
    }
    (void)fprintf(f, "  \"%s\": {\"format\": \"hdr-v2-deflate-base64\", \"unit\": \"ns\", \"data\": \"%s\"},\n",
                  name, encoded);
    free(encoded);
    return 0;
}

int hb_result_write_json(FILE *f, const hb_run *run, const hb_stats *merged)
{
    const hb_config *cfg = run->cfg;
    bool open_loop = hb_config_open_loop(cfg);
    uint64_t errors = hb_stats_error_total(merged);
    char started[40];
    hb_format_rfc3339(&run->started_at, started, sizeof(started));

    (void)fprintf(f, "{\n  \"schema_version\": %d,\n  \"client\": ", HB_SCHEMA_VERSION);
    put_json_string(f, run->client);
    (void)fprintf(f, ",\n  \"client_version\": ");
    put_json_string(f, run->client_version);
    (void)fprintf(f, ",\n  \"scenario\": ");
    put_json_string(f, cfg->scenario);
    (void)fprintf(f, ",\n  \"mode\": \"%s\",\n", open_loop ? "open" : "closed");
    if (open_loop) {
        (void)fprintf(f, "  \"target_rate_rps\": %.10g,\n", cfg->rate);
    } else {
        (void)fprintf(f, "  \"target_rate_rps\": null,\n");
    }
    (void)fprintf(f,
                  "  \"orders\": %" PRIu64 ",\n  \"connections\": %d,\n  \"warmup\": %" PRIu64
                  ",\n  \"seed\": %" PRIu64 ",\n  \"started_at\": \"%s\",\n  \"duration_s\": %.6f,\n",
                  merged->ok + errors, cfg->connections, cfg->warmup, cfg->seed, started, run->duration_s);
    (void)fprintf(f, "  \"ok\": %" PRIu64 ",\n  \"errors\": %" PRIu64 ",\n  \"error_kinds\": {", merged->ok, errors);
    for (int k = 0; k < HB_ERR_KINDS; k++) {
        (void)fprintf(f, "\"%s\": %" PRIu64 "%s", HB_ERROR_KIND_NAMES[k], merged->errors[k],
                      k + 1 < HB_ERR_KINDS ? ", " : "},\n");
    }
    double throughput = run->duration_s > 0 ? (double)merged->ok / run->duration_s : 0.0;
    (void)fprintf(f, "  \"throughput_rps\": %.3f,\n", throughput);
    put_latency(f, "latency_us", merged->latency);
    int rc = put_histogram(f, "histogram", merged->latency);
    if (rc == 0 && open_loop && merged->uncorrected != NULL) {
        put_latency(f, "uncorrected_latency_us", merged->uncorrected);
        rc = put_histogram(f, "uncorrected_histogram", merged->uncorrected);
    }
    if (rc == 0 && open_loop && merged->lateness != NULL) {
        put_latency(f, "send_lateness_us", merged->lateness);
        rc = put_histogram(f, "send_lateness_histogram", merged->lateness);
    }
    if (rc != 0) {
        return rc;
    }
    if (run->interrupted) {
        (void)fprintf(f, "  \"interrupted\": true,\n");
    }
    (void)fprintf(f, "  \"extra\": {");
    for (size_t i = 0; i < run->n_extra; i++) {
        (void)fprintf(f, "%s", i == 0 ? "\n    " : ",\n    ");
        put_json_string(f, run->extra[i].key);
        (void)fprintf(f, ": %s", run->extra[i].json);
    }
    (void)fprintf(f, "%s}\n}\n", run->n_extra > 0 ? "\n  " : "");
    return ferror(f) ? EIO : 0;
}

int hb_result_write_hlog(FILE *f, const hb_run *run, const hb_stats *merged)
{
    if (run->intervals_logged) { /* hb_interval_log wrote the header and every interval */
        return ferror(f) ? EIO : 0;
    }
    char prefix[96];
    hb_hlog_prefix(run->client, run->client_version, prefix, sizeof(prefix));
    int rc = hb_hlog_write_header(f, prefix, &run->started_at);
    double offset_s = (double)run->started_at.tv_nsec / 1e9;
    if (rc == 0) {
        rc = hb_hlog_write_interval(f, NULL, offset_s, run->duration_s, merged->latency);
    }
    if (rc == 0 && hb_config_open_loop(run->cfg) && merged->uncorrected != NULL) {
        rc = hb_hlog_write_interval(f, "uncorrected", offset_s, run->duration_s, merged->uncorrected);
    }
    if (rc != 0) {
        return rc;
    }
    return ferror(f) ? EIO : 0;
}

void hb_hlog_prefix(const char *client, const char *version, char *out, size_t cap)
{
    (void)snprintf(out, cap, "Logged with hft-bench client-%s %s", client, version);
}

void hb_result_hlog_path(const char *json_path, char *out, size_t cap)
{
    size_t n = strlen(json_path);
    if (n >= 5 && strcmp(json_path + n - 5, ".json") == 0) {
        (void)snprintf(out, cap, "%.*s.hlog", (int)(n - 5), json_path);
    } else {
        (void)snprintf(out, cap, "%s.hlog", json_path);
    }
}

int hb_result_open(hb_result_out *out, const hb_config *cfg, char *err, size_t errlen)
{
    memset(out, 0, sizeof(*out));
    if (cfg->output[0] == '\0') {
        out->json = stdout;
        return 0;
    }
    out->json = fopen(cfg->output, "w");
    if (out->json == NULL) {
        (void)snprintf(err, errlen, "cannot write --output %s (%s); pass a path in a writable folder", cfg->output,
                       strerror(errno));
        return -1;
    }
    hb_result_hlog_path(cfg->output, out->hlog_path, sizeof(out->hlog_path));
    out->hlog = fopen(out->hlog_path, "w");
    if (out->hlog == NULL) {
        (void)snprintf(err, errlen, "cannot write %s beside --output (%s); pass a path in a writable folder",
                       out->hlog_path, strerror(errno));
        (void)fclose(out->json);
        out->json = NULL;
        return -1;
    }
    return 0;
}

static const char *describe(int rc) { return rc == EIO || rc == ENOMEM ? strerror(rc) : hdr_strerror(rc); }

int hb_result_write(hb_result_out *out, const hb_run *run, const hb_stats *merged, char *err, size_t errlen)
{
    int rc = hb_result_write_json(out->json, run, merged);
    if (rc == 0 && fflush(out->json) != 0) {
        rc = EIO;
    }
    if (rc != 0) {
        (void)snprintf(err, errlen, "writing the result failed (%s); check the disk and --output", describe(rc));
    } else if (out->hlog != NULL && (rc = hb_result_write_hlog(out->hlog, run, merged)) != 0) {
        (void)snprintf(err, errlen, "writing %s failed (%s); check the disk and --output", out->hlog_path,
                       describe(rc));
    }
    hb_result_close(out);
    return rc == 0 ? 0 : -1;
}

void hb_result_close(hb_result_out *out)
{
    if (out->json != NULL && out->json != stdout) {
        (void)fclose(out->json);
    }
    if (out->hlog != NULL) {
        (void)fclose(out->hlog);
    }
    out->json = NULL;
    out->hlog = NULL;
}

int hb_result_exit_code(const hb_stats *merged) { return hb_stats_error_total(merged) == 0 ? 0 : 1; }
