/* hft_app.c - flags, run and result of the HFT binaries (see hft_app.h). */
#include "hft_app.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hb_signal.h"
#include "hdr_histogram_log.h"
#include "hft_clock.h"

#define CALIBRATION_MS 50

static int opt_cpus(void *ctx, const char *v, char *err, size_t errlen) {
    hft_app *app = ctx;
    app->cpus_given = 1;
    return hft_cpus_parse(v, &app->opt.cpus, err, errlen);
}

static int opt_rt(void *ctx, const char *v, char *err, size_t errlen) {
    hft_app *app = ctx;
    char *end;
    long n = strtol(v, &end, 10);
    if (*v == '\0' || *end != '\0' || n < 1 || n > 99) {
        snprintf(err, errlen, "--rt-priority must be an integer 1..99 (got \"%s\"); pass e.g. --rt-priority 10", v);
        return -1;
    }
    app->opt.rt_priority = (int)n;
    return 0;
}

static int opt_strict(void *ctx, const char *v, char *err, size_t errlen) {
    (void)v, (void)err, (void)errlen;
    ((hft_app *)ctx)->opt.strict = true;
    return 0;
}

static int opt_busy(void *ctx, const char *v, char *err, size_t errlen) {
    (void)v, (void)err, (void)errlen;
    ((hft_app *)ctx)->opt.poll = HFT_POLL_BUSY;
    return 0;
}

static int opt_no_busy(void *ctx, const char *v, char *err, size_t errlen) {
    (void)v, (void)err, (void)errlen;
    ((hft_app *)ctx)->opt.poll = HFT_POLL_SLEEP;
    return 0;
}

static int opt_interval(void *ctx, const char *v, char *err, size_t errlen) {
    hft_app *app = ctx;
    char *end;
    double s = strtod(v, &end);
    if (*v == '\0' || *end != '\0' || !(s >= 0.1 && s <= 3600)) {
        snprintf(err, errlen, "--interval-s must be seconds 0.1..3600 (got \"%s\"); pass e.g. --interval-s 10", v);
        return -1;
    }
    app->opt.interval_s = s;
    return 0;
}

void hft_app_init(hft_app *app, const char *client, const char *prog) {
    memset(app, 0, sizeof *app);
    app->client = client;
    app->prog = prog;
    hb_config_defaults(&app->cfg);
    app->opt.poll = HFT_POLL_AUTO;
    app->opt.mlockall = true;
    const hb_extra_option o[HFT_N_OPTIONS] = {
        {"--cpus", true, "--cpus LIST        CPUs to pin worker threads to, e.g. 1 or 0-3,6 (default: all, highest first)",
         opt_cpus, app},
        {"--rt-priority", true, "--rt-priority N    SCHED_FIFO priority 1..99 for the workers (needs root)", opt_rt, app},
        {"--strict", false, "--strict           a tuning that cannot be applied is an error (exit 2), not a warning",
         opt_strict, app},
        {"--busy-poll", false, "--busy-poll        spin on the sockets, never sleep (default when workers < CPUs online)", opt_busy, app},
        {"--no-busy-poll", false, "--no-busy-poll     sleep in epoll between events (default when the workers use every CPU)", opt_no_busy, app},
        {"--interval-s", true, "--interval-s S     the .hlog gets one line per S seconds as they end (default: one for the run); needs --output",
         opt_interval, app},
    };
    memcpy(app->options, o, sizeof o);
}

void hft_app_parse(hft_app *app, int argc, char *const argv[], const hb_extra_option *more, size_t n_more) {
    hb_extra_option all[HFT_N_OPTIONS + 8];
    size_t n = 0;
    for (size_t i = 0; i < HFT_N_OPTIONS; i++) all[n++] = app->options[i];
    for (size_t i = 0; i < n_more && n < sizeof all / sizeof all[0]; i++) all[n++] = more[i];
    hb_args_parse_or_exit(&app->cfg, argc, argv, app->prog, all, n);
    if (!app->cpus_given && hft_cpus_default(&app->opt.cpus) != 0) {
        fprintf(stderr, "%s: cannot read this process's CPU affinity; pass --cpus LIST\n", app->prog);
        exit(2);
    }
}

