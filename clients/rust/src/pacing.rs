//! Open loop: order `i` of the run (warm-up included) is due at `t0 + i / R`, and the
//! wait for it must be finer than 50 µs. tokio's timer wheel has a 1 ms tick and rounds
//! every deadline *up* to the next tick, so a plain `sleep_until(due)` wakes up to 1 ms
//! late — the flaw of wrk2. We sleep with tokio only until one tick plus a margin before
//! the due time, then spin, yielding to the runtime between clock reads so the other
//! connections' I/O keeps flowing.
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// tokio's timer resolution (1 ms) plus the ~200 µs margin the spin phase covers.
pub const SPIN_WINDOW: Duration = Duration::from_micros(1_200);

/// Longest single sleep, so SIGINT is noticed promptly even at very low rates.
const MAX_NAP: Duration = Duration::from_millis(50);

/// Intended send times of an open-loop run.
#[derive(Debug, Clone, Copy)]
pub struct Schedule {
    /// Intended send time of order 0 (the first warm-up order).
    pub t0: Instant,
    /// 1 / R in nanoseconds, as a float so fractional rates keep their exact spacing.
    interval_ns: f64,
}

impl Schedule {
    /// A schedule of `rate` orders/s starting at `t0`.
    pub fn new(t0: Instant, rate: f64) -> Schedule {
        Schedule {
            t0,
            interval_ns: 1e9 / rate,
        }
    }

    /// Intended send time of order `i`.
    pub fn due(&self, i: u64) -> Instant {
        // f64 keeps 53 bits: exact to the nanosecond for the first ~104 days of a run.
        self.t0 + Duration::from_nanos((i as f64 * self.interval_ns).round() as u64)
    }
}

/// Waits until `due`; returns false (early) when `stop` is set meanwhile.
pub async fn wait_until(due: Instant, stop: &AtomicBool) -> bool {
    loop {
        if stop.load(Ordering::Relaxed) {
            return false;
        }
        let now = Instant::now();
        if now >= due {
            return true;
        }
        let left = due - now;
        if left > SPIN_WINDOW {
            tokio::time::sleep((left - SPIN_WINDOW).min(MAX_NAP)).await;
        } else {
            tokio::task::yield_now().await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn due_times_are_i_over_rate() {
        let t0 = Instant::now();
        let s = Schedule::new(t0, 5000.0);
        assert_eq!(s.due(0), t0);
        assert_eq!(s.due(1) - t0, Duration::from_micros(200));
        assert_eq!(s.due(5000) - t0, Duration::from_secs(1));
        let third = Schedule::new(t0, 3.0);
        assert_eq!(third.due(1) - t0, Duration::from_nanos(333_333_333));
        assert_eq!(third.due(3) - t0, Duration::from_secs(1));
    }

    #[tokio::test]
    async fn a_due_time_in_the_past_returns_at_once() {
        let stop = AtomicBool::new(false);
        assert!(wait_until(Instant::now() - Duration::from_millis(5), &stop).await);
    }

    #[tokio::test]
    async fn stop_ends_the_wait_without_sending() {
        let stop = AtomicBool::new(true);
        assert!(!wait_until(Instant::now() + Duration::from_secs(3600), &stop).await);
    }

    #[tokio::test]
    async fn never_returns_before_the_due_time() {
        let stop = AtomicBool::new(false);
        for micros in [30, 700, 1_500, 3_000] {
            let due = Instant::now() + Duration::from_micros(micros);
            assert!(wait_until(due, &stop).await);
            assert!(Instant::now() >= due);
        }
    }
}
