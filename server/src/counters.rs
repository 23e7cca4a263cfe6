//! The counters behind `/stats` (`stats.rs`) and `/metrics` (`metrics.rs`).
//!
//! The counters only grow (Prometheus counters must). `POST /stats/reset` does not zero
//! them: it stores a snapshot, and `/stats` reports the difference since that snapshot.
//! So one atomic add per event serves both endpoints.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use parking_lot::Mutex;

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

/// The error statuses the server answers, in counter order: the 4xx of bad requests,
/// then 503, the order `--inject-fail-every` failed.
pub const ERROR_CODES: [u16; 8] = [400, 404, 405, 408, 413, 422, 431, 503];

/// The index of 503 in `ERROR_CODES`: valid orders failed by `--inject-fail-every`.
const FAILED: usize = ERROR_CODES.len() - 1;

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
    pub errors: [u64; ERROR_CODES.len()],
    /// Executions (one per fill in the replies).
    pub fills: u64,
    /// Shares executed, counted once per fill (on the incoming order's side).
    pub traded_quantity: u64,
    /// Connections closed at once because `--max-connections` were open.
    pub connections_refused: u64,
    /// Valid orders never answered (`--inject-hang-every`).
    pub hung: u64,
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
        out.connections_refused = self
            .connections_refused
            .saturating_sub(earlier.connections_refused);
        out.hung = self.hung.saturating_sub(earlier.hung);
        out
    }

    pub fn count(&self, status: Status) -> u64 {
        self.orders[status_index(status)]
    }

    /// Valid orders received: matched (every status), failed (503) or hung. A failed or
    /// hung order was sent and received, so a client's count of orders sent still agrees
    /// with this one; only the failure itself shows.
    pub fn total_orders(&self) -> u64 {
        self.orders.iter().sum::<u64>() + self.failed() + self.hung
    }

    /// Valid orders answered 503 by `--inject-fail-every`.
    pub fn failed(&self) -> u64 {
        self.errors[FAILED]
    }

    /// Requests answered 4xx (bad input, unknown path, wrong method): not orders.
    pub fn invalid_requests(&self) -> u64 {
        self.errors[..FAILED].iter().sum()
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
    errors: [AtomicU64; ERROR_CODES.len()],
    /// Executions.
    fills: AtomicU64,
    /// Shares executed.
    traded_quantity: AtomicU64,
    /// Time spent in the `POST /order` handler, for `/metrics`.
    handler_latency: Histogram,
    /// Connections refused by `--max-connections` (counted by the accept loop's thread).
    connections_refused: AtomicU64,
    /// Valid orders never answered (`--inject-hang-every`).
    hung: AtomicU64,
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
pub struct Counters {
    /// Per-thread counters; see `Shard`.
    shards: Box<[Shard]>,
    /// Totals and time at the last reset (or start), the zero point of `/stats`.
    baseline: Mutex<(Totals, Instant)>,
    /// Connections being served now: the gauge of `/metrics`, and what the accept loop
    /// compares with `--max-connections`. Changes once per connection, not per request.
    open_connections: AtomicUsize,
}

impl Default for Counters {
    fn default() -> Self {
        Counters {
            shards: (0..SHARDS).map(|_| Shard::default()).collect(),
            baseline: Mutex::new((Totals::default(), Instant::now())),
            open_connections: AtomicUsize::new(0),
        }
    }
}

impl Counters {
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

    /// Counts a valid order that will never be answered (`--inject-hang-every`).
    pub fn record_hung(&self) {
        self.shard().hung.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts a connection closed at once because `--max-connections` were open.
    pub fn record_refused_connection(&self) {
        self.shard()
            .connections_refused
            .fetch_add(1, Ordering::Relaxed);
    }

    /// Counts a connection that is now served; `connection_closed` undoes it.
    pub fn connection_opened(&self) {
        self.open_connections.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts a served connection that has ended.
    pub fn connection_closed(&self) {
        self.open_connections.fetch_sub(1, Ordering::Relaxed);
    }

    /// Connections being served now.
    pub fn open_connections(&self) -> usize {
        self.open_connections.load(Ordering::Relaxed)
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
            totals.connections_refused += load(&shard.connections_refused);
            totals.hung += load(&shard.hung);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reset_moves_the_zero_point_without_touching_the_counters() {
        let stats = Counters::default();
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
        assert_eq!(since.errors, [0; ERROR_CODES.len()]);
        // Prometheus counters keep growing.
        assert_eq!(stats.totals().total_orders(), 3);
        assert_eq!(stats.totals().errors[5], 1);
    }

    #[test]
    fn counts_from_many_threads_add_up() {
        let stats = std::sync::Arc::new(Counters::default());
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
    fn failed_and_hung_orders_are_orders_and_not_invalid_requests() {
        let stats = Counters::default();
        stats.record_order(Status::New, 0, 0);
        stats.record_error(503);
        stats.record_error(503);
        stats.record_hung();
        stats.record_error(422);
        let totals = stats.totals();
        assert_eq!((totals.failed(), totals.hung), (2, 1));
        assert_eq!(totals.total_orders(), 4);
        assert_eq!(totals.invalid_requests(), 1);
        stats.reset();
        stats.record_hung();
        let (since, _) = stats.since_reset();
        assert_eq!(
            (since.total_orders(), since.failed(), since.hung),
            (1, 0, 1)
        );
    }

    #[test]
    fn unknown_error_codes_are_ignored() {
        let stats = Counters::default();
        stats.record_error(418);
        assert_eq!(stats.totals().errors, [0; ERROR_CODES.len()]);
    }

    #[test]
    fn refused_connections_count_since_reset_and_open_ones_are_a_gauge() {
        let stats = Counters::default();
        stats.record_refused_connection();
        stats.reset();
        stats.record_refused_connection();
        stats.record_refused_connection();
        assert_eq!(stats.since_reset().0.connections_refused, 2);
        assert_eq!(stats.totals().connections_refused, 3);
        stats.connection_opened();
        stats.connection_opened();
        stats.connection_closed();
        assert_eq!(stats.open_connections(), 1);
    }
}
