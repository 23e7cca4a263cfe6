//! The stats stage: each worker's record ([`Report`]: its histograms and error counts),
//! the merge of the records after the run, and the latency summary in microseconds, all
//! pure functions. Workers only record; they never compute statistics.
use hdrhistogram::Histogram;
use serde::Serialize;

/// Lowest trackable value: 1 ns.
pub const LOWEST_NS: u64 = 1;
/// Highest trackable value: 60 s; longer latencies saturate here.
pub const HIGHEST_NS: u64 = 60_000_000_000;
/// Significant decimal digits of every histogram.
pub const SIGFIG: u8 = 3;

/// An empty histogram of the contract's shape (1 ns .. 60 s, 3 digits, nanoseconds).
pub fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(LOWEST_NS, HIGHEST_NS, SIGFIG)
        .expect("the contract's bounds are valid")
}

/// The sum of `parts`, as one histogram of the contract's shape.
pub fn merge<'a>(parts: impl IntoIterator<Item = &'a Histogram<u64>>) -> Histogram<u64> {
    let mut total = new_histogram();
    for part in parts {
        // Same bounds everywhere, so adding can never leave the range.
        total.add(part).expect("histograms of the same shape add");
    }
    total
}

/// Failed orders by kind (Contract 2's `error_kinds`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct ErrorKinds {
    pub connect: u64,
    pub timeout: u64,
    pub http_4xx: u64,
    pub http_5xx: u64,
    pub other: u64,
}

/// Why one order failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    Connect,
    Timeout,
    Http4xx,
    Http5xx,
    Other,
}

impl ErrorKinds {
    pub fn count(&mut self, failure: Failure) {
        match failure {
            Failure::Connect => self.connect += 1,
            Failure::Timeout => self.timeout += 1,
            Failure::Http4xx => self.http_4xx += 1,
            Failure::Http5xx => self.http_5xx += 1,
            Failure::Other => self.other += 1,
        }
    }

    pub fn total(&self) -> u64 {
        self.connect + self.timeout + self.http_4xx + self.http_5xx + self.other
    }

    pub fn add(&mut self, other: &ErrorKinds) {
        self.connect += other.connect;
        self.timeout += other.timeout;
        self.http_4xx += other.http_4xx;
        self.http_5xx += other.http_5xx;
        self.other += other.other;
    }
}

/// What one worker hands back after the phase.
pub struct Report {
    /// Latency (ns) of successful orders: from the intended send time in open loop,
    /// from the actual send in closed loop.
    pub latency: Histogram<u64>,
    /// Open loop only: latency (ns) from the actual send.
    pub uncorrected: Option<Histogram<u64>>,
    /// Open loop only: send lateness (ns) = actual send - intended send, every measured
    /// order (failed ones too): how far the generator fell behind its schedule.
    pub lateness: Option<Histogram<u64>>,
    pub errors: ErrorKinds,
    /// Orders sent (successful or not).
    pub sent: u64,
}

/// Every worker's record added into one: histograms merged, counts summed. `open_loop`
/// gives the result its uncorrected and lateness histograms (empty when no worker recorded one).
pub fn merge_reports(reports: &[Report], open_loop: bool) -> Report {
    let mut errors = ErrorKinds::default();
    for r in reports {
        errors.add(&r.errors);
    }
    Report {
        latency: merge(reports.iter().map(|r| &r.latency)),
        uncorrected: open_loop
            .then(|| merge(reports.iter().filter_map(|r| r.uncorrected.as_ref()))),
        lateness: open_loop.then(|| merge(reports.iter().filter_map(|r| r.lateness.as_ref()))),
        errors,
        sent: reports.iter().map(|r| r.sent).sum(),
    }
}

/// `latency_us` of the result: microseconds, `None` (JSON null) when nothing was recorded.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LatencyUs {
    pub min: Option<f64>,
    pub mean: Option<f64>,
    pub stddev: Option<f64>,
    pub p50: Option<f64>,
    pub p90: Option<f64>,
    pub p95: Option<f64>,
    pub p99: Option<f64>,
    pub p999: Option<f64>,
    pub p9999: Option<f64>,
    pub max: Option<f64>,
}

