/**
 * hb_result.h - write the result JSON (Contract 3, bench-config/schema/result.schema.json)
 * and the .hlog beside it (HdrHistogram interval log).
 *
 * The output files are opened before the run (hb_result_open), so a bad --output
 * is exit 2 before any load, and the result of a run is never lost to it.
 */
#ifndef HB_RESULT_H
#define HB_RESULT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <time.h>

#include "hb_args.h"
#include "hb_stats.h"

#ifdef __cplusplus
extern "C" {
#endif

#define HB_SCHEMA_VERSION 1

/** One member of the result's "extra" object; json is the value as JSON text ("8", "\"7.88.1\""). */
typedef struct hb_kv {
    const char *key;
    const char *json;
} hb_kv;

/** What a run knows besides its statistics. */
typedef struct hb_run {
    const char *client;          /* "c", "cpp", "hft": a name of bench-config/clients.yaml */
    const char *client_version;  /* e.g. "0.1.0" */
    const hb_config *cfg;        /* the flags: mode, rate, connections, warmup, seed, scenario */
    struct timespec started_at;  /* wall clock at the start of the measured phase */
    double duration_s;           /* wall time of the measured phase */
    bool interrupted;            /* SIGINT ended the run early */
    bool intervals_logged;       /* --interval-s: hb_interval_log already wrote the whole .hlog */
    const hb_kv *extra;          /* client-specific members of "extra" */
    size_t n_extra;
} hb_run;

/** Where the result goes: --output and the .hlog beside it, or stdout and no .hlog. */
typedef struct hb_result_out {
    FILE *json;
    FILE *hlog; /* NULL when writing to stdout */
    char hlog_path[HB_PATH_MAX + 8];
} hb_result_out;

/** Open (create) the output files. @return 0, or -1 with err = "<problem>; <fix>". */
int hb_result_open(hb_result_out *out, const hb_config *cfg, char *err, size_t errlen);

/** Write the JSON and the .hlog, then close the files. @return 0, or -1 with err. */
int hb_result_write(hb_result_out *out, const hb_run *run, const hb_stats *merged, char *err, size_t errlen);

/** Close without writing (an aborted run). */
void hb_result_close(hb_result_out *out);

/** The result document alone. @return 0, or an errno / HdrHistogram error code. */
int hb_result_write_json(FILE *f, const hb_run *run, const hb_stats *merged);

/** The interval log alone (one line for the whole run, unless run->intervals_logged). @return 0, or an errno / HdrHistogram error code. */
int hb_result_write_hlog(FILE *f, const hb_run *run, const hb_stats *merged);

/** The .hlog header's comment: "Logged with hft-bench client-<client> <version>". */
void hb_hlog_prefix(const char *client, const char *version, char *out, size_t cap);

/** The .hlog path of a result path: ".json" replaced by ".hlog", else ".hlog" appended. */
void hb_result_hlog_path(const char *json_path, char *out, size_t cap);

/** Contract 2's exit status of a finished run: 0 when no measured order failed, else 1. */
int hb_result_exit_code(const hb_stats *merged);

#ifdef __cplusplus
}
#endif
#endif