int hft_app_open(const hft_app *app, const hb_config *cfg, hb_result_out *out) {
    char err[HB_ERR_LEN];
    if (hb_result_open(out, cfg, err, sizeof err) != 0) {
        fprintf(stderr, "%s: %s\n", app->prog, err);
        return 2;
    }
    if (app->opt.interval_s > 0 && out->hlog == NULL) {
        fprintf(stderr, "%s: --interval-s writes the .hlog beside --output; pass --output PATH\n", app->prog);
        hb_result_close(out);
        return 2;
    }
    return 0;
}

int hft_app_start(hft_app *app) {
    if (hb_signal_install() != 0) {
        fprintf(stderr, "%s: cannot install the SIGINT handler; run without a seccomp profile that forbids it\n", app->prog);
        return 2;
    }
    hb_hlog_prefix(app->client, HFT_VERSION, app->opt.hlog_prefix, sizeof app->opt.hlog_prefix);
    hft_clock_init(true, CALIBRATION_MS);
    return 0;
}

int hft_app_write(const hft_app *app, const hb_config *cfg, hb_result_out *out, const hft_outcome *res,
                  const hb_kv *more, size_t n_more) {
    char err[HB_ERR_LEN];
    char tuning[1024], workers[16], cpus[256], cpus_json[300], clock[128], busy[8];
    hft_tuning_json(&res->tuning, tuning, sizeof tuning);
    snprintf(workers, sizeof workers, "%d", res->workers);
    hft_cpus used = app->opt.cpus;
    used.n = res->workers;
    hft_cpus_format(&used, cpus, sizeof cpus);
    snprintf(cpus_json, sizeof cpus_json, "\"%s\"", cpus);
    if (hft_clk.tsc) snprintf(clock, sizeof clock, "{\"source\": \"tsc\", \"tsc_hz\": %.0f}", hft_clk.tsc_hz);
    else snprintf(clock, sizeof clock, "{\"source\": \"CLOCK_MONOTONIC_RAW\"}");
    snprintf(busy, sizeof busy, "%s", res->busy_poll ? "true" : "false");
    hb_kv extra[16] = {{"tuning", tuning}, {"workers", workers}, {"cpus", cpus_json}, {"clock", clock},
                       {"busy_poll", busy}};
    size_t n_extra = 5;
    for (size_t i = 0; i < n_more && n_extra < 16; i++) extra[n_extra++] = more[i];

    hb_run run = {.client = app->client, .client_version = HFT_VERSION, .cfg = cfg,
                  .started_at = res->started_at, .duration_s = res->duration_s, .interrupted = res->interrupted,
                  .intervals_logged = res->intervals_logged, .extra = extra, .n_extra = n_extra};
    int rc = hb_result_write(out, &run, &res->merged, err, sizeof err);
    if (rc == 0 && res->intervals_rc != 0) {
        snprintf(err, sizeof err, "writing %.300s per interval failed (%s); check the disk and --output",
                 out->hlog_path, res->intervals_rc == EIO || res->intervals_rc == ENOMEM ? strerror(res->intervals_rc)
                                                                                   : hdr_strerror(res->intervals_rc));
        rc = -1;
    }
    if (rc != 0) fprintf(stderr, "%s: %s\n", app->prog, err);
    return rc == 0 ? hb_result_exit_code(&res->merged) : 2;
}

int hft_app_run(hft_app *app, const hb_kv *more, size_t n_more) {
    char err[HB_ERR_LEN];
    hb_result_out out;
    if (hft_app_open(app, &app->cfg, &out) != 0) return 2;
    if (hft_app_start(app) != 0) {
        hb_result_close(&out);
        return 2;
    }
    app->opt.interval_hlog = out.hlog;
    hft_outcome res;
    if (hft_run(&app->cfg, &app->opt, &res, err, sizeof err) != 0) {
        fprintf(stderr, "%s: %s\n", app->prog, err);
        hb_result_close(&out);
        return 2;
    }
    hft_tuning_warn(&res.tuning, app->prog);
    int code = hft_app_write(app, &app->cfg, &out, &res, more, n_more);
    hft_outcome_close(&res);
    return code;
}
