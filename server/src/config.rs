//! The server's settings: where it listens (`--addr` or `--listen-fd`, as `Listen`), and
//! the command-line flags other than those, `--workers` and `--cpus` (`Config`), as
//! `main.rs` parsed them.

use std::net::SocketAddr;
use std::os::fd::RawFd;
use std::time::Duration;

/// Where the server takes connections.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Listen {
    /// `--addr`: bind and listen on this address (port 0: one the kernel picks).
    Addr(SocketAddr),
    /// `--listen-fd N`: a TCP socket already bound and listening, inherited as file
    /// descriptor N (the harness binds it, so the server needs no network of its own and
    /// cannot choose where it is reached). `runtime::serve` checks that it is one.
    Fd(RawFd),
}

impl From<SocketAddr> for Listen {
    fn from(addr: SocketAddr) -> Self {
        Listen::Addr(addr)
    }
}

/// Server settings (the command-line flags other than `--addr`, `--workers` and `--cpus`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// Resting orders one book may hold; a ROD order that would exceed it is REJECTED.
    pub max_resting_per_symbol: usize,
    /// Books (symbols) the server will create; an order for one more is REJECTED.
    pub max_symbols: usize,
    /// Busy-wait added to every order: a known slowdown for checking the regression gate.
    pub inject_delay: Duration,
    /// `inject_delay` applies to an order only while at least this many connections are
    /// open (0: always): a cost that appears only past some width, which the narrower
    /// series cannot see.
    pub inject_delay_min_connections: usize,
    /// Busy-wait added to one order in `every`: a slowdown only the latency tail sees.
    pub inject_stall: Option<Stall>,
    /// CPU time spent for every valid order after its reply is handed to the connection,
    /// on the runtime's worker threads: server CPU an order's own reply does not wait for
    /// (an audit record, a metrics flush), competing with later orders.
    pub inject_after_reply: Duration,
    /// Busy-wait done by every valid order under one server-wide lock, only while two
    /// or more connections are open: a cost that appears with concurrency alone (a global
    /// lock, a shared queue).
    pub inject_contention: Duration,
    /// Bytes kept for every valid order that is matched, written (so they are resident)
    /// and never freed, `/stats/reset` included (0: none): memory retained per order, for
    /// checking that the gate sees a head that keeps a little of every order.
    pub inject_leak_bytes: usize,
    /// One valid order in this many (counted over all connections) is answered 503
    /// instead of being matched (0: none): a failed order, for checking that the
    /// regression gate counts failures rather than measuring around them.
    pub inject_fail_every: u64,
    /// `inject_fail_every` picks orders only while at least this many connections are
    /// open (0: always): failures that only concurrency brings, which a one-connection
    /// series cannot see.
    pub inject_fail_min_connections: usize,
    /// After this many valid orders (since the start, never reset) the next one ends the
    /// process with status 101 and a last line on stderr (0: never): a server that dies
    /// mid-run, for checking that the gate reports the broken round and its last words.
    pub inject_crash_after: u64,
    /// One valid order in this many (counted over all connections) is never answered
    /// (0: none): a hung request, for checking that a client timeout is counted as a
    /// failure while the other connections go on.
    pub inject_hang_every: u64,
    /// The injected costs and faults start this long after the server started (zero: at
    /// once): a drift planted in the middle of a soak, to check that its drift verdict
    /// sees it.
    pub inject_after: Duration,
    /// Resting orders one incoming order may trade against (`--max-fills-per-order`):
    /// bounds the time one order holds its book's lock and the size of its reply.
    pub max_fills_per_order: usize,
    /// How long a request head may take to arrive, counted from when the connection is
    /// ready for it (so an idle keep-alive connection is closed after it too); `None`:
    /// no limit. Frees connections held by clients that send their headers slowly.
    pub header_read_timeout: Option<Duration>,
    /// How long a `POST /order` body may take to arrive once its head has; `None`: no
    /// limit. A body that stalls or trickles is answered 408 and its connection closed.
    pub body_read_timeout: Option<Duration>,
    /// Connections served at once; one more is accepted, closed at once and counted, so
    /// that clients holding connections cannot exhaust the server's file descriptors.
    pub max_connections: usize,
    /// After the shutdown future completes, how long connections get to finish their
    /// requests in flight before the ones still open are closed and `run` returns.
    pub shutdown_timeout: Duration,
}

/// `--inject-stall-us D --inject-stall-every N`: every N-th valid order waits D longer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stall {
    /// How long a stalled order busy-waits.
    pub delay: Duration,
    /// One order in this many is stalled (counted over all connections); at least 1.
    pub every: u64,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            max_resting_per_symbol: 100_000,
            max_symbols: 1_024,
            inject_delay: Duration::ZERO,
            inject_delay_min_connections: 0,
            inject_stall: None,
            inject_after_reply: Duration::ZERO,
            inject_contention: Duration::ZERO,
            inject_leak_bytes: 0,
            inject_fail_every: 0,
            inject_fail_min_connections: 0,
            inject_crash_after: 0,
            inject_hang_every: 0,
            inject_after: Duration::ZERO,
            max_fills_per_order: 1_000,
            header_read_timeout: Some(Duration::from_secs(10)),
            body_read_timeout: Some(Duration::from_secs(5)),
            max_connections: 4_096,
            shutdown_timeout: Duration::from_secs(3),
        }
    }
}
