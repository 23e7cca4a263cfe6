//! hft-bench load client in Rust: reqwest + tokio (clients/README.md, Contracts 2 and 3).
//!
//! # Layout
//!
//! The client reads as args → workers → per-worker histograms → merge → result:
//!
//! - [`args`]: flags → a validated [`args::Config`]; every bad input becomes one line that
//!   names the flag and the fix (exit 2).
//! - [`order`]: the order stream, a pure function of `(seed, k)`, and the JSON body written
//!   into a reused buffer.
//! - [`pacing`]: open-loop intended send times and a wait finer than tokio's 1 ms timer.
//! - [`worker`]: one task per connection; one loop over the phase's [`worker::Tickets`],
//!   recording into its own [`stats::Report`] (histograms and error counts).
//! - [`runner`]: the reachability probe, the client threads (one current-thread runtime
//!   and reqwest client per core), the warm-up and measured phases, SIGINT.
//! - [`stats`]: each worker's [`stats::Report`] and pure functions over them: the merge
//!   of the reports after the run, the latency summary in µs.
//! - [`result`]: the result document (serde) and the HdrHistogram V2 deflate/base64 encoding.
//! - [`output`]: writes the result JSON and the `.hlog` interval log beside it.
//!
//! `main.rs` only parses flags, builds the runtime and calls [`runner::run`], so tests can
//! drive a whole run against a server on port 0.

pub mod args;
pub mod order;
pub mod output;
pub mod pacing;
pub mod result;
pub mod runner;
pub mod stats;
pub mod worker;

/// The binary's name, the prefix of every error line.
pub const NAME: &str = "client-rust";
