// runner.cpp - see runner.hpp; the same phases as the C client's runner.
#include "runner.hpp"

#include <algorithm>
#include <cstdint>
#include <future>
#include <vector>

extern "C" {
#include "hb_clock.h"
#include "hb_schedule.h"
#include "hb_signal.h"
}

namespace hb {

namespace {

// Open loop: order 0 is due this long after the tasks are released.
constexpr std::uint64_t kOpenLoopLeadNs = 2000000;

void add_ns(timespec &t, std::uint64_t ns)
{
    std::uint64_t total = static_cast<std::uint64_t>(t.tv_nsec) + ns;
    t.tv_sec += static_cast<time_t>(total / 1000000000u);
    t.tv_nsec = static_cast<long>(total % 1000000000u);
}

/** Closed loop: meet the tasks after warm-up, start the measured phase, release them. */
void start_measuring(Phase &phase, timespec &wall)
{
    phase.barrier.arrive_and_wait();
    phase.next_k.store(phase.cfg.warmup, std::memory_order_relaxed);
    phase.measure_start_ns = hb_now_ns();
    hb_wall_now(&wall);
    if (phase.cfg.duration_s > 0) {
        phase.deadline_ns = phase.measure_start_ns + static_cast<std::uint64_t>(phase.cfg.duration_s * 1e9);
    }
    phase.barrier.arrive_and_wait();  // publishes the fields above to the tasks
}

}  // namespace

std::unique_ptr<Outcome> run(const hb_config &cfg)
{
    const int n = hb_schedule_workers(cfg.connections, hb_usable_cpus());
    Phase phase(cfg, n);
    phase.total = hb_schedule_total(&cfg);
    std::vector<std::unique_ptr<Worker>> workers;
    for (int i = 0; i < n; i++) {
        int first_slot = 0;
        int share = hb_schedule_share(cfg.connections, n, i, &first_slot);
        workers.push_back(std::make_unique<Worker>(phase, share, first_slot));
    }
    auto out = std::make_unique<Outcome>(hb_config_open_loop(&cfg));
    out->workers = n;

    std::vector<std::future<void>> tasks;
    try {
        for (auto &w : workers) {
            tasks.push_back(std::async(std::launch::async, [&w] { w->run(); }));
        }
    } catch (...) {
        phase.gate.store(-1, std::memory_order_release);  // the started tasks return at once
        throw;                                          // ~future joins them
    }

    std::uint64_t mono0 = hb_now_ns();
    timespec wall0{};
    hb_wall_now(&wall0);
    phase.t0_ns = mono0 + kOpenLoopLeadNs;
    phase.gate.store(1, std::memory_order_release);
    if (hb_config_open_loop(&cfg)) {  // measured from the intended time of the first measured order
        phase.measure_start_ns = hb_schedule_intended_ns(phase.t0_ns, cfg.warmup, cfg.rate);
        out->started_at = wall0;
        add_ns(out->started_at, phase.measure_start_ns - mono0);
    } else {
        start_measuring(phase, out->started_at);
    }
    std::uint64_t end_ns = phase.measure_start_ns;
    for (std::size_t i = 0; i < tasks.size(); i++) {
        tasks[i].get();
        out->merged.merge(workers[i]->stats());
        end_ns = std::max(end_ns, workers[i]->last_done_ns());
    }
    out->duration_s = static_cast<double>(end_ns - phase.measure_start_ns) / 1e9;
    out->interrupted = hb_signal_stop_requested();
    return out;
}

}  // namespace hb
