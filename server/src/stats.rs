//! Counters behind `/stats` and `/metrics`.
//!
//! The counters only grow (Prometheus counters must). `POST /stats/reset` does not zero
//! them: it stores a snapshot, and `/stats` reports the difference since that snapshot.
//! So one atomic add per event serves both endpoints.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use serde::Serialize;

use crate::book::Status;
use crate::latency::{Histogram, HistogramSnapshot};

/// Order statuses in counter order.
pub const STATUSES: [Status; 6] = [
    Status::New,
    Status::PartiallyFilled,
    Status::Filled,
    Status::Cancelled,
    Status::PartiallyFilledCancelled,
    Status::Rejected,
];

/// The 4xx statuses the server answers, in counter order.
pub const ERROR_CODES: [u16; 6] = [400, 404, 405, 413, 422, 431];

fn status_index(status: Status) -> usize {
    match status {
        Status::New => 0,
        Status::PartiallyFilled => 1,
        Status::Filled => 2,
        Status::Cancelled => 3,
        Status::PartiallyFilledCancelled => 4,
        Status::Rejected => 5,
    }
}

/// Totals at one moment; plain numbers, so differences and rendering are pure functions.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Totals {
    /// Valid orders by final status, indexed like `STATUSES`.
    pub orders: [u64; 6],
    /// Error answers by HTTP status, indexed like `ERROR_CODES`.
    pub errors: [u64; 6],
    /// Executions (one per fill in the replies).
    pub fills: u64,
    /// Shares executed, counted once per fill (on the incoming order's side).
    pub traded_quantity: u64,
}

impl Totals {
    /// `self - earlier`, field by field (saturating: a reset racing an order is harmless).
    pub fn since(&self, earlier: &Totals) -> Totals {
        let mut out = *self;
        for (o, e) in out.orders.iter_mut().zip(earlier.orders) {
            *o = o.saturating_sub(e);
        }
        for (o, e) in out.errors.iter_mut().zip(earlier.errors) {
            *o = o.saturating_sub(e);
        }
        out.fills = self.fills.saturating_sub(earlier.fills);
        out.traded_quantity = self.traded_quantity.saturating_sub(earlier.traded_quantity);
        out
    }

    pub fn count(&self, status: Status) -> u64 {
        self.orders[status_index(status)]
    }

    pub fn total_orders(&self) -> u64 {
        self.orders.iter().sum()
    }
}

/// Counter shards: more than the worker threads of a typical run, so threads rarely share.
const SHARDS: usize = 16;

/// One thread's counters. Each thread always updates the same shard, so under load a
/// counter's cache line stays on one core instead of bouncing between cores on every
/// order; readers sum the shards. 128-byte aligned: two shards never share a line.
#[repr(align(128))]
#[derive(Default)]
struct Shard {
    /// Valid orders by final status.
    orders: [AtomicU64; 6],
    /// Error answers by HTTP status.
    errors: [AtomicU64; 6],
    /// Executions.
    fills: AtomicU64,
    /// Shares executed.
    traded_quantity: AtomicU64,
    /// Time spent in the `POST /order` handler, for `/metrics`.
    handler_latency: Histogram,
}

/// The shard of the calling thread, assigned round-robin on its first use.
fn my_shard() -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    thread_local! {
        static SHARD: usize = NEXT.fetch_add(1, Ordering::Relaxed) % SHARDS;
    }
    SHARD.with(|shard| *shard)
}

/// Live counters, updated with relaxed atomic adds from every worker thread.
pub struct Stats {
    /// Per-thread counters; see `Shard`.
    shards: Box<[Shard]>,
    /// Totals and time at the last reset (or start), the zero point of `/stats`.
    baseline: Mutex<(Totals, Instant)>,
}

impl Default for Stats {
    fn default() -> Self {
        Stats {
            shards: (0..SHARDS).map(|_| Shard::default()).collect(),
            baseline: Mutex::new((Totals::default(), Instant::now())),
        }
    }
}

impl Stats {
    fn shard(&self) -> &Shard {
        &self.shards[my_shard()]
    }

    /// Counts a processed order.
    pub fn record_order(&self, status: Status, fills: usize, traded_quantity: u64) {
        let shard = self.shard();
        shard.orders[status_index(status)].fetch_add(1, Ordering::Relaxed);
        if fills > 0 {
            shard.fills.fetch_add(fills as u64, Ordering::Relaxed);
            shard
                .traded_quantity
                .fetch_add(traded_quantity, Ordering::Relaxed);
        }
    }

