//! `hft-server`: parses flags, sets up logging, prints the startup line and maps errors
//! to an exit status; the runtime, the workers, the pinning, binding and serving until
//! SIGINT/SIGTERM are the library's (`hft_server::runtime::serve`).

use std::io::{IsTerminal, Write};
use std::net::SocketAddr;
use std::num::NonZeroUsize;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use hft_server::runtime::{self, Threads};
use hft_server::{cpus, Config, Listen, Stall};

/// The order-entry server measured by hft-bench (see server/README.md).
#[derive(Parser, Debug)]
#[command(name = "hft-server", version, about)]
struct Args {
    /// Address to listen on; port 0 picks a free port (printed on startup).
    #[arg(long, default_value = "127.0.0.1:8080")]
    addr: SocketAddr,
    /// Serve on the TCP socket inherited as file descriptor N, already bound and listening
    /// (instead of --addr): whoever starts the server chooses where it is reached, and the
    /// server needs no network of its own. The startup line prints the socket's address.
    #[arg(long, value_name = "N", conflicts_with = "addr",
          value_parser = clap::value_parser!(i32).range(0..))]
    listen_fd: Option<i32>,
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
    /// regression gate catches it. A decimal to the nanosecond (0.5: 500 ns), so a slowdown
    /// can be set to a share of the gate's threshold on a server that answers in a few µs.
    #[arg(long, default_value = "0", value_name = "N", value_parser = parse_delay_us)]
    inject_delay_us: Duration,
    /// Apply --inject-delay-us only while at least C connections are open (0: always): a
    /// cost only a wide series shows.
    #[arg(long, default_value_t = 0, value_name = "C")]
    inject_delay_min_connections: usize,
    /// Busy-wait N microseconds in one order of every --inject-stall-every: a slowdown
    /// only the latency tail sees (P99 moves, P50 does not), to check the gate sees it.
    #[arg(long, default_value_t = 0, value_name = "N")]
    inject_stall_us: u64,
    /// Which orders --inject-stall-us stalls: one in N (counted over all connections).
    #[arg(long, default_value_t = 50, value_name = "N",
          value_parser = clap::value_parser!(u64).range(1..))]
    inject_stall_every: u64,
    /// Spend N microseconds of CPU for every order after its reply is handed to the
    /// connection, on the server's worker threads: work the reply does not wait for, which
    /// competes with later orders (an audit record, a metrics flush).
    #[arg(long, default_value_t = 0, value_name = "N")]
    inject_after_reply_us: u64,
    /// Busy-wait N microseconds per order under one server-wide lock, only while two or
    /// more connections are open: a cost only concurrency shows (a global lock).
    #[arg(long, default_value_t = 0, value_name = "N")]
    inject_contention_us: u64,
    /// Keep N bytes for every valid order that is matched, written so they are resident
    /// and never freed (/stats/reset included): memory retained per order, to check that
    /// the gate sees a leak.
    #[arg(long, default_value_t = 0, value_name = "N",
          value_parser = clap::value_parser!(u64).range(0..=1_048_576))]
    inject_leak_bytes: u64,
    /// Answer one valid order in N (counted over all connections) 503 instead of
    /// matching it (0: none): a failed order, to check that the gate counts failures.
    #[arg(long, default_value_t = 0, value_name = "N")]
    inject_fail_every: u64,
    /// Fail orders (--inject-fail-every) only while at least C connections are open
    /// (0: always): failures only under concurrency.
    #[arg(long, default_value_t = 0, value_name = "C")]
    inject_fail_min_connections: usize,
    /// After N valid orders (since the start; /stats/reset does not reset it), end the
    /// process at the next one: a last line on stderr, exit status 101 (0: never).
    #[arg(long, default_value_t = 0, value_name = "N")]
    inject_crash_after: u64,
    /// Never answer one valid order in N (counted over all connections; 0: none): a
    /// hung request, which the client's timeout ends while other connections go on.
    #[arg(long, default_value_t = 0, value_name = "N")]
    inject_hang_every: u64,
    /// Start the --inject-* costs and faults S seconds after the server started
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

/// `--inject-delay-us`: microseconds as a decimal, 0 ..= 1,000,000, whole nanoseconds.
fn parse_delay_us(text: &str) -> Result<Duration, String> {
    let us: f64 = text
        .parse()
        .map_err(|_| format!("'{text}' is not a number of microseconds (e.g. 2 or 0.5)"))?;
    if !(0.0..=1_000_000.0).contains(&us) {
        return Err(format!("{text} µs is outside 0 ..= 1000000"));
    }
    Ok(Duration::from_nanos((us * 1000.0).round() as u64))
}

impl Args {
    fn config(&self) -> Config {
        Config {
            max_resting_per_symbol: self.max_resting_per_symbol as usize,
            max_symbols: self.max_symbols as usize,
            inject_delay: self.inject_delay_us,
            inject_delay_min_connections: self.inject_delay_min_connections,
            inject_stall: (self.inject_stall_us > 0).then(|| Stall {
                delay: Duration::from_micros(self.inject_stall_us),
                every: self.inject_stall_every,
            }),
            inject_after_reply: Duration::from_micros(self.inject_after_reply_us),
            inject_contention: Duration::from_micros(self.inject_contention_us),
            inject_leak_bytes: self.inject_leak_bytes as usize,
            inject_fail_every: self.inject_fail_every,
            inject_fail_min_connections: self.inject_fail_min_connections,
            inject_crash_after: self.inject_crash_after,
            inject_hang_every: self.inject_hang_every,
            inject_after: Duration::from_secs(self.inject_after_s),
            max_fills_per_order: self.max_fills_per_order as usize,
            header_read_timeout: timeout(self.header_read_timeout_ms),
            body_read_timeout: timeout(self.body_read_timeout_ms),
            max_connections: self.max_connections as usize,
            shutdown_timeout: Duration::from_millis(self.shutdown_timeout_ms),
        }
    }
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
    let threads = Threads {
        // clap keeps --workers at 1 or more.
        workers: args.workers.and_then(|n| NonZeroUsize::new(n.into())),
        cpus: args.cpus.as_ref().map(|list| list.0.clone()),
    };
    let ready = |local: SocketAddr| {
        let mut stdout = std::io::stdout();
        // Scripts wait for this exact line: to learn the port of --addr, or (--listen-fd,
        // whose address the starter already knows) only that the server is ready.
        let _ = writeln!(stdout, "hft-server listening on http://{local}");
        let _ = stdout.flush();
    };
    let listen = args.listen_fd.map_or(Listen::Addr(args.addr), Listen::Fd);
    match runtime::serve(
        listen,
        args.config(),
        &threads,
        runtime::shutdown_signal(),
        ready,
    ) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("hft-server: {err}");
            // A setting to fix (CPUs, workers, address, descriptor) is 2, like a bad flag.
            match err {
                runtime::Error::Serve { .. } => ExitCode::FAILURE,
                _ => ExitCode::from(2),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_delay_is_microseconds_to_the_nanosecond() {
        assert_eq!(parse_delay_us("0.5"), Ok(Duration::from_nanos(500)));
        assert_eq!(parse_delay_us("2"), Ok(Duration::from_micros(2)));
        assert_eq!(parse_delay_us("0.0004"), Ok(Duration::ZERO));
        assert!(parse_delay_us("-0.5").is_err() && parse_delay_us("inf").is_err());
    }
}
