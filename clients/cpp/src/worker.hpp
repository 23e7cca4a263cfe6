// worker.hpp - one std::async task of the C++ client: a curl multi handle driving its
// share of the connections, its own hb_stats, and the pacing timer.
//
// Closed loop: the workers take order numbers from one shared atomic counter, one phase
// at a time (warm-up, then measured). Open loop: order i belongs to connection slot
// i % C; each worker paces the orders of its slots at t0 + i/R and sends late when all
// its connections are busy, never skipping. (The same scheme as clients/c/src/cc_worker.c.)
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "connection.hpp"
#include "curl_handles.hpp"

extern "C" {
#include "hb_args.h"
#include "hb_order.h"
#include "hb_stats.h"
}

namespace hb {

/** Workers and the main thread meet here between phases (twice per run, never per order). */
class Rendezvous {
public:
    explicit Rendezvous(int parties) : parties_(parties) {}
    void arrive_and_wait();

private:
    std::mutex mutex_;
    std::condition_variable cv_;
    int parties_;
    int waiting_ = 0;
    std::uint64_t generation_ = 0;
};

/** What all workers share: read-only during a phase, except the order counter. */
struct Plan {
    Plan(const hb_config &c, int workers) : cfg(c), phase(workers + 1) {}
    const hb_config &cfg;
    std::uint64_t total = 0;                  // orders of the whole run; UINT64_MAX: until the deadline
    std::atomic<std::uint64_t> next_k{0};     // closed loop: next order number to send
    std::atomic<int> gate{0};                 // 0: tasks wait; 1: go; -1: abort (a task could not start)
    Rendezvous phase;                         // closed loop: after warm-up, and to start measuring
    std::uint64_t t0_ns = 0;                  // open loop: intended send time of order 0
    std::uint64_t measure_start_ns = 0;       // start of the measured phase
    std::uint64_t deadline_ns = 0;            // --duration, closed loop: no order starts after it
};

/** hb_stats with its histograms freed on scope exit. */
class Stats {
public:
    explicit Stats(bool open_loop);
    ~Stats() { hb_stats_close(&s_); }
    Stats(const Stats &) = delete;
    Stats &operator=(const Stats &) = delete;
    hb_stats *get() { return &s_; }
    const hb_stats *get() const { return &s_; }

private:
    hb_stats s_{};
};

/** A file descriptor closed on scope exit. */
class Fd {
public:
    explicit Fd(int fd = -1) : fd_(fd) {}
    ~Fd();
    Fd(const Fd &) = delete;
    Fd &operator=(const Fd &) = delete;
    int get() const { return fd_; }

private:
    int fd_;
};

class Worker {
public:
    Worker(Plan &plan, int n_conns, int first_slot);
    Worker(const Worker &) = delete;
    Worker &operator=(const Worker &) = delete;

    /** The task body: waits for the gate, then runs the whole run. */
    void run();

    const hb_stats *stats() const { return stats_.get(); }
    std::uint64_t last_done_ns() const { return last_done_ns_; }

private:
    void start(std::uint64_t k, std::uint64_t intended_ns);
    int collect();
    int pump();
    bool idle() const { return free_.size() == conns_.size(); }
    void run_closed_phase(std::uint64_t end_k, std::uint64_t deadline_ns);
    void run_open();
    void wait_until(std::uint64_t due_ns);
    std::uint64_t intended_ns(std::uint64_t i) const;
    std::uint64_t next_order(std::uint64_t i) const;

    Plan &plan_;
    int first_slot_;                                  // open loop: slots first_slot_ .. + n_conns - 1
    MultiHandle multi_;                               // owns the connection cache of this worker
    std::vector<std::unique_ptr<Connection>> conns_;  // stable addresses: libcurl keeps pointers
    std::vector<std::size_t> free_;                   // idle connections; capacity reserved up front
    Fd timer_;                                        // open loop: wakes the poll before the next send
    std::uint64_t next_i_;                            // open loop: this worker's next order number
    hb_ts_cache ts_{};                                // per-task client_timestamp cache
    Stats stats_;                                     // measured orders only
    std::uint64_t last_done_ns_ = 0;                  // its last measured answer, for duration_s
};

}  // namespace hb
