//! `hft-server`: parses flags, binds, prints the startup line, serves until SIGINT/SIGTERM.

use std::io::{IsTerminal, Write};
use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use clap::Parser;
use hft_server::{cpus, Config, Stall};
use tokio::net::TcpListener;

/// The order-entry server measured by hft-bench (see server/README.md).
#[derive(Parser, Debug)]
#[command(name = "hft-server", version, about)]
struct Args {
    /// Address to listen on; port 0 picks a free port (printed on startup).
    #[arg(long, default_value = "127.0.0.1:8080")]
    addr: SocketAddr,
    /// Tokio worker threads [default: the CPUs of --cpus, else the CPUs it may use].
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..))]
    workers: Option<u16>,
    /// Run on these CPUs (e.g. 2-5 or 2,4,6), one worker thread pinned to each, round
    /// robin: for CPUs isolated with isolcpus, where the kernel does not spread threads.
    #[arg(long, value_name = "LIST", value_parser = parse_cpus)]
    cpus: Option<CpuList>,
    /// Resting orders one symbol's book may hold; further ROD orders are REJECTED.
    #[arg(long, default_value_t = Config::default().max_resting_per_symbol as u64,
          value_parser = clap::value_parser!(u64).range(1..=100_000_000))]
    max_resting_per_symbol: u64,
    /// Symbols (books) the server will create; orders for more are REJECTED.
    #[arg(long, default_value_t = Config::default().max_symbols as u64,
          value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    max_symbols: u64,
    /// Busy-wait N microseconds per order: a known slowdown, to check that the
    /// regression gate catches it.
    #[arg(long, default_value_t = 0, value_name = "N")]
    inject_delay_us: u64,
    /// Busy-wait N microseconds in one order of every --inject-stall-every: a slowdown
    /// only the latency tail sees (P99 moves, P50 does not), to check the gate sees it.
    #[arg(long, default_value_t = 0, value_name = "N")]
    inject_stall_us: u64,
    /// Which orders --inject-stall-us stalls: one in N (counted over all connections).
    #[arg(long, default_value_t = 50, value_name = "N",
          value_parser = clap::value_parser!(u64).range(1..))]
    inject_stall_every: u64,
    /// Start --inject-delay-us and --inject-stall-us S seconds after the server started
    /// (default 0: at once): a drift planted mid-soak, to check the soak's drift verdict.
    #[arg(long, default_value_t = 0, value_name = "S")]
    inject_after_s: u64,
    /// Resting orders one order may trade with; the rest of its quantity is cancelled (a
    /// fill-or-kill that needs more trades nothing), with a reason in the reply.
    #[arg(long, default_value_t = Config::default().max_fills_per_order as u64,
          value_name = "N", value_parser = clap::value_parser!(u64).range(1..=100_000_000))]
    max_fills_per_order: u64,
    /// Close a connection whose request head has not arrived within MS milliseconds of
    /// the connection being ready for it (slowloris; an idle keep-alive connection too).
    /// 0: no limit.
    #[arg(long, default_value_t = millis(Config::default().header_read_timeout),
          value_name = "MS")]
    header_read_timeout_ms: u64,
    /// Answer 408 and close when a POST /order body has not fully arrived within MS
    /// milliseconds of its head. 0: no limit.
    #[arg(long, default_value_t = millis(Config::default().body_read_timeout),
          value_name = "MS")]
    body_read_timeout_ms: u64,
    /// Connections served at once; one more is accepted and closed at once (counted in
    /// /stats connections_refused). Keep it below the open-file limit (ulimit -n).
    #[arg(long, default_value_t = Config::default().max_connections as u64,
          value_name = "N", value_parser = clap::value_parser!(u64).range(1..=10_000_000))]
    max_connections: u64,
    /// On SIGINT/SIGTERM, give requests in flight MS milliseconds to finish, then close
    /// the connections still open and exit.
    #[arg(long, default_value_t = Config::default().shutdown_timeout.as_millis() as u64,
          value_name = "MS")]
    shutdown_timeout_ms: u64,
}

/// A timeout flag's value: milliseconds, 0 for none.
fn millis(timeout: Option<Duration>) -> u64 {
    timeout.map_or(0, |t| t.as_millis() as u64)
}

/// A timeout from its flag: 0 is none.
fn timeout(ms: u64) -> Option<Duration> {
    (ms > 0).then(|| Duration::from_millis(ms))
}

