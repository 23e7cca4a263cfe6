//! The `GET /stats` document (and the answer of `POST /stats/reset`): the counters over a
//! period, with the rates and sums derived from them.

use std::time::Duration;

use serde::Serialize;

use crate::book::Status;
use crate::counters::Totals;
use crate::metrics::Gauges;

/// The `GET /stats` document.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StatsReport {
    /// Valid orders received since the last reset: matched (every status, rejects
    /// included), failed (`failed`) or hung (`hung`).
    pub total_orders: u64,
    /// Seconds since the last reset (or server start).
    pub elapsed_seconds: f64,
    /// `total_orders / elapsed_seconds`.
    pub orders_per_second: f64,
    /// Orders that reached a book and were not refused:
    /// `total_orders - rejected - failed - hung`.
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
    /// Valid orders answered 503 instead of being matched (`--inject-fail-every`).
    pub failed: u64,
    /// Valid orders never answered (`--inject-hang-every`).
    pub hung: u64,
    /// Executions.
    pub fills: u64,
    /// Shares executed.
    pub traded_quantity: u64,
    /// Orders resting on all books now.
    pub resting_orders: u64,
    /// Books in use now.
    pub symbols: u64,
    /// Connections closed at once because `--max-connections` were open.
    pub connections_refused: u64,
    /// Connections being served now.
    pub connections_open: u64,
}

impl StatsReport {
    /// Builds the report from counters over a period and the books' current state.
    pub fn new(totals: &Totals, elapsed: Duration, now: Gauges) -> Self {
        let total_orders = totals.total_orders();
        let elapsed_seconds = elapsed.as_secs_f64();
        let rejected = totals.count(Status::Rejected);
        let (failed, hung) = (totals.failed(), totals.hung);
        StatsReport {
            total_orders,
            elapsed_seconds,
            orders_per_second: if elapsed_seconds > 0.0 {
                total_orders as f64 / elapsed_seconds
            } else {
                0.0
            },
            accepted: total_orders - rejected - failed - hung,
            rejected,
            filled: totals.count(Status::Filled),
            new: totals.count(Status::New),
            partially_filled: totals.count(Status::PartiallyFilled),
            partially_filled_cancelled: totals.count(Status::PartiallyFilledCancelled),
            cancelled: totals.count(Status::Cancelled),
            invalid_requests: totals.invalid_requests(),
            failed,
            hung,
            fills: totals.fills,
            traded_quantity: totals.traded_quantity,
            resting_orders: now.resting_orders as u64,
            symbols: now.symbols as u64,
            connections_refused: totals.connections_refused,
            connections_open: now.connections_open as u64,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn report_derives_rates_and_accepted() {
        let totals = Totals {
            orders: [1, 2, 3, 4, 5, 6],
            errors: [1, 0, 0, 0, 1, 2, 0, 3],
            fills: 9,
            connections_refused: 2,
            hung: 1,
            ..Totals::default()
        };
        let now = Gauges {
            resting_orders: 11,
            symbols: 3,
            connections_open: 5,
        };
        let r = StatsReport::new(&totals, Duration::from_millis(2_500), now);
        assert_eq!(r.total_orders, 25);
        assert_eq!(r.accepted, 15);
        assert_eq!(r.rejected, 6);
        assert_eq!(r.filled, 3);
        assert_eq!(r.invalid_requests, 4);
        assert_eq!((r.failed, r.hung), (3, 1));
        assert_eq!(r.elapsed_seconds, 2.5);
        assert_eq!(r.orders_per_second, 10.0);
        assert_eq!((r.resting_orders, r.symbols), (11, 3));
        assert_eq!((r.connections_refused, r.connections_open), (2, 5));
        let zero = StatsReport::new(&Totals::default(), Duration::ZERO, Gauges::default());
        assert_eq!(zero.orders_per_second, 0.0);
    }
}
