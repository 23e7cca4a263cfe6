//! The injected faults (`--inject-fail-every`, `--inject-fail-min-connections`,
//! `--inject-crash-after`, `--inject-hang-every`): which valid order fails, hangs or ends
//! the process. Calibration knobs for checking that the regression gate counts failures
//! (a failed order, a dead or hung server) instead of measuring around them; never set in
//! a measured run of the product. Deciding only: `service.rs` acts on the answer.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::config::Config;

/// The exit status of `--inject-crash-after`: Rust's status for a panic, so the
/// harness reads it as a crash, not as a clean exit (0) or a bad flag (2).
pub const CRASH_STATUS: i32 = 101;

/// What an injected fault does to one valid order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// `--inject-fail-every`: answered 503, not matched.
    Fail,
    /// `--inject-hang-every`: never answered.
    Hang,
    /// `--inject-crash-after`: `after` orders came before it; the process ends now.
    Crash { after: u64 },
}

/// The fault settings and the counts that pick the orders, shared by every connection.
#[derive(Debug, Default)]
pub struct Faults {
    /// Fail one order in this many (0: none).
    fail_every: u64,
    /// Fail only while at least this many connections are open (0: always).
    fail_min_connections: usize,
    /// End the process at the order after this many (0: never).
    crash_after: u64,
    /// Never answer one order in this many (0: none).
    hang_every: u64,
    /// Orders that could have failed (with enough connections open), for every N-th.
    fail_counter: AtomicU64,
    /// Orders seen by `--inject-hang-every`, for every N-th.
    hang_counter: AtomicU64,
    /// Orders seen by `--inject-crash-after`; never reset (`/stats/reset` included).
    crash_counter: AtomicU64,
}

impl Faults {
    pub fn new(config: &Config) -> Self {
        Faults {
            fail_every: config.inject_fail_every,
            fail_min_connections: config.inject_fail_min_connections,
            crash_after: config.inject_crash_after,
            hang_every: config.inject_hang_every,
            ..Faults::default()
        }
    }

    /// Whether any fault is set: when none is, orders never call `next`.
    pub fn any(&self) -> bool {
        self.fail_every > 0 || self.crash_after > 0 || self.hang_every > 0
    }

    /// `--inject-fail-every`, as the 503's message quotes it.
    pub fn fail_every(&self) -> u64 {
        self.fail_every
    }

    /// Counts one valid order, `open_connections` open as it arrives, and says what
    /// happens to it. Each knob counts its own orders; an order two of them pick crashes
    /// rather than hangs, and hangs rather than fails.
    pub fn next(&self, open_connections: usize) -> Option<Fault> {
        let crash = self.crash_after > 0
            && self.crash_counter.fetch_add(1, Ordering::Relaxed) >= self.crash_after;
        let hang = every_nth(&self.hang_counter, self.hang_every);
        let fail = open_connections >= self.fail_min_connections
            && every_nth(&self.fail_counter, self.fail_every);
        if crash {
            Some(Fault::Crash {
                after: self.crash_after,
            })
        } else if hang {
            Some(Fault::Hang)
        } else if fail {
            Some(Fault::Fail)
        } else {
            None
        }
    }
}

/// Counts one order on `counter`; true for every `every`-th (never when `every` is 0).
fn every_nth(counter: &AtomicU64, every: u64) -> bool {
    every > 0 && counter.fetch_add(1, Ordering::Relaxed) % every == every - 1
}

/// `--inject-crash-after`: one last line on stderr, then the process ends at once with
/// `CRASH_STATUS`, as a crashing server would: no reply, no graceful shutdown. Exits
/// explicitly: a panic in a handler would be caught by tokio and end only that task.
pub fn crash(after: u64) -> ! {
    eprintln!("hft-server: injected crash after {after} orders (--inject-crash-after {after})");
    std::process::exit(CRASH_STATUS)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn faults(config: Config) -> Faults {
        Faults::new(&config)
    }

    #[test]
    fn nothing_is_injected_by_default() {
        let none = faults(Config::default());
        assert!(!none.any());
        assert!((0..1_000).all(|_| none.next(100).is_none()));
    }

    #[test]
    fn every_nth_order_fails() {
        let f = faults(Config {
            inject_fail_every: 3,
            ..Config::default()
        });
        assert!(f.any());
        let picked: Vec<_> = (0..9).map(|_| f.next(1)).collect();
        let fail = Some(Fault::Fail);
        assert_eq!(
            picked,
            [None, None, fail, None, None, fail, None, None, fail]
        );
    }

    #[test]
    fn failures_wait_for_enough_connections_and_count_only_those_orders() {
        let f = faults(Config {
            inject_fail_every: 2,
            inject_fail_min_connections: 3,
            ..Config::default()
        });
        assert!((0..10).all(|_| f.next(2).is_none()));
        let picked: Vec<_> = (0..4).map(|_| f.next(3)).collect();
        assert_eq!(picked, [None, Some(Fault::Fail), None, Some(Fault::Fail)]);
    }

    #[test]
    fn the_order_after_n_crashes_and_hang_beats_fail() {
        let f = faults(Config {
            inject_crash_after: 4,
            inject_hang_every: 2,
            inject_fail_every: 2,
            ..Config::default()
        });
        let picked: Vec<_> = (0..5).map(|_| f.next(1)).collect();
        let hang = Some(Fault::Hang);
        assert_eq!(
            picked,
            [None, hang, None, hang, Some(Fault::Crash { after: 4 })]
        );
    }
}