    /// Counts an error answer; statuses outside `ERROR_CODES` are not counted.
    pub fn record_error(&self, code: u16) {
        if let Some(i) = ERROR_CODES.iter().position(|&c| c == code) {
            self.shard().errors[i].fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Records the time one `POST /order` spent in its handler.
    pub fn observe_handler(&self, elapsed: Duration) {
        self.shard().handler_latency.observe(elapsed);
    }

    /// The handler-latency histogram over all threads.
    pub fn handler_latency(&self) -> HistogramSnapshot {
        let mut sum = HistogramSnapshot::default();
        for shard in self.shards.iter() {
            sum.add(&shard.handler_latency.snapshot());
        }
        sum
    }

    /// The counters since the server started.
    pub fn totals(&self) -> Totals {
        let load = |a: &AtomicU64| a.load(Ordering::Relaxed);
        let mut totals = Totals::default();
        for shard in self.shards.iter() {
            for (t, a) in totals.orders.iter_mut().zip(&shard.orders) {
                *t += load(a);
            }
            for (t, a) in totals.errors.iter_mut().zip(&shard.errors) {
                *t += load(a);
            }
            totals.fills += load(&shard.fills);
            totals.traded_quantity += load(&shard.traded_quantity);
        }
        totals
    }

    /// The counters since the last reset, and the time since it.
    pub fn since_reset(&self) -> (Totals, Duration) {
        let (base, at) = *self.baseline.lock();
        (self.totals().since(&base), at.elapsed())
    }

    /// Makes now the zero point of `/stats`; returns what the period counted.
    pub fn reset(&self) -> (Totals, Duration) {
        let mut baseline = self.baseline.lock();
        let now = self.totals();
        let period = (now.since(&baseline.0), baseline.1.elapsed());
        *baseline = (now, Instant::now());
        period
    }
}

/// The `GET /stats` document.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StatsReport {
    /// Valid orders processed since the last reset (every status, rejects included).
    pub total_orders: u64,
    /// Seconds since the last reset (or server start).
    pub elapsed_seconds: f64,
    /// `total_orders / elapsed_seconds`.
    pub orders_per_second: f64,
    /// Orders that reached a book and were not refused: `total_orders - rejected`.
    pub accepted: u64,
    /// Status REJECTED: refused by `--max-resting-per-symbol` or `--max-symbols`.
    pub rejected: u64,
    /// Status FILLED.
    pub filled: u64,
    /// Status NEW.
    pub new: u64,
    /// Status PARTIALLY_FILLED.
    pub partially_filled: u64,
    /// Status PARTIALLY_FILLED_CANCELLED.
    pub partially_filled_cancelled: u64,
    /// Status CANCELLED.
    pub cancelled: u64,
    /// Requests answered 4xx (bad input, unknown path, wrong method).
    pub invalid_requests: u64,
    /// Executions.
    pub fills: u64,
    /// Shares executed.
    pub traded_quantity: u64,
    /// Orders resting on all books now.
    pub resting_orders: u64,
    /// Books in use now.
    pub symbols: u64,
}

impl StatsReport {
    /// Builds the report from counters over a period and the books' current state.
    pub fn new(totals: &Totals, elapsed: Duration, resting_orders: usize, symbols: usize) -> Self {
        let total_orders = totals.total_orders();
        let elapsed_seconds = elapsed.as_secs_f64();
        let rejected = totals.count(Status::Rejected);
        StatsReport {
            total_orders,
            elapsed_seconds,
            orders_per_second: if elapsed_seconds > 0.0 {
                total_orders as f64 / elapsed_seconds
            } else {
                0.0
            },
            accepted: total_orders - rejected,
            rejected,
            filled: totals.count(Status::Filled),
            new: totals.count(Status::New),
            partially_filled: totals.count(Status::PartiallyFilled),
            partially_filled_cancelled: totals.count(Status::PartiallyFilledCancelled),
            cancelled: totals.count(Status::Cancelled),
            invalid_requests: totals.errors.iter().sum(),
            fills: totals.fills,
            traded_quantity: totals.traded_quantity,
            resting_orders: resting_orders as u64,
            symbols: symbols as u64,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reset_moves_the_zero_point_without_touching_the_counters() {
        let stats = Stats::default();
        stats.record_order(Status::Filled, 2, 300);
        stats.record_order(Status::Rejected, 0, 0);
        stats.record_error(422);
        let (period, _) = stats.reset();
        assert_eq!(period.total_orders(), 2);
        assert_eq!(period.fills, 2);
        stats.record_order(Status::New, 0, 0);
        let (since, _) = stats.since_reset();
        assert_eq!(since.total_orders(), 1);
        assert_eq!(since.count(Status::New), 1);
        assert_eq!(since.errors, [0; 6]);
        // Prometheus counters keep growing.
        assert_eq!(stats.totals().total_orders(), 3);
        assert_eq!(stats.totals().errors[4], 1);
    }

    #[test]
    fn counts_from_many_threads_add_up() {
        let stats = std::sync::Arc::new(Stats::default());
        let threads: Vec<_> = (0..20)
            .map(|_| {
                let stats = stats.clone();
                std::thread::spawn(move || {
                    for _ in 0..100 {
                        stats.record_order(Status::Filled, 1, 10);
                        stats.observe_handler(Duration::from_micros(20));
                    }
                })
            })
            .collect();
        for thread in threads {
            thread.join().unwrap();
        }
        let totals = stats.totals();
        assert_eq!(totals.count(Status::Filled), 2_000);
        assert_eq!((totals.fills, totals.traded_quantity), (2_000, 20_000));
        let latency = stats.handler_latency();
        assert_eq!(latency.counts.iter().sum::<u64>(), 2_000);
        assert_eq!(latency.sum_ns, 2_000 * 20_000);
    }

    #[test]
    fn unknown_error_codes_are_ignored() {
        let stats = Stats::default();
        stats.record_error(418);
        assert_eq!(stats.totals().errors, [0; 6]);
    }

    #[test]
    fn report_derives_rates_and_accepted() {
        let totals = Totals {
            orders: [1, 2, 3, 4, 5, 6],
            errors: [1, 0, 0, 1, 2, 0],
            fills: 9,
            ..Totals::default()
        };
        let r = StatsReport::new(&totals, Duration::from_millis(2_500), 11, 3);
        assert_eq!(r.total_orders, 21);
        assert_eq!(r.accepted, 15);
        assert_eq!(r.rejected, 6);
        assert_eq!(r.filled, 3);
        assert_eq!(r.invalid_requests, 4);
        assert_eq!(r.elapsed_seconds, 2.5);
        assert_eq!(r.orders_per_second, 8.4);
        assert_eq!((r.resting_orders, r.symbols), (11, 3));
        let zero = StatsReport::new(&Totals::default(), Duration::ZERO, 0, 0);
        assert_eq!(zero.orders_per_second, 0.0);
    }
}
