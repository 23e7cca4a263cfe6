/**
 * hb_args.h - the command-line flags every hft-bench client shares (Contract 2).
 *
 * The parser is pure: hb_args_parse() fills an hb_config or writes one
 * "<problem>; <fix>" message into a caller buffer and never prints or exits, so it
 * can be tested. hb_args_parse_or_exit() is the wrapper a binary calls: it prints
 * usage (exit 0) or "PROG: <problem>; <fix>" (exit 2).
 *
 * Client-specific flags (the HFT client's --rt-priority, --strict, --cpus ...) are
 * plugged in as a table of hb_extra_option; each one validates its own value.
 */
#ifndef HB_ARGS_H
#define HB_ARGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "hb_url.h"

#ifdef __cplusplus
extern "C" {
#endif

#define HB_ARGS_OK 0    /* flags parsed, run */
#define HB_ARGS_HELP 1  /* --help given: print usage, exit 0 */
#define HB_ARGS_ERROR 2 /* bad flag or value: message in err, exit 2 */

#define HB_ERR_LEN 512
#define HB_SCENARIO_MAX 128
#define HB_PATH_MAX 4096

/** Every Contract-2 flag, after validation. */
typedef struct hb_config {
    char url_text[HB_URL_MAX];       /* --url as given, for messages */
    hb_url url;                      /* --url parsed: host, port, path of /order */
    uint64_t orders;                 /* --orders N (N >= 1); 0 when --duration is used */
    double duration_s;               /* --duration S (S > 0); 0 when --orders is used */
    int connections;                 /* --connections C (C >= 1) */
    uint64_t warmup;                 /* --warmup W (W >= 0), sent first, not recorded */
    double rate;                     /* --rate R orders/s; 0 = closed loop */
    long timeout_ms;                 /* --timeout-ms T (T >= 1) per request */
    char scenario[HB_SCENARIO_MAX];  /* --scenario label copied into the result */
    uint64_t seed;                   /* --seed of the order stream */
    char output[HB_PATH_MAX];        /* --output PATH; "" = stdout and no .hlog */
} hb_config;

/**
 * A client-specific flag. apply() gets the value (NULL when takes_value is false)
 * and returns 0, or non-zero after writing "<problem>; <fix>" into err.
 */
typedef struct hb_extra_option {
    const char *name;  /* with the dashes: "--rt-priority" */
    bool takes_value;
    const char *help;  /* one usage line, e.g. "--rt-priority N  SCHED_FIFO priority 1..99" */
    int (*apply)(void *ctx, const char *value, char *err, size_t errlen);
    void *ctx;
} hb_extra_option;

/** Fill cfg with the Contract-2 defaults (url 127.0.0.1:8080, 1000 orders, ...). */
void hb_config_defaults(hb_config *cfg);

/**
 * Parse argv[1..argc). Both "--flag value" and "--flag=value".
 * @return HB_ARGS_OK, HB_ARGS_HELP, or HB_ARGS_ERROR with err = "<problem>; <fix>".
 */
int hb_args_parse(hb_config *cfg, int argc, char *const argv[], const char *prog,
                  const hb_extra_option *extra, size_t n_extra, char *err, size_t errlen);

/** Print the usage text (common flags, then the extra ones) to out. */
void hb_args_usage(FILE *out, const char *prog, const hb_extra_option *extra, size_t n_extra);

/**
 * hb_args_parse(), then: --help prints usage and exits 0; an error prints
 * "PROG: <problem>; <fix>" to stderr and exits 2. prog is the program's name as the
 * user typed it in bin/ ("client-c", "hft-floor"), so the message names the fix they can run.
 */
void hb_args_parse_or_exit(hb_config *cfg, int argc, char *const argv[], const char *prog,
                           const hb_extra_option *extra, size_t n_extra);

/** True when --rate was given (open loop). */
static inline bool hb_config_open_loop(const hb_config *cfg) { return cfg->rate > 0.0; }

#ifdef __cplusplus
}
#endif
#endif
