/* client-c: the libcurl multi load client. args -> probe -> workers -> merge -> result. */
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>

#include "cc_runner.h"
#include "hb_allocator.h"
#include "hb_args.h"
#include "hb_probe.h"
#include "hb_result.h"
#include "hb_signal.h"

#define CLIENT "c"
#define PROG "client-c"
#define CLIENT_VERSION "0.1.0"

static int cannot_run(const char *err)
{
    (void)fprintf(stderr, "client-" CLIENT ": %s\n", err);
    return 2;
}

int main(int argc, char **argv)
{
    hb_config cfg;
    hb_result_out out;
    cc_outcome outcome;
    char err[HB_ERR_LEN];

    hb_args_parse_or_exit(&cfg, argc, argv, PROG, NULL, 0);
    hb_probe_or_exit(PROG, &cfg.url);
    if (hb_result_open(&out, &cfg, err, sizeof(err)) != 0) {
        return cannot_run(err);
    }
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK || hb_signal_install() != 0) {
        hb_result_close(&out);
        return cannot_run("cannot initialise libcurl or the signal handlers; check the libcurl installation");
    }
    if (cc_run(&cfg, &outcome, err, sizeof(err)) != 0) {
        hb_result_close(&out);
        curl_global_cleanup();
        return cannot_run(err);
    }

    char libcurl[64];
    char workers[16];
    char allocator[48];
    (void)snprintf(libcurl, sizeof(libcurl), "\"%s\"", curl_version_info(CURLVERSION_NOW)->version);
    (void)snprintf(workers, sizeof(workers), "%d", outcome.workers);
    hb_allocator_name(allocator, sizeof(allocator));
    hb_kv extra[] = {{"libcurl", libcurl}, {"workers", workers}, {"hdr_histogram_c", "\"vendored\""},
                     {"allocator", allocator}};
    hb_run run = {.client = CLIENT, .client_version = CLIENT_VERSION, .cfg = &cfg,
                  .started_at = outcome.started_at, .duration_s = outcome.duration_s,
                  .interrupted = outcome.interrupted, .extra = extra, .n_extra = sizeof(extra) / sizeof(extra[0])};
    int status = hb_result_exit_code(&outcome.merged);
    if (hb_result_write(&out, &run, &outcome.merged, err, sizeof(err)) != 0) {
        status = cannot_run(err);
    }
    hb_stats_close(&outcome.merged);
    curl_global_cleanup();
    return status;
}
