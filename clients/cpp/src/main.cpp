// client-cpp: libcurl multi handles driven by bounded std::async tasks.
// args -> probe -> runner (workers, one loop over Tickets) -> stats (merge) -> result, like every client.
#include <cstdio>
#include <exception>
#include <string>

#include "curl_handles.hpp"
#include "runner.hpp"

#include "hb_allocator.h"  // static inline; mimalloc.h must not be wrapped in extern "C"

extern "C" {
#include "hb_args.h"
#include "hb_probe.h"
#include "hb_result.h"
#include "hb_signal.h"
}

namespace {

constexpr const char *kClient = "cpp";
constexpr const char *kProg = "client-cpp";

int cannot_run(const std::string &err)
{
    std::fprintf(stderr, "%s: %s\n", kProg, err.c_str());
    return 2;
}

/** Closes the result files unless they were written. */
struct ResultFiles {
    hb_result_out out{};
    ~ResultFiles() { hb_result_close(&out); }
};

}  // namespace

int main(int argc, char **argv)
{
    hb_config cfg;
    char err[HB_ERR_LEN];
    hb_args_parse_or_exit(&cfg, argc, argv, kProg, nullptr, 0);
    hb_probe_or_exit(kProg, &cfg.url);
    ResultFiles files;
    if (hb_result_open(&files.out, &cfg, err, sizeof(err)) != 0) {
        return cannot_run(err);
    }
    try {
        hb::CurlGlobal curl;
        if (hb_signal_install() != 0) {
            return cannot_run("cannot install the SIGINT handler; check the process's signal limits");
        }
        std::unique_ptr<hb::Outcome> outcome = hb::run(cfg);

        std::string libcurl = std::string("\"") + curl_version_info(CURLVERSION_NOW)->version + "\"";
        std::string workers = std::to_string(outcome->workers);
        std::string cxx = "\"" + std::to_string(__cplusplus) + "\"";
        char allocator[48];
        hb_allocator_name(allocator, sizeof(allocator));
        hb_kv extra[] = {{"libcurl", libcurl.c_str()},
                         {"workers", workers.c_str()},
                         {"cplusplus", cxx.c_str()},
                         {"hdr_histogram_c", "\"vendored\""},
                         {"allocator", allocator}};
        hb_run run{};
        run.client = kClient;
        run.client_version = CLIENT_VERSION;
        run.cfg = &cfg;
        run.started_at = outcome->started_at;
        run.duration_s = outcome->duration_s;
        run.interrupted = outcome->interrupted;
        run.extra = extra;
        run.n_extra = sizeof(extra) / sizeof(extra[0]);
        int status = hb_result_exit_code(outcome->merged.get());
        if (hb_result_write(&files.out, &run, outcome->merged.get(), err, sizeof(err)) != 0) {
            return cannot_run(err);
        }
        return status;
    } catch (const std::exception &e) {
        return cannot_run(std::string("cannot set up the run (") + e.what() + "); pass fewer --connections");
    }
}