/// Summarises a nanosecond histogram in microseconds.
pub fn latency_us(h: &Histogram<u64>) -> LatencyUs {
    if h.is_empty() {
        return LatencyUs {
            min: None,
            mean: None,
            stddev: None,
            p50: None,
            p90: None,
            p95: None,
            p99: None,
            p999: None,
            p9999: None,
            max: None,
        };
    }
    let us = |ns: f64| Some(ns / 1_000.0);
    let q = |quantile: f64| us(h.value_at_quantile(quantile) as f64);
    LatencyUs {
        min: us(h.min() as f64),
        mean: us(h.mean()),
        stddev: us(h.stdev()),
        p50: q(0.50),
        p90: q(0.90),
        p95: q(0.95),
        p99: q(0.99),
        p999: q(0.999),
        p9999: q(0.9999),
        max: us(h.max() as f64),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: Option<f64>, b: f64) -> bool {
        a.is_some_and(|a| (a - b).abs() <= b * 1e-3)
    }

    #[test]
    fn merge_adds_every_worker() {
        let mut a = new_histogram();
        let mut b = new_histogram();
        for v in 1..=500u64 {
            a.record(v * 1_000).unwrap();
        }
        for v in 501..=1000u64 {
            b.record(v * 1_000).unwrap();
        }
        let m = merge([&a, &b]);
        assert_eq!(m.len(), 1000);
        let s = latency_us(&m);
        // 1..=1000 µs uniformly: percentiles within 3 significant digits.
        assert!(close(s.min, 1.0), "{s:?}");
        assert!(close(s.p50, 500.0), "{s:?}");
        assert!(close(s.p90, 900.0), "{s:?}");
        assert!(close(s.p99, 990.0), "{s:?}");
        assert!(close(s.p999, 999.0), "{s:?}");
        assert!(close(s.max, 1000.0), "{s:?}");
        assert!(close(s.mean, 500.5), "{s:?}");
        assert!(close(s.stddev, 288.675), "{s:?}");
    }

    #[test]
    fn an_empty_run_is_all_null() {
        let s = latency_us(&merge([&new_histogram(), &new_histogram()]));
        assert_eq!(s.p50, None);
        let json = serde_json::to_value(s).unwrap();
        assert!(
            json.as_object().unwrap().values().all(|v| v.is_null()),
            "{json}"
        );
        assert_eq!(json.as_object().unwrap().len(), 10);
    }

    #[test]
    fn one_sample_is_every_percentile() {
        let mut h = new_histogram();
        h.record(250_000).unwrap();
        let s = latency_us(&h);
        for p in [s.min, s.p50, s.p9999, s.max] {
            assert!(close(p, 250.0), "{s:?}");
        }
        assert_eq!(s.stddev, Some(0.0));
    }

    #[test]
    fn values_beyond_sixty_seconds_saturate() {
        let mut h = new_histogram();
        h.saturating_record(u64::MAX);
        assert!(h.max() >= HIGHEST_NS && h.max() < HIGHEST_NS + HIGHEST_NS / 500);
    }

    #[test]
    fn error_kinds_add_up() {
        let mut a = ErrorKinds::default();
        for f in [
            Failure::Connect,
            Failure::Timeout,
            Failure::Timeout,
            Failure::Http4xx,
            Failure::Other,
        ] {
            a.count(f);
        }
        let mut b = ErrorKinds {
            http_5xx: 3,
            ..ErrorKinds::default()
        };
        b.add(&a);
        assert_eq!(
            b,
            ErrorKinds {
                connect: 1,
                timeout: 2,
                http_4xx: 1,
                http_5xx: 3,
                other: 1
            }
        );
        assert_eq!(b.total(), 8);
    }

    #[test]
    fn merge_reports_adds_every_workers_counts_and_histograms() {
        let part = |from: u64, to: u64, connect: u64| {
            let mut latency = new_histogram();
            let mut uncorrected = new_histogram();
            let mut lateness = new_histogram();
            for v in from..=to {
                latency.record(v * 1_000).unwrap();
                uncorrected.record(v * 500).unwrap();
                lateness.record(v).unwrap();
            }
            Report {
                latency,
                uncorrected: Some(uncorrected),
                lateness: Some(lateness),
                errors: ErrorKinds {
                    connect,
                    ..ErrorKinds::default()
                },
                sent: to - from + 1 + connect,
            }
        };
        let m = merge_reports(&[part(1, 500, 1), part(501, 1000, 2)], true);
        assert_eq!((m.sent, m.errors.connect, m.errors.total()), (1003, 3, 3));
        assert_eq!(m.latency.len(), 1000);
        assert!(close(latency_us(&m.latency).p50, 500.0));
        assert_eq!(m.uncorrected.as_ref().map(Histogram::len), Some(1000));
        assert_eq!(m.lateness.as_ref().map(Histogram::len), Some(1000));
        let closed = merge_reports(&[part(1, 10, 0)], false);
        assert!(closed.uncorrected.is_none() && closed.lateness.is_none());
    }
}
