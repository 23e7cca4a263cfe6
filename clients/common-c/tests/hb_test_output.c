/* hb_test_output.c - unit tests of what the hb_ library writes: the result JSON, and the
 * interval recorder and its HdrHistogram log. Run by hb_test.c. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hb_clock.h"
#include "hb_interval.h"
#include "hb_result.h"
#include "hb_stats.h"
#include "hb_test.h"
/* ---- result ---- */

static char *render(const hb_run *run, const hb_stats *s, int (*writer)(FILE *, const hb_run *, const hb_stats *))
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    CHECK(f != NULL && writer(f, run, s) == 0, "render");
    (void)fclose(f);
    return text;
}

void test_result(void)
{
    hb_config cfg;
    hb_stats s;
    hb_config_defaults(&cfg);
    (void)snprintf(cfg.scenario, sizeof(cfg.scenario), "%s", "we\"ird");
    hb_kv extra[] = {{"workers", "2"}, {"libcurl", "\"7.88.1\""}};
    hb_run run = {.client = "c", .client_version = "0.1.0", .cfg = &cfg,
                  .started_at = {.tv_sec = 1795341600, .tv_nsec = 5000000}, .duration_s = 2.0,
                  .interrupted = true, .extra = extra, .n_extra = 2};
    CHECK(hb_stats_init(&s, false) == 0, "init");
    hb_stats_record_ok(&s, 100000, 0);
    hb_stats_record_error(&s, HB_ERR_CONNECT);
    char *json = render(&run, &s, hb_result_write_json);
    CHECK(strstr(json, "\"scenario\": \"we\\\"ird\"") != NULL, "escaped scenario: %s", json);
    CHECK(strstr(json, "\"orders\": 2,") != NULL && strstr(json, "\"throughput_rps\": 0.500,") != NULL, "%s", json);
    CHECK(strstr(json, "\"started_at\": \"2026-11-22T10:00:00.005000Z\"") != NULL, "%s", json);
    CHECK(strstr(json, "\"p50\": 100.") != NULL && strstr(json, "\"data\": \"HISTF") != NULL, "%s", json);
    CHECK(strstr(json, "\"mode\": \"closed\"") != NULL && strstr(json, "uncorrected") == NULL, "%s", json);
    CHECK(strstr(json, "send_lateness") == NULL, "closed loop: no lateness: %s", json);
    CHECK(strstr(json, "\"interrupted\": true") != NULL && strstr(json, "\"libcurl\": \"7.88.1\"") != NULL, "%s",
          json);
    free(json);
    char *hlog = render(&run, &s, hb_result_write_hlog);
    CHECK(strstr(hlog, "#[StartTime: 1795341600.0 ") != NULL && strstr(hlog, "#[BaseTime: 1795341600.000") != NULL,
          "%s", hlog);
    CHECK(strstr(hlog, "\n0.005,2.000,0.100,HISTF") != NULL && strstr(hlog, "Tag=") == NULL, "%s", hlog);
    free(hlog);
    hb_stats_close(&s);

    cfg.rate = 1000;
    CHECK(hb_stats_init(&s, true) == 0, "init open");
    hb_stats_record_ok(&s, 300000, 100000);
    hb_stats_record_lateness(&s, 4000);
    json = render(&run, &s, hb_result_write_json);
    CHECK(strstr(json, "\"send_lateness_us\": {\"min\": 4.000, ") != NULL, "%s", json);
    CHECK(strstr(json, "\"send_lateness_histogram\": {\"format\": \"hdr-v2-deflate-base64\", \"unit\": \"ns\", "
                       "\"data\": \"HISTF") != NULL, "%s", json);
    CHECK(strstr(json, "\"target_rate_rps\": 1000,") != NULL && strstr(json, "\"uncorrected_histogram\"") != NULL,
          "%s", json);
    free(json);
    hlog = render(&run, &s, hb_result_write_hlog);
    CHECK(strstr(hlog, "\nTag=uncorrected,0.005,2.000,0.100,HISTF") != NULL, "%s", hlog);
    free(hlog);
    hb_stats_close(&s);

    char path[64];
    hb_result_hlog_path("out/r.json", path, sizeof(path));
    CHECK(strcmp(path, "out/r.hlog") == 0, "%s", path);
    hb_result_hlog_path("out/r.txt", path, sizeof(path));
    CHECK(strcmp(path, "out/r.txt.hlog") == 0, "%s", path);
}


/* ---- intervals ---- */

#define WRITER_RECORDS 200000

static void *write_many(void *arg)
{
    hb_stats *s = arg;
    for (int i = 0; i < WRITER_RECORDS; i++) {
        hb_stats_record_ok(s, 1000 + i % 5000, 500);
    }
    return NULL;
}

