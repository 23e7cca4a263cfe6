//! Holds slow connections open against a server, the load for measuring a client's
//! latency with slowloris connections attached (server/README.md, "Limits"):
//!
//! ```text
//! cargo run --release -p hft-server --example slowloris -- --addr 127.0.0.1:8080 \
//!     --connections 500 --seconds 60
//! ```
//!
//! Each connection sends a request line and the start of a header, then one header byte
//! every `--interval-ms`, never finishing the head. The server cuts it after its
//! `--header-read-timeout-ms`; it is then reopened, so that `--connections` are held on
//! average. On exit it prints one line: how many it held on average, and how many the
//! server cut.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use clap::Parser;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::{interval, sleep, Instant, MissedTickBehavior};

/// Holds slowloris connections open against an hft-server.
#[derive(Parser, Debug)]
struct Args {
    /// The server's address.
    #[arg(long, default_value = "127.0.0.1:8080")]
    addr: SocketAddr,
    /// Connections to hold open at once.
    #[arg(long, default_value_t = 500)]
    connections: usize,
    /// How long to hold them.
    #[arg(long, default_value_t = 60)]
    seconds: u64,
    /// Pause between two header bytes on one connection.
    #[arg(long, default_value_t = 1_000)]
    interval_ms: u64,
}

/// What the connection tasks count, read by the sampler and the final line.
#[derive(Default)]
struct Tally {
    /// Connections open now (the head started, not yet closed by the server).
    held: AtomicU64,
    /// Connections opened in all.
    opened: AtomicU64,
    /// Connections the server closed.
    cut: AtomicU64,
    /// Connects that failed (refused, or out of file descriptors).
    failed: AtomicU64,
}

#[tokio::main]
async fn main() {
    let args = Args::parse();
    let tally = Arc::new(Tally::default());
    let end = Instant::now() + Duration::from_secs(args.seconds);
    let every = Duration::from_millis(args.interval_ms.max(1));
    for _ in 0..args.connections {
        tokio::spawn(hold(args.addr, every, end, Arc::clone(&tally)));
    }
    // Sample the connections held every 100 ms, for the average.
    let mut tick = interval(Duration::from_millis(100));
    tick.set_missed_tick_behavior(MissedTickBehavior::Delay);
    let (mut samples, mut sum, mut least, mut most) = (0u64, 0u64, u64::MAX, 0u64);
    while Instant::now() < end {
        tick.tick().await;
        let held = tally.held.load(Ordering::Relaxed);
        samples += 1;
        sum += held;
        least = least.min(held);
        most = most.max(held);
    }
    let load = |n: &AtomicU64| n.load(Ordering::Relaxed);
    println!(
        "slowloris: held {:.1} connections on average (min {}, max {}) of {} against {} over {} s; opened {}, cut by the server {}, failed connects {}",
        sum as f64 / samples.max(1) as f64,
        if samples == 0 { 0 } else { least },
        most,
        args.connections,
        args.addr,
        args.seconds,
        load(&tally.opened),
        load(&tally.cut),
        load(&tally.failed),
    );
}

/// One slot: a slow connection, reopened whenever the server closes it, until `end`.
async fn hold(addr: SocketAddr, every: Duration, end: Instant, tally: Arc<Tally>) {
    while Instant::now() < end {
        let Ok(mut tcp) = TcpStream::connect(addr).await else {
            tally.failed.fetch_add(1, Ordering::Relaxed);
            sleep(Duration::from_millis(100)).await;
            continue;
        };
        tally.opened.fetch_add(1, Ordering::Relaxed);
        let opened = Instant::now();
        let head = b"POST /order HTTP/1.1\r\nHost: slowloris\r\nX-Slow: ";
        if tcp.write_all(head).await.is_ok() {
            tally.held.fetch_add(1, Ordering::Relaxed);
            let closed = drip(&mut tcp, every, end).await;
            tally.held.fetch_sub(1, Ordering::Relaxed);
            if !closed {
                return;
            }
        }
        tally.cut.fetch_add(1, Ordering::Relaxed);
        // Closed at once (a connection cap): do not spin on reconnecting.
        if opened.elapsed() < Duration::from_secs(1) {
            sleep(Duration::from_millis(100)).await;
        }
    }
}

/// Writes one header byte every `every` until the server closes the connection (true)
/// or `end` (false).
async fn drip(tcp: &mut TcpStream, every: Duration, end: Instant) -> bool {
    let mut buf = [0u8; 512];
    loop {
        tokio::select! {
            // Any answer (a 4xx) or EOF or error means the server is done with it.
            _ = tcp.read(&mut buf) => return true,
            () = sleep(every) => {
                if Instant::now() >= end {
                    return false;
                }
                if tcp.write_all(b"a").await.is_err() {
                    return true;
                }
            }
        }
    }
}
