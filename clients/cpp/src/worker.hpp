// worker.hpp - one std::async task of the C++ client: a curl multi handle driving its
// share of the connections, its own Stats, and the pacing timer; one loop over Tickets.
//
// Closed loop: the workers take order numbers from one shared atomic counter, one phase
// at a time (warm-up, then measured). Open loop: order i belongs to connection slot
// i % C; each worker paces the orders of its slots at t0 + i/R and sends late when all
// its connections are busy, never skipping. (The same scheme as the C client's worker.)
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "connection.hpp"
#include "curl_handles.hpp"
#include "stats.hpp"

extern "C" {
#include "hb_args.h"
#include "hb_order.h"
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
struct Phase {
    Phase(const hb_config &c, int workers) : cfg(c), barrier(workers + 1) {}
    const hb_config &cfg;
    std::uint64_t total = 0;                  // orders of the whole run; UINT64_MAX: until the deadline
    std::atomic<std::uint64_t> next_k{0};     // closed loop: next order number to send
    std::atomic<int> gate{0};                 // 0: tasks wait; 1: go; -1: abort (a task could not start)
    Rendezvous barrier;                       // closed loop: after warm-up, and to start measuring
    std::uint64_t t0_ns = 0;                  // open loop: intended send time of order 0
    std::uint64_t measure_start_ns = 0;       // start of the measured phase
    std::uint64_t deadline_ns = 0;            // --duration, closed loop: no order starts after it
};

/** One order to send: its number and, in open loop, its intended send time (else 0). */
struct Ticket {
    std::uint64_t k = 0;
    std::uint64_t intended_ns = 0;
};

/**
 * Where a worker's orders come from, as Rust's worker::Tickets. Closed loop: the shared
 * counter up to `end` or the deadline. Open loop: this worker's slots' orders, each once
 * it is due. A plain value on the worker's stack: taking a ticket allocates nothing and
 * makes no syscall; it compares against a `now` the caller reads once per round.
 */
class Tickets {
public:
    enum class Take { ticket, later, none };

    /** Closed loop: orders from phase.next_k below end_k; none starts after deadline_ns (0: none). */
    static Tickets counter(Phase &phase, std::uint64_t end_k, std::uint64_t deadline_ns);
    /** Open loop: orders first_slot, then hb_schedule_next, of n_slots slots, below phase.total. */
    static Tickets schedule(Phase &phase, std::uint64_t first_slot, std::uint64_t n_slots);

    /** The next ticket into `out`; `later` (open loop: not due at `now`, its due time in
     *  out.intended_ns); `none` at the end, past the deadline at `now`, or on SIGINT. */
    Take take(std::uint64_t now, Ticket &out);
    /** Whether take() reads `now` (open loop, or a deadline): the caller reads the clock
     *  once per round only then. */
    bool needs_clock() const { return paced_ || deadline_ns_ != 0; }

private:
    /** Open loop: the intended send time of the next ticket. */
    std::uint64_t due_ns() const;

    Tickets(Phase &phase, bool paced) : phase_(phase), paced_(paced) {}

    Phase &phase_;
    bool paced_;
    std::uint64_t end_k_ = 0;        // closed loop: first order number not to send
    std::uint64_t deadline_ns_ = 0;  // closed loop, --duration: 0 = none
    std::uint64_t next_ = 0;         // open loop: this worker's next order number
    std::uint64_t first_slot_ = 0;   // open loop: slots first_slot_ .. + n_slots_ - 1
    std::uint64_t n_slots_ = 0;
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
    Worker(Phase &phase, int n_conns, int first_slot);
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
    void run_phase(Tickets tickets);
    void wait_until(std::uint64_t due_ns);

    Phase &phase_;
    int first_slot_;                                  // open loop: slots first_slot_ .. + n_conns - 1
    MultiHandle multi_;                               // owns the connection cache of this worker
    std::vector<std::unique_ptr<Connection>> conns_;  // stable addresses: libcurl keeps pointers
    std::vector<std::size_t> free_;                   // idle connections; capacity reserved up front
    Fd timer_;                                        // open loop: wakes the poll before the next send
    hb_ts_cache ts_{};                                // per-task client_timestamp cache
    Stats stats_;                                     // measured orders only
    std::uint64_t last_done_ns_ = 0;                  // its last measured answer, for duration_s
};

}  // namespace hb
