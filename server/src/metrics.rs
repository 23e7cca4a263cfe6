//! `GET /metrics`: Prometheus text exposition (format 0.0.4) of the counters and of the
//! `POST /order` handler-latency histogram (`latency.rs`). Rendering only: a pure function
//! of plain numbers.

use std::fmt::Write;

use crate::counters::{Totals, ERROR_CODES, STATUSES};
use crate::latency::{HistogramSnapshot, BUCKETS_NS};

/// The gauges read at scrape time (the books, the connections), for `/metrics` and
/// `/stats`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Gauges {
    /// Orders resting on all books, `hft_resting_orders`.
    pub resting_orders: usize,
    /// Books in use, `hft_symbols`.
    pub symbols: usize,
    /// Connections being served, `hft_connections_open`.
    pub connections_open: usize,
}

/// Renders the exposition text.
pub fn render(totals: &Totals, latency: &HistogramSnapshot, gauges: Gauges) -> String {
    let mut out = String::with_capacity(4096);
    // Writing to a String cannot fail.
    let _ = write_all(&mut out, totals, latency, gauges);
    out
}

fn write_all(
    out: &mut String,
    totals: &Totals,
    latency: &HistogramSnapshot,
    gauges: Gauges,
) -> std::fmt::Result {
    header(
        out,
        "hft_orders_total",
        "counter",
        "Valid orders processed, by final status.",
    )?;
    for (status, n) in STATUSES.iter().zip(totals.orders) {
        writeln!(
            out,
            "hft_orders_total{{status=\"{}\"}} {n}",
            status.as_str()
        )?;
    }
    header(
        out,
        "hft_http_errors_total",
        "counter",
        "Requests answered with an error, by HTTP status.",
    )?;
    for (code, n) in ERROR_CODES.iter().zip(totals.errors) {
        writeln!(out, "hft_http_errors_total{{code=\"{code}\"}} {n}")?;
    }
    header(
        out,
        "hft_fills_total",
        "counter",
        "Executions against resting orders.",
    )?;
    writeln!(out, "hft_fills_total {}", totals.fills)?;
    header(
        out,
        "hft_traded_quantity_total",
        "counter",
        "Shares executed.",
    )?;
    writeln!(out, "hft_traded_quantity_total {}", totals.traded_quantity)?;
    header(
        out,
        "hft_resting_orders",
        "gauge",
        "Orders resting on all books.",
    )?;
    writeln!(out, "hft_resting_orders {}", gauges.resting_orders)?;
    header(out, "hft_symbols", "gauge", "Order books in use.")?;
    writeln!(out, "hft_symbols {}", gauges.symbols)?;
    header(
        out,
        "hft_connections_open",
        "gauge",
        "Connections being served.",
    )?;
    writeln!(out, "hft_connections_open {}", gauges.connections_open)?;
    header(
        out,
        "hft_connections_refused_total",
        "counter",
        "Connections closed at once because --max-connections were open.",
    )?;
    writeln!(
        out,
        "hft_connections_refused_total {}",
        totals.connections_refused
    )?;
    header(
        out,
        "hft_orders_hung_total",
        "counter",
        "Valid orders never answered (--inject-hang-every).",
    )?;
    writeln!(out, "hft_orders_hung_total {}", totals.hung)?;

    let name = "hft_order_handler_duration_seconds";
    header(
        out,
        name,
        "histogram",
        "Time spent in the POST /order handler (parse, match, reply).",
    )?;
    let mut cumulative = 0u64;
    for (bound, n) in BUCKETS_NS.iter().zip(&latency.counts) {
        cumulative += n;
        writeln!(
            out,
            "{name}_bucket{{le=\"{}\"}} {cumulative}",
            *bound as f64 / 1e9
        )?;
    }
    cumulative += latency.counts.get(BUCKETS_NS.len()).copied().unwrap_or(0);
    writeln!(out, "{name}_bucket{{le=\"+Inf\"}} {cumulative}")?;
    writeln!(out, "{name}_sum {}", latency.sum_ns as f64 / 1e9)?;
    writeln!(out, "{name}_count {cumulative}")
}

fn header(out: &mut String, name: &str, kind: &str, help: &str) -> std::fmt::Result {
    writeln!(out, "# HELP {name} {help}")?;
    writeln!(out, "# TYPE {name} {kind}")
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::latency::Histogram;

    #[test]
    fn render_is_cumulative_with_le_in_seconds() {
        let h = Histogram::default();
        h.observe(Duration::from_micros(7));
        h.observe(Duration::from_micros(30));
        h.observe(Duration::from_secs(3));
        let mut totals = Totals::default();
        totals.orders[2] = 5;
        totals.errors[5] = 2;
        totals.connections_refused = 7;
        totals.errors[7] = 6;
        totals.hung = 8;
        let text = render(
            &totals,
            &h.snapshot(),
            Gauges {
                resting_orders: 4,
                symbols: 1,
                connections_open: 3,
            },
        );
        for line in [
            "hft_orders_total{status=\"FILLED\"} 5",
            "hft_http_errors_total{code=\"422\"} 2",
            "hft_resting_orders 4",
            "hft_connections_open 3",
            "hft_connections_refused_total 7",
            "hft_http_errors_total{code=\"408\"} 0",
            "hft_http_errors_total{code=\"503\"} 6",
            "hft_orders_hung_total 8",
            "hft_order_handler_duration_seconds_bucket{le=\"0.000005\"} 0",
            "hft_order_handler_duration_seconds_bucket{le=\"0.00001\"} 1",
            "hft_order_handler_duration_seconds_bucket{le=\"0.00005\"} 2",
            "hft_order_handler_duration_seconds_bucket{le=\"1\"} 2",
            "hft_order_handler_duration_seconds_bucket{le=\"+Inf\"} 3",
            "hft_order_handler_duration_seconds_count 3",
            "hft_order_handler_duration_seconds_sum 3.000037",
            "# TYPE hft_order_handler_duration_seconds histogram",
        ] {
            assert!(
                text.lines().any(|l| l == line),
                "missing {line:?} in\n{text}"
            );
        }
    }
}
