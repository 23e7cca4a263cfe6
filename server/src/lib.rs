//! hft-server: the order-entry HTTP server that hft-bench measures.
//!
//! # Layout
//!
//! - `book`: one limit order book, price-time priority, ROD / IOC / FOK, limit and
//!   market orders; pure and synchronous.
//! - `engine`: one book per symbol behind its own mutex, order ids, the caps that bound
//!   memory.
//! - `order`: the order types and their validation (422).
//! - `order_json`: the one pass over the `POST /order` body: a fast path for plain
//!   bodies (`order_json/fast.rs`), a serde reader for everything else (400 / 422 naming
//!   the field).
//! - `reply`: the order reply JSON, timestamps and `latency_ms`.
//! - `stats`: counters behind `/stats` (reset by snapshot) and `/metrics`.
//! - `metrics`: the handler-latency histogram and the Prometheus text format.
//! - `error`: the `{"error", "field"}` answer shared by every 4xx.
//! - `cpus`: `--cpus LIST`, the CPU list syntax and pinning a thread to CPUs.
//! - `routes`: the axum router and handlers.
//! - `serve`: the accept loop, hyper's HTTP/1 server per connection (half-closed
//!   connections answered, the header limits, graceful shutdown).
//! - `run` (here): serves the API on a listener until a shutdown future completes;
//!   `main.rs` only parses flags, binds, prints the startup line and calls it.

use std::future::Future;
use std::io;
use std::sync::Arc;
use std::time::Duration;

use axum::serve::ListenerExt;
use tokio::net::TcpListener;

pub mod book;
pub mod cpus;
pub mod engine;
pub mod error;
pub mod latency;
pub mod metrics;
pub mod order;
pub mod reply;
pub mod routes;
pub mod serve;
pub mod stats;

pub use routes::{router, AppState};

/// Server settings (the command-line flags other than `--addr` and `--workers`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// Resting orders one book may hold; a ROD order that would exceed it is REJECTED.
    pub max_resting_per_symbol: usize,
    /// Books (symbols) the server will create; an order for one more is REJECTED.
    pub max_symbols: usize,
    /// Busy-wait added to every order: a known slowdown for checking the regression gate.
    pub inject_delay: Duration,
    /// Busy-wait added to one order in `every`: a slowdown only the latency tail sees.
    pub inject_stall: Option<Stall>,
    /// The delay and the stall start this long after the server started (zero: at once):
    /// a drift planted in the middle of a soak, to check that its drift verdict sees it.
    pub inject_after: Duration,
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
            inject_stall: None,
            inject_after: Duration::ZERO,
        }
    }
}

/// Serves the API on `listener` until `shutdown` completes, then finishes the requests in
/// flight and returns.
pub async fn run(
    listener: TcpListener,
    config: Config,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> io::Result<()> {
    let state = Arc::new(AppState::new(&config));
    let app = router(Arc::clone(&state));
    // Replies are small and latency matters: no Nagle delay.
    let listener = listener.tap_io(|tcp| {
        if let Err(err) = tcp.set_nodelay(true) {
            tracing::debug!("could not set TCP_NODELAY: {err}");
        }
    });
    tracing::info!(?config, "serving");
    serve::connections(listener, app, state, shutdown).await;
    Ok(())
}
