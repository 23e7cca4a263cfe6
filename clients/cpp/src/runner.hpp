// runner.hpp - one run of the C++ client: at most min(connections, cores) std::async tasks,
// each driving its share of the connections through the warm-up and measured phases;
// join; the per-task records merged by the stats stage (stats.hpp).
#pragma once

#include <ctime>
#include <memory>

#include "stats.hpp"
#include "worker.hpp"

extern "C" {
#include "hb_args.h"
}

namespace hb {

struct Outcome {
    explicit Outcome(bool open_loop) : merged(open_loop) {}
    Stats merged;                  // every task's record, added up
    timespec started_at{};         // wall clock at the start of the measured phase
    double duration_s = 0;         // measured start to the last measured answer
    bool interrupted = false;      // SIGINT stopped it early
    int workers = 0;               // tasks used
};

/** Throws std::exception (setup: memory, threads, libcurl) with a message for the one-line error. */
std::unique_ptr<Outcome> run(const hb_config &cfg);

}  // namespace hb
