//! hft-server: the order-entry HTTP server that hft-bench measures.
//!
//! # Layout
//!
//! - `book`: one limit order book, price-time priority, ROD / IOC / FOK, limit and
//!   market orders; pure and synchronous.
//! - `engine`: the matching engine: one book per symbol behind its own mutex, order ids,
//!   the caps that bound memory.
//! - `order`: the order type and its validation (422) in `order/mod.rs`; the fields, the
//!   string enums and their wire names in `order/field.rs`; the one pass over the
//!   `POST /order` body in `order/json.rs`: a fast path for plain bodies
//!   (`order/json/fast.rs`), a serde reader for everything else (400 / 422 naming the
//!   field).
//! - `reply`: the order reply JSON, timestamps and `latency_ms`.
//! - `latency`: the handler-latency histogram (recording, merging shards, snapshot).
//! - `counters`: the counters behind `/stats` (reset by snapshot) and `/metrics`, one
//!   shard per thread.
//! - `stats`: the `/stats` document, derived from the counters over a period.
//! - `metrics`: renders the Prometheus text of `/metrics`.
//! - `error`: the `{"error", "field"}` answer shared by every 4xx.
//! - `config`: the server settings (`Config`, `Stall`) and where it listens (`Listen`:
//!   `--addr` or an inherited socket, `--listen-fd`).
//! - `faults`: the injected faults (`--inject-fail-every`, `--inject-crash-after`,
//!   `--inject-hang-every`): which valid order fails, ends the process or hangs.
//! - `leak`: `--inject-leak-bytes`, memory kept for every matched order and never freed.
//! - `cpus`: `--cpus LIST`, the CPU list syntax and pinning a thread to CPUs.
//! - `service`: the order service: placing an order (parse, match, count, reply), the
//!   `--inject-*` calibration costs and faults, the `/stats` and `/metrics` figures,
//!   reset; no HTTP.
//! - `routes`: the axum router and handlers, mapping HTTP to the service (and the
//!   body-read timeout of `POST /order`).
//! - `serve`: `run`, which serves the API on a listener until a shutdown future
//!   completes (on the caller's runtime: what the tests start on port 0), and its accept
//!   loop, hyper's HTTP/1 server per connection (half-closed connections answered, the
//!   header limits, the header-read timeout, the connection cap, graceful shutdown with
//!   a deadline).
//! - `runtime`: the process around `run`: the tokio runtime and its worker threads
//!   (`--workers`), each pinned to its CPU (`--cpus`), binding `--addr` or taking the
//!   socket of `--listen-fd`, SIGINT/SIGTERM;
//!   `main.rs` only parses flags, sets up logging, prints the startup line and maps
//!   `runtime::serve`'s error to an exit status.
//!
//! Dependencies point one way (scripts/tests/server/test_structure_server.py checks it): no
//! module uses one that uses it back, and none uses an item of this root file.

pub mod book;
pub mod config;
pub mod counters;
pub mod cpus;
pub mod engine;
pub mod error;
pub mod faults;
pub mod latency;
pub mod leak;
pub mod metrics;
pub mod order;
pub mod reply;
pub mod routes;
pub mod runtime;
pub mod serve;
pub mod service;
pub mod stats;

pub use config::{Config, Listen, Stall};
pub use routes::router;
pub use runtime::{Threads, WORKER_THREAD};
pub use serve::run;
pub use service::{OrderService, Placed};
