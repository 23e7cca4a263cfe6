// worker.cpp - see worker.hpp. The hot path: fill idle connections, let libcurl send
// and read, record what finished, wait for sockets (or the pacing timer).
#include "worker.hpp"

#include <sys/timerfd.h>
#include <unistd.h>

#include <stdexcept>

extern "C" {
#include "hb_clock.h"
#include "hb_schedule.h"
#include "hb_signal.h"
}

namespace hb {

namespace {
// Longest sleep in poll: how often an idle worker re-checks SIGINT and the deadline.
constexpr int kPollMs = 100;
}  // namespace

void Rendezvous::arrive_and_wait()
{
    std::unique_lock<std::mutex> lock(mutex_);
    std::uint64_t gen = generation_;
    if (++waiting_ == parties_) {
        waiting_ = 0;
        generation_++;
        cv_.notify_all();
        return;
    }
    cv_.wait(lock, [&] { return generation_ != gen; });
}

Fd::~Fd()
{
    if (fd_ >= 0) {
        (void)close(fd_);
    }
}

Tickets Tickets::counter(Phase &phase, std::uint64_t end_k, std::uint64_t deadline_ns)
{
    Tickets t(phase, false);
    t.end_k_ = end_k;
    t.deadline_ns_ = deadline_ns;
    return t;
}

Tickets Tickets::schedule(Phase &phase, std::uint64_t first_slot, std::uint64_t n_slots)
{
    Tickets t(phase, true);
    t.next_ = first_slot;
    t.first_slot_ = first_slot;
    t.n_slots_ = n_slots;
    return t;
}

Tickets::Take Tickets::take(std::uint64_t now, Ticket &out)
{
    if (hb_signal_stop_requested()) {
        return Take::none;
    }
    if (!paced_) {
        if (deadline_ns_ != 0 && now >= deadline_ns_) {
            return Take::none;
        }
        std::uint64_t k = phase_.next_k.fetch_add(1, std::memory_order_relaxed);
        if (k >= end_k_) {
            return Take::none;
        }
        out = Ticket{k, 0};
        return Take::ticket;
    }
    if (next_ >= phase_.total) {
        return Take::none;
    }
    std::uint64_t due = due_ns();
    if (due > now) {
        out.intended_ns = due;  // when to come back
        return Take::later;
    }
    out = Ticket{next_, due};
    next_ = hb_schedule_next(next_, static_cast<std::uint64_t>(phase_.cfg.connections), first_slot_, n_slots_);
    return Take::ticket;
}

std::uint64_t Tickets::due_ns() const
{
    return hb_schedule_intended_ns(phase_.t0_ns, next_, phase_.cfg.rate);
}

Worker::Worker(Phase &phase, int n_conns, int first_slot)
    : phase_(phase), first_slot_(first_slot), multi_(make_multi()),
      timer_(hb_config_open_loop(&phase.cfg) ? timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC) : -1),
      stats_(hb_config_open_loop(&phase.cfg))
{
    if (hb_config_open_loop(&phase.cfg) && timer_.get() < 0) {
        throw std::runtime_error("timerfd_create failed");
    }
    hb_ts_cache_init(&ts_);
    // Keep every connection of this worker alive in its cache between orders.
    (void)curl_multi_setopt(multi_.get(), CURLMOPT_MAXCONNECTS, static_cast<long>(n_conns));
    conns_.reserve(static_cast<std::size_t>(n_conns));
    free_.reserve(static_cast<std::size_t>(n_conns));
    for (int i = 0; i < n_conns; i++) {
        conns_.push_back(std::make_unique<Connection>(phase.cfg, static_cast<std::size_t>(i)));
    }
    for (int i = n_conns - 1; i >= 0; i--) {
        free_.push_back(static_cast<std::size_t>(i));
    }
}

void Worker::start(std::uint64_t k, std::uint64_t intended_ns)
{
    Connection &c = *conns_[free_.back()];
    free_.pop_back();
    c.prepare(ts_, k, intended_ns);
    (void)curl_multi_add_handle(multi_.get(), c.easy());
}