void test_intervals(void)
{
    hb_interval_recorder r;
    CHECK(hb_interval_recorder_init(&r, true) == 0, "init");
    hb_interval_record(&r, 1000, 900);
    hb_interval_record(&r, 2000, 1900);
    int old = hb_interval_flip(&r);
    CHECK(r.latency[old]->total_count == 2 && r.uncorrected[old]->total_count == 2, "first phase holds both");
    hb_interval_record(&r, 3000, 2900);
    CHECK(r.latency[old]->total_count == 2 && r.latency[1 - old]->total_count == 1, "the next goes to the other");
    int again = hb_interval_flip(&r);
    CHECK(again == 1 - old && r.latency[again]->total_count == 1, "the second flip hands over the second phase");
    hb_interval_recorder_close(&r);

    /* A writer thread records while this thread flips: every record lands in exactly one
     * interval, none is lost or counted twice. */
    hb_stats s;
    CHECK(hb_stats_init(&s, false) == 0 && hb_stats_enable_intervals(&s) == 0, "stats with intervals");
    struct hdr_histogram *seen = NULL;
    CHECK(hdr_init(HB_HIST_LOWEST_NS, HB_HIST_HIGHEST_NS, HB_HIST_SIGFIGS, &seen) == 0, "histogram");
    pthread_t writer;
    CHECK(pthread_create(&writer, NULL, write_many, &s) == 0, "writer");
    int flips = 0;
    while (seen->total_count < WRITER_RECORDS && flips < 10000000) {
        int p = hb_interval_flip(s.intervals);
        (void)hdr_add(seen, s.intervals->latency[p]);
        hdr_reset(s.intervals->latency[p]);
        flips++;
    }
    (void)pthread_join(writer, NULL);
    int p = hb_interval_flip(s.intervals);
    (void)hdr_add(seen, s.intervals->latency[p]);
    CHECK(seen->total_count == WRITER_RECORDS && s.latency->total_count == WRITER_RECORDS,
          "%lld of %d records over %d flips", (long long)seen->total_count, WRITER_RECORDS, flips);
    CHECK(hdr_max(seen) == hdr_max(s.latency), "intervals and the whole run agree");
    free(seen);

    /* The log: header, then one line per interval; stop writes the open one. */
    FILE *f = tmpfile();
    hb_interval_log log;
    CHECK(f != NULL && hb_interval_log_start(&log, 3600, false, f) == 0, "log start");
    hb_interval_recorder *recs[1] = {s.intervals};
    struct timespec wall = {.tv_sec = 1795000000, .tv_nsec = 250000000};
    hb_interval_log_begin(&log, recs, 1, "Logged with hb_test", &wall, hb_now_ns());
    hb_stats_record_ok(&s, 5000, 0);
    hb_stats_record_ok(&s, 7000, 0);
    CHECK(hb_interval_log_begun(&log) && hb_interval_log_stop(&log) == 0, "log stop");
    char text[4096] = "";
    rewind(f);
    size_t n = fread(text, 1, sizeof(text) - 1, f);
    text[n] = '\0';
    CHECK(strstr(text, "#[StartTime: 1795000000") != NULL && strstr(text, "#[BaseTime: 1795000000.000") != NULL,
          "header: %s", text);
    CHECK(strstr(text, "\n0.250,") != NULL && strstr(text, ",0.007,HISTF") != NULL,
          "one interval from 0.250 s, max 7 us: %s", text);
    (void)fclose(f);

    /* A duet: the leader's collector also writes its peer's .hlog, the same intervals. */
    hb_stats b;
    CHECK(hb_stats_init(&b, false) == 0 && hb_stats_enable_intervals(&b) == 0, "peer stats");
    FILE *fa = tmpfile(), *fb = tmpfile();
    hb_interval_log la, lb;
    CHECK(fa != NULL && fb != NULL && hb_interval_log_start(&la, 3600, false, fa) == 0 &&
              hb_interval_log_start_peer(&lb, &la, fb) == 0, "duet logs start");
    hb_interval_recorder *recs_b[1] = {b.intervals};
    uint64_t t0 = hb_now_ns();
    hb_interval_log_begin(&lb, recs_b, 1, "Logged with hb_test", &wall, t0);
    hb_interval_log_begin(&la, recs, 1, "Logged with hb_test", &wall, t0);
    hb_stats_record_ok(&s, 3000, 0);
    hb_stats_record_ok(&b, 9000, 0);
    CHECK(hb_interval_log_stop(&la) == 0 && hb_interval_log_stop(&lb) == 0, "duet logs stop");
    char ta[4096] = "", tb[4096] = "";
    rewind(fa);
    ta[fread(ta, 1, sizeof(ta) - 1, fa)] = '\0';
    rewind(fb);
    tb[fread(tb, 1, sizeof(tb) - 1, fb)] = '\0';
    const char *line_a = strstr(ta, "\n0.250,"), *line_b = strstr(tb, "\n0.250,");
    CHECK(line_a != NULL && line_b != NULL && strstr(ta, ",0.003,HISTF") != NULL && strstr(tb, ",0.009,HISTF") != NULL,
          "each side's own record: %s / %s", ta, tb);
    /* "start,length," of the one interval: the same span on both sides. */
    CHECK(line_a != NULL && line_b != NULL && strncmp(line_a, line_b, 13) == 0, "same interval: %s / %s", ta, tb);
    (void)fclose(fa);
    (void)fclose(fb);
    hb_stats_close(&b);
    hb_stats_close(&s);
}
