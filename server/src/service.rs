//! The order service: what the server does with an order and with its counters, apart
//! from HTTP. `routes.rs` maps requests to these calls and their results to answers.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use chrono::Utc;

use crate::config::{Config, Stall};
use crate::counters::Counters;
use crate::engine::Engine;
use crate::error::ApiError;
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
    /// `--inject-stall-*`: a busy-wait for one order in N, a slowdown of the tail only.
    inject_stall: Option<Stall>,
    /// Valid orders seen, for picking every N-th one to stall (only touched with a stall).
    stall_counter: AtomicU64,
    /// `--inject-after-s`: the delay and the stall start this long after `started`.
    inject_after: Duration,
    /// When the state was made (the server's start), for `inject_after`.
    started: Instant,
}

impl OrderService {
    pub fn new(config: &Config) -> Self {
        OrderService {
            engine: Engine::new(
                config.max_resting_per_symbol,
                config.max_symbols,
                config.max_fills_per_order,
            ),
            counters: Counters::default(),
            inject_delay: config.inject_delay,
            inject_stall: config.inject_stall,
            stall_counter: AtomicU64::new(0),
            inject_after: config.inject_after,
            started: Instant::now(),
        }
    }

    /// Whether an order arriving `since_start` after the server started gets the injected
    /// delay and stall (`--inject-after-s`).
    pub fn injects_at(&self, since_start: Duration) -> bool {
        since_start >= self.inject_after
    }

    fn injecting(&self) -> bool {
        // No clock read per order unless --inject-after-s asked for one.
        self.inject_after.is_zero() || self.injects_at(self.started.elapsed())
    }

    /// Parses, matches and answers one order body; counts the result.
    pub fn place_order(&self, body: &[u8]) -> Result<Vec<u8>, ApiError> {
        let order = order::parse(body)?;
        if (!self.inject_delay.is_zero() || self.inject_stall.is_some()) && self.injecting() {
            spin(self.inject_delay);
            if let Some(stall) = self.inject_stall {
                if self.stall_counter.fetch_add(1, Ordering::Relaxed) % stall.every
                    == stall.every - 1
                {
                    spin(stall.delay);
                }
            }
        }
        let execution = self.engine.submit(
            order.symbol,
            order.side,
            order.limit(),
            order.quantity,
            order.time_in_force,
        );
        let outcome = &execution.outcome;
        self.counters
            .record_order(outcome.status, outcome.fills.len(), outcome.filled);
        Ok(reply::order_reply(&order, &execution, Utc::now()))
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
