//! The order service: what the server does with an order and with its counters, apart
//! from HTTP. `routes.rs` maps requests to these calls and their results to answers.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use axum::http::StatusCode;
use chrono::Utc;

use crate::config::{Config, Stall};
use crate::counters::Counters;
use crate::engine::Engine;
use crate::error::ApiError;
use crate::faults::{self, Fault, Faults};
use crate::leak::Leak;
use crate::metrics::{self, Gauges};
use crate::order;
use crate::reply;
use crate::stats::StatsReport;

/// The order server's state and business logic, behind every handler.
pub struct OrderService {
    /// The matching engine: the books.
    pub engine: Engine,
    /// Counters and the latency histogram.
    pub counters: Counters,
    /// `--inject-delay-us`: busy-wait per order, a known slowdown for testing the gate.
    inject_delay: Duration,
    /// `--inject-delay-min-connections`: the delay only while this many connections are
    /// open (0: always).
    inject_delay_min_connections: usize,
    /// `--inject-stall-*`: a busy-wait for one order in N, a slowdown of the tail only.
    inject_stall: Option<Stall>,
    /// Valid orders seen, for picking every N-th one to stall (only touched with a stall).
    stall_counter: AtomicU64,
    /// `--inject-contention-us`: a busy-wait under `contention`, only while two or more
    /// connections are open.
    inject_contention: Duration,
    /// The one server-wide lock of `--inject-contention-us` (never taken when it is off
    /// or with one connection open).
    contention: Mutex<()>,
    /// `--inject-after-reply-us`: CPU work spawned on the runtime after each reply.
    inject_after_reply: Duration,
    /// `--inject-fail-*`, `--inject-crash-after`, `--inject-hang-every`: the orders that
    /// fail, end the process or are never answered.
    faults: Faults,
    /// `--inject-leak-bytes`: bytes kept for every matched order, never freed (a reset
    /// empties the books, not this).
    pub leak: Leak,
    /// Whether anything is injected before the reply (delay, stall, contention, a
    /// fault): one test per order when nothing is.
    injects_in_order: bool,
    /// `--inject-after-s`: the injected costs and faults start this long after `started`.
    inject_after: Duration,
    /// When the state was made (the server's start), for `inject_after`.
    started: Instant,
}

impl OrderService {
    pub fn new(config: &Config) -> Self {
        let faults = Faults::new(config);
        let injects_in_order = !config.inject_delay.is_zero()
            || config.inject_stall.is_some()
            || !config.inject_contention.is_zero()
            || faults.any();
        OrderService {
            engine: Engine::new(
                config.max_resting_per_symbol,
                config.max_symbols,
                config.max_fills_per_order,
            ),
            counters: Counters::default(),
            inject_delay: config.inject_delay,
            inject_delay_min_connections: config.inject_delay_min_connections,
            inject_stall: config.inject_stall,
            stall_counter: AtomicU64::new(0),
            inject_contention: config.inject_contention,
            contention: Mutex::new(()),
            inject_after_reply: config.inject_after_reply,
            faults,
            leak: Leak::new(config.inject_leak_bytes),
            injects_in_order,
            inject_after: config.inject_after,
            started: Instant::now(),
        }
    }

    /// Whether an order arriving `since_start` after the server started gets the injected
    /// costs (`--inject-after-s`).
    pub fn injects_at(&self, since_start: Duration) -> bool {
        since_start >= self.inject_after
    }

    /// Whether `--inject-delay-us` delays an order that arrives while `open_connections`
    /// connections are open (`--inject-delay-min-connections`).
    pub fn delays_at(&self, open_connections: usize) -> bool {
        !self.inject_delay.is_zero() && open_connections >= self.inject_delay_min_connections
    }

    fn injecting(&self) -> bool {
        // No clock read per order unless --inject-after-s asked for one.
        self.inject_after.is_zero() || self.injects_at(self.started.elapsed())
    }

    /// Parses, matches and answers one order body; counts the result. An injected fault
    /// may answer a valid order 503 (`Err`, counted by the caller like every error
    /// answer), hold it unanswered (`Placed::Hang`, counted here) or end the process.
    pub fn place_order(&self, body: &[u8]) -> Result<Placed, ApiError> {
        let order = order::parse(body)?;
        if self.injects_in_order && self.injecting() {
            if let Some(fault) = self.inject_in_order() {
                return fault;
            }
        }
        let execution = self.engine.submit(
            order.symbol,
            order.side,
            order.limit(),
            order.quantity,
            order.time_in_force,
        );
        if self.leak.on() && self.injecting() {
            self.leak.keep();
        }
        let outcome = &execution.outcome;
        self.counters
            .record_order(outcome.status, outcome.fills.len(), outcome.filled);
        Ok(Placed::Reply(reply::order_reply(
            &order,
            &execution,
            Utc::now(),
        )))
    }

