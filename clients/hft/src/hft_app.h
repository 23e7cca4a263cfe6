/**
 * hft_app.h - what bin/client-hft and bin/hft-floor share after their flags: the HFT
 * flags (--cpus, --rt-priority, --strict, --busy-poll/--no-busy-poll), then
 * clock -> run -> result JSON (+ .hlog) with extra.tuning, and the exit status.
 */
#ifndef HFT_APP_H
#define HFT_APP_H

#include <stddef.h>

#include "hb_args.h"
#include "hb_result.h"
#include "hft_runner.h"

#define HFT_VERSION "0.1.0"
#define HFT_N_OPTIONS 6

typedef struct hft_app {
    const char *client;       /* "hft" or "floor": the result's client */
    const char *prog;         /* "client-hft": the prefix of messages */
    hb_config cfg;
    hft_options opt;
    int cpus_given;           /* --cpus was passed */
    hb_extra_option options[HFT_N_OPTIONS];
} hft_app;

/** Defaults, and the HFT flags as hb_args extra options (app->options). */
void hft_app_init(hft_app *app, const char *client, const char *prog);

/**
 * Parse argv with the common flags + app->options + more (the floor's own), fill the
 * default --cpus. Exits 0 on --help and 2 on a bad flag, as every client does.
 */
void hft_app_parse(hft_app *app, int argc, char *const argv[], const hb_extra_option *more, size_t n_more);

/**
 * Open the output, calibrate the clock, run, write the result with extra (app's own
 * members + more). @return the process exit status (0, 1, or 2 with one stderr line).
 */
int hft_app_run(hft_app *app, const hb_kv *more, size_t n_more);

/* The steps of hft_app_run, for a run of another shape (hft_duet: two results). */

/** Open cfg's result files into out; --interval-s needs the .hlog. @return 0, or 2 after one stderr line. */
int hft_app_open(const hft_app *app, const hb_config *cfg, hb_result_out *out);

/** Once, before the run: the SIGINT handler, the .hlog prefix, the clock. @return 0, or 2 after one stderr line. */
int hft_app_start(hft_app *app);

/**
 * Write res as cfg's result into out (closed after) with extra = tuning, workers, cpus,
 * clock, busy_poll + more. @return 0 or 1 (hb_result_exit_code), or 2 after one stderr line.
 */
int hft_app_write(const hft_app *app, const hb_config *cfg, hb_result_out *out, const hft_outcome *res,
                  const hb_kv *more, size_t n_more);

#endif
