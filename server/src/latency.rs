//! The `POST /order` handler-latency histogram: recording, merging shards, snapshots.
//!
//! A fixed set of buckets of atomic counters (the Prometheus buckets of `/metrics`): one
//! atomic add per observation, no lock.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Bucket upper bounds in nanoseconds, from 5 µs to 1 s (Prometheus `le`, in seconds).
pub const BUCKETS_NS: [u64; 17] = [
    5_000,
    10_000,
    25_000,
    50_000,
    100_000,
    250_000,
    500_000,
    1_000_000,
    2_500_000,
    5_000_000,
    10_000_000,
    25_000_000,
    50_000_000,
    100_000_000,
    250_000_000,
    500_000_000,
    1_000_000_000,
];

/// A latency histogram with Prometheus buckets.
#[derive(Default)]
pub struct Histogram {
    /// Observations per bucket (not cumulative); the last slot is above the largest bound.
    counts: [AtomicU64; BUCKETS_NS.len() + 1],
    /// Sum of all observations in nanoseconds, for `_sum`.
    sum_ns: AtomicU64,
}

/// A histogram's numbers at one moment.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HistogramSnapshot {
    /// Per-bucket counts, not cumulative, `BUCKETS_NS.len() + 1` long.
    pub counts: Vec<u64>,
    /// Sum of observations in nanoseconds.
    pub sum_ns: u64,
}

impl HistogramSnapshot {
    /// Adds `other` bucket by bucket (merging the shards of one histogram).
    pub fn add(&mut self, other: &HistogramSnapshot) {
        if self.counts.len() < other.counts.len() {
            self.counts.resize(other.counts.len(), 0);
        }
        for (mine, theirs) in self.counts.iter_mut().zip(&other.counts) {
            *mine += theirs;
        }
        self.sum_ns += other.sum_ns;
    }
}

impl Histogram {
    pub fn observe(&self, elapsed: Duration) {
        let ns = u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX);
        let bucket = BUCKETS_NS.partition_point(|&bound| bound < ns);
        self.counts[bucket].fetch_add(1, Ordering::Relaxed);
        self.sum_ns.fetch_add(ns, Ordering::Relaxed);
    }

    pub fn snapshot(&self) -> HistogramSnapshot {
        HistogramSnapshot {
            counts: self
                .counts
                .iter()
                .map(|c| c.load(Ordering::Relaxed))
                .collect(),
            sum_ns: self.sum_ns.load(Ordering::Relaxed),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn observations_land_in_the_first_bucket_at_or_above_them() {
        let h = Histogram::default();
        h.observe(Duration::from_nanos(5_000)); // le=5e-6 includes the bound
        h.observe(Duration::from_nanos(5_001));
        h.observe(Duration::from_secs(2)); // above every bound
        let s = h.snapshot();
        assert_eq!(s.counts[0], 1);
        assert_eq!(s.counts[1], 1);
        assert_eq!(s.counts[BUCKETS_NS.len()], 1);
        assert_eq!(s.sum_ns, 2_000_010_001);
    }
}
