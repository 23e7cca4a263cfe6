//! Open loop: order `i` of the run (warm-up included) is due at `t0 + i / R`, and it must
//! leave finer than 50 µs after that. tokio's timer wheel has a 1 ms tick and rounds
//! every deadline *up*, so `sleep_until(due)` in a worker wakes up to 1 ms late (the
//! flaw of wrk2), and spinning in every worker burns the cores the server needs.
//! Instead one pacer OS thread, with its timer slack cut to 1 ns, sleeps with
//! `nanosleep` until [`SPIN_WINDOW`] before each due time, spins the rest, and hands the
//! order number to the workers over a channel. A worker that is busy simply leaves the
//! order to another one; an order that waits in the channel is late, and its latency
//! still counts from its due time (coordinated omission corrected).
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Covers nanosleep's wake-up latency with a 1 ns timer slack on a busy machine.
pub const SPIN_WINDOW: Duration = Duration::from_micros(60);

/// Longest single sleep, so SIGINT is noticed promptly even at very low rates.
const MAX_NAP: Duration = Duration::from_millis(50);

/// Due orders not yet taken by a worker; when full, the pacer waits (and orders are late).
const BACKLOG: usize = 4096;

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

/// Starts the pacer thread for orders `start..end`: each is sent on the returned channel
/// at its due time; none due at or after `deadline`; the channel closes when the pacer
/// is done (or `stop` is set), after the workers have drained it.
pub fn spawn_pacer(
    schedule: Schedule,
    start: u64,
    end: u64,
    deadline: Option<Instant>,
    stop: Arc<AtomicBool>,
) -> std::io::Result<(async_channel::Receiver<u64>, JoinHandle<()>)> {
    let (tx, rx) = async_channel::bounded(BACKLOG);
    let pacer = std::thread::Builder::new()
        .name("pacer".into())
        .spawn(move || {
            fine_timer_slack();
            for k in start..end {
                let due = schedule.due(k);
                if deadline.is_some_and(|d| due >= d)
                    || !sleep_until(due, &stop)
                    || tx.send_blocking(k).is_err()
                {
                    break;
                }
            }
        })?;
    Ok((rx, pacer))
}

/// Blocks the calling thread until `due`: nanosleep, then spin; false if `stop` was set.
pub fn sleep_until(due: Instant, stop: &AtomicBool) -> bool {
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
            std::thread::sleep((left - SPIN_WINDOW).min(MAX_NAP));
        } else {
            std::hint::spin_loop();
        }
    }
}

/// Linux pads every sleep by the thread's timer slack (50 µs by default); 1 ns lets
/// nanosleep wake within a few µs, so the spin stays short.
fn fine_timer_slack() {
    #[cfg(target_os = "linux")]
    // SAFETY: prctl(PR_SET_TIMERSLACK) only changes this thread's timer slack.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong);
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

    #[test]
    fn stop_ends_the_wait() {
        assert!(!sleep_until(
            Instant::now() + Duration::from_secs(3600),
            &AtomicBool::new(true)
        ));
    }

    #[test]
    fn never_returns_before_the_due_time() {
        let stop = AtomicBool::new(false);
        for micros in [30, 700, 3_000] {
            let due = Instant::now() + Duration::from_micros(micros);
            assert!(sleep_until(due, &stop));
            assert!(Instant::now() >= due);
        }
    }

    #[test]
    fn the_pacer_releases_each_order_once_in_order_and_honours_the_deadline() {
        let t0 = Instant::now();
        let s = Schedule::new(t0, 10_000.0);
        let stop = Arc::new(AtomicBool::new(false));
        let (rx, pacer) = spawn_pacer(s, 5, 25, Some(s.due(20)), stop).unwrap();
        let mut got = Vec::new();
        while let Ok(k) = rx.recv_blocking() {
            assert!(Instant::now() >= s.due(k));
            got.push(k);
        }
        pacer.join().unwrap();
        assert_eq!(got, (5..20).collect::<Vec<_>>());
    }
}