#[derive(Clone, Debug)]
struct CpuList(Vec<usize>);

fn parse_cpus(text: &str) -> Result<CpuList, String> {
    cpus::parse_list(text).map(CpuList)
}

fn main() -> ExitCode {
    let args = Args::parse();
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .init();

    let pinned = args.cpus.map(|list| Arc::new(list.0));
    if let Some(list) = &pinned {
        // The whole list on this thread first: a CPU the machine lacks (or a cpuset
        // forbids) is one clear error here, not a worker quietly left unpinned.
        if let Err(err) = cpus::pin_current_thread(list) {
            eprintln!(
                "hft-server: cannot run on --cpus {list:?}: {err}; pass CPUs of /sys/devices/system/cpu/online"
            );
            return ExitCode::from(2);
        }
    }
    let workers = match (args.workers, &pinned) {
        (Some(n), _) => usize::from(n),
        (None, Some(list)) => list.len(),
        (None, None) => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    // Named so that top -H, perf and the tests tell the runtime's threads apart.
    builder
        .worker_threads(workers)
        .thread_name("hft-worker")
        .enable_all();
    if let Some(list) = pinned {
        let started = AtomicUsize::new(0);
        builder.on_thread_start(move || {
            let cpu = cpus::for_thread(&list, started.fetch_add(1, Ordering::Relaxed));
            if let Err(err) = cpus::pin_current_thread(&[cpu]) {
                tracing::warn!("cannot pin a worker thread to CPU {cpu}: {err}");
            }
        });
    }
    let runtime = match builder.build() {
        Ok(rt) => rt,
        Err(err) => {
            eprintln!("hft-server: cannot start {workers} worker threads: {err}; pass a smaller --workers");
            return ExitCode::from(2);
        }
    };
    let config = Config {
        max_resting_per_symbol: args.max_resting_per_symbol as usize,
        max_symbols: args.max_symbols as usize,
        inject_delay: Duration::from_micros(args.inject_delay_us),
        inject_stall: (args.inject_stall_us > 0).then(|| Stall {
            delay: Duration::from_micros(args.inject_stall_us),
            every: args.inject_stall_every,
        }),
        inject_after: Duration::from_secs(args.inject_after_s),
        max_fills_per_order: args.max_fills_per_order as usize,
        header_read_timeout: timeout(args.header_read_timeout_ms),
        body_read_timeout: timeout(args.body_read_timeout_ms),
        max_connections: args.max_connections as usize,
        shutdown_timeout: Duration::from_millis(args.shutdown_timeout_ms),
    };
    runtime.block_on(serve(args.addr, config))
}

async fn serve(addr: SocketAddr, config: Config) -> ExitCode {
    let listener = match TcpListener::bind(addr).await {
        Ok(listener) => listener,
        Err(err) => {
            eprintln!(
                "hft-server: cannot listen on {addr}: {err}; stop whatever uses it or pass --addr 127.0.0.1:0"
            );
            return ExitCode::from(2);
        }
    };
    let local = match listener.local_addr() {
        Ok(local) => local,
        Err(err) => {
            eprintln!("hft-server: cannot read the bound address of {addr}: {err}");
            return ExitCode::from(2);
        }
    };
    let mut stdout = std::io::stdout();
    // Scripts wait for this exact line to learn the port.
    let _ = writeln!(stdout, "hft-server listening on http://{local}");
    let _ = stdout.flush();
    match hft_server::run(listener, config, shutdown_signal()).await {
        Ok(()) => {
            tracing::info!("shut down cleanly");
            ExitCode::SUCCESS
        }
        Err(err) => {
            eprintln!("hft-server: serving on {local} failed: {err}");
            ExitCode::FAILURE
        }
    }
}

/// Completes on SIGINT or SIGTERM.
async fn shutdown_signal() {
    let ctrl_c = async {
        if let Err(err) = tokio::signal::ctrl_c().await {
            tracing::error!("cannot listen for SIGINT: {err}");
            std::future::pending::<()>().await;
        }
    };
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut sig) => {
                sig.recv().await;
            }
            Err(err) => {
                tracing::error!("cannot listen for SIGTERM: {err}");
                std::future::pending::<()>().await;
            }
        }
    };
    tokio::select! {
        () = ctrl_c => tracing::info!("SIGINT: shutting down"),
        () = term => tracing::info!("SIGTERM: shutting down"),
    }
}
