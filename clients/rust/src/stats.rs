//! Pure functions over HdrHistograms: the per-worker histogram shape, the merge after the
//! run, and the latency summary in microseconds. Workers never compute statistics.
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
}