int Worker::collect()
{
    int done = 0;
    int left = 0;
    while (CURLMsg *m = curl_multi_info_read(multi_.get(), &left)) {
        if (m->msg != CURLMSG_DONE) {
            continue;
        }
        std::uint64_t now = hb_now_ns();
        CURL *easy = m->easy_handle;
        CURLcode result = m->data.result;  // m is invalid after remove_handle
        char *priv = nullptr;
        (void)curl_easy_getinfo(easy, CURLINFO_PRIVATE, &priv);
        auto *c = reinterpret_cast<Connection *>(priv);
        (void)curl_multi_remove_handle(multi_.get(), easy);
        if (c->measured()) {
            // send lateness, once per measured order whatever its answer (a no-op in closed loop)
            hb_stats_record_lateness(stats_.get(), static_cast<std::int64_t>(c->sent_ns() - c->intended_ns()));
            int kind = c->outcome(result);
            if (kind < 0) {
                hb_stats_record_ok(stats_.get(), static_cast<std::int64_t>(now - c->intended_ns()),
                                   static_cast<std::int64_t>(now - c->sent_ns()));
            } else {
                hb_stats_record_error(stats_.get(), static_cast<hb_error_kind>(kind));
            }
            last_done_ns_ = now;
        }
        free_.push_back(c->index());
        done++;
    }
    return done;
}

int Worker::pump()
{
    int running = 0;
    (void)curl_multi_perform(multi_.get(), &running);
    return collect();
}

/**
 * The one worker loop, closed and open alike: fill the idle connections from the tickets,
 * let libcurl send and read, then wait for sockets (or, open loop, the next due time).
 * The clock is read once per round, and only when the tickets need it (open loop, or a
 * closed loop with --duration): a closed loop by order count pays one predictable branch per
 * round and per ticket; the open loop checks the SIGINT flag per ticket instead of per round
 * (one load). No allocation, lock, log line or syscall per order.
 */
void Worker::run_phase(Tickets tickets)
{
    bool more = true;
    std::uint64_t due = 0;  // open loop: when the next ticket is due, from take()'s `later`
    for (;;) {
        const std::uint64_t now = tickets.needs_clock() ? hb_now_ns() : 0;
        Ticket t;
        while (more && !free_.empty()) {
            Tickets::Take got = tickets.take(now, t);
            if (got == Tickets::Take::later) {
                due = t.intended_ns;
                break;
            }
            if (got == Tickets::Take::none) {
                more = false;
                break;
            }
            start(t.k, t.intended_ns);
        }
        if (pump() > 0) {
            continue;  // refill the connections that just finished
        }
        if (!more && idle()) {
            return;
        }
        if (more && !free_.empty()) {  // only open loop: a free connection waits for its due time
            wait_until(due);
        } else {
            (void)curl_multi_poll(multi_.get(), nullptr, 0, kPollMs, nullptr);
        }
    }
}

void Worker::wait_until(std::uint64_t due_ns)
{
    if (due_ns <= hb_now_ns() + HB_SPIN_NS) {
        while (hb_now_ns() < due_ns) {  // the last 50 µs: spin, reading answers meanwhile
            (void)pump();
        }
        return;
    }
    std::uint64_t wake = due_ns - HB_SPIN_NS;
    itimerspec its{};
    its.it_value.tv_sec = static_cast<time_t>(wake / 1000000000u);
    its.it_value.tv_nsec = static_cast<long>(wake % 1000000000u);
    (void)timerfd_settime(timer_.get(), TFD_TIMER_ABSTIME, &its, nullptr);
    curl_waitfd tfd{timer_.get(), CURL_WAIT_POLLIN, 0};
    (void)curl_multi_poll(multi_.get(), &tfd, 1, kPollMs, nullptr);
    if (tfd.revents != 0) {
        std::uint64_t expirations = 0;
        (void)!read(timer_.get(), &expirations, sizeof(expirations));
    }
}

void Worker::run()
{
    (void)hb_clock_tight_timers();  // poll timeouts and sleeps without the 50 µs slack
    int g = 0;
    while ((g = phase_.gate.load(std::memory_order_acquire)) == 0) {
        hb_sleep_until_ns(hb_now_ns() + 200000);
    }
    if (g < 0) {
        return;
    }
    if (hb_config_open_loop(&phase_.cfg)) {  // one schedule over warm-up and measured orders
        run_phase(Tickets::schedule(phase_, static_cast<std::uint64_t>(first_slot_), conns_.size()));
        return;
    }
    run_phase(Tickets::counter(phase_, phase_.cfg.warmup, 0));
    phase_.barrier.arrive_and_wait();  // warm-up done everywhere
    phase_.barrier.arrive_and_wait();  // main has set the measured start
    run_phase(Tickets::counter(phase_, phase_.total, phase_.deadline_ns));
}

}  // namespace hb