    /// The fault, or else the delay, the stall and the contention of one valid order,
    /// before it is matched. `Some`: what to answer instead of matching it.
    fn inject_in_order(&self) -> Option<Result<Placed, ApiError>> {
        if self.faults.any() {
            match self.faults.next(self.counters.open_connections()) {
                None => {}
                Some(Fault::Crash { after }) => faults::crash(after),
                Some(Fault::Hang) => {
                    self.counters.record_hung();
                    return Some(Ok(Placed::Hang));
                }
                Some(Fault::Fail) => return Some(Err(self.injected_failure())),
            }
        }
        // The open-connections gauge is read only when the delay has a minimum.
        if self.inject_delay_min_connections == 0
            || self.delays_at(self.counters.open_connections())
        {
            spin(self.inject_delay);
        }
        if let Some(stall) = self.inject_stall {
            if self.stall_counter.fetch_add(1, Ordering::Relaxed) % stall.every == stall.every - 1 {
                spin(stall.delay);
            }
        }
        // The open-connections gauge the accept loop keeps anyway: one relaxed load.
        if !self.inject_contention.is_zero() && self.counters.open_connections() >= 2 {
            // A panic while held cannot happen in a spin; the lock guards no data anyway.
            let _held = self
                .contention
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            spin(self.inject_contention);
        }
        None
    }

    /// The 503 of `--inject-fail-every`: the usual JSON error body, naming the knob.
    fn injected_failure(&self) -> ApiError {
        let every = self.faults.fail_every();
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            format!(
                "order not processed: an injected failure, one valid order in {every} (--inject-fail-every {every}, a calibration knob); send it again"
            ),
            None,
        )
    }

    /// `--inject-after-reply-us`: called by the handler for a valid order as it hands the
    /// reply over. Spawns the work on the current runtime (the server's workers), so the
    /// reply does not wait for it; the task yields once first, so the worker writes the
    /// reply before it works. Nothing when off (one test) or before `--inject-after-s`.
    pub fn after_reply(&self) {
        if self.inject_after_reply.is_zero() || !self.injecting() {
            return;
        }
        let work = self.inject_after_reply;
        tokio::spawn(async move {
            tokio::task::yield_now().await;
            spin_cpu(work);
        });
    }

    /// The `GET /stats` document: the counters since the last reset and the books now.
    pub fn stats_report(&self) -> StatsReport {
        let (totals, elapsed) = self.counters.since_reset();
        StatsReport::new(&totals, elapsed, self.gauges())
    }

    /// The books and the connections now.
    fn gauges(&self) -> Gauges {
        Gauges {
            resting_orders: self.engine.resting_orders(),
            symbols: self.engine.symbols(),
            connections_open: self.counters.open_connections(),
        }
    }

    /// Zeroes `/stats` and empties the books, so each run starts from the same state.
    /// Returns the figures of the period that ended.
    pub fn reset(&self) -> StatsReport {
        let before = self.gauges();
        self.engine.clear();
        let (totals, elapsed) = self.counters.reset();
        StatsReport::new(&totals, elapsed, before)
    }

    /// The `GET /metrics` text: the counters since the start and the books now.
    pub fn metrics_text(&self) -> String {
        metrics::render(
            &self.counters.totals(),
            &self.counters.handler_latency(),
            self.gauges(),
        )
    }
}

/// What became of a valid order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Placed {
    /// Matched: the execution report, to answer 200 with.
    Reply(Vec<u8>),
    /// `--inject-hang-every`: never answer it.
    Hang,
}

/// Busy-waits: a sleep would free the worker thread and not cost CPU like real work does.
fn spin(delay: Duration) {
    if delay.is_zero() {
        return;
    }
    let start = Instant::now();
    while start.elapsed() < delay {
        std::hint::spin_loop();
    }
}

/// Busy-waits until the calling thread has used `work` of CPU time: work of a known cost,
/// which takes longer when the thread shares its core, as real work does (`spin` ends
/// after a wall-clock time, however little of it the thread ran).
fn spin_cpu(work: Duration) {
    let Some(start) = thread_cpu_time() else {
        return spin(work);
    };
    while thread_cpu_time().is_some_and(|now| now.saturating_sub(start) < work) {
        std::hint::spin_loop();
    }
}

/// The CPU time the calling thread has used (`CLOCK_THREAD_CPUTIME_ID`).
fn thread_cpu_time() -> Option<Duration> {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime only writes the timespec it is given.
    let ok = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) } == 0;
    ok.then(|| Duration::new(now.tv_sec as u64, now.tv_nsec as u32))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spin_cpu_uses_the_cpu_time_it_is_given() {
        let before = thread_cpu_time().unwrap();
        spin_cpu(Duration::from_millis(20));
        let used = thread_cpu_time().unwrap() - before;
        assert!(used >= Duration::from_millis(20), "{used:?}");
    }
}
