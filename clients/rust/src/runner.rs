//! The run: probe the server, warm up, measure, merge, build the result.
//! Warm-up and measurement are two phases over the same connection pool, so the
//! measured orders always find warm connections and `duration_s` covers only them.
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};

use reqwest::Client;
use tokio::net::TcpStream;

use crate::args::{Config, StopRule, Target};
use crate::pacing::{self, Schedule};
use crate::result::RunResult;
use crate::stats;
use crate::worker::{self, ErrorKinds, Phase, Report, Tickets};

/// The probe's deadline: below the contract's 2 s bound on exit 2, leaving room for
/// start-up and DNS.
pub const PROBE_DEADLINE: Duration = Duration::from_millis(1500);

/// The open-loop schedule starts this long after the pool is built, so order 0 is not
/// already late when the first worker is scheduled.
const SCHEDULE_LEAD: Duration = Duration::from_millis(1);

/// A TCP connect to the server within `deadline`; the error is the one exit-2 line.
pub async fn probe(target: &Target, deadline: Duration) -> Result<(), String> {
    let addr = format!("{}:{}", target.host, target.port);
    let why = match tokio::time::timeout(
        deadline,
        TcpStream::connect((target.host.as_str(), target.port)),
    )
    .await
    {
        Ok(Ok(_)) => return Ok(()),
        Ok(Err(err)) => io_reason(&err),
        Err(_) => format!("no answer within {:?}", deadline),
    };
    Err(format!(
        "cannot connect to {addr} ({why}); start bin/hft-server or pass --url"
    ))
}

/// "connection refused" rather than "Connection refused (os error 111)".
fn io_reason(err: &std::io::Error) -> String {
    let text = err.to_string();
    let text = text.split(" (os error").next().unwrap_or(&text);
    let mut chars = text.chars();
    chars
        .next()
        .map(|c| c.to_lowercase().chain(chars).collect())
        .unwrap_or_default()
}

/// The HTTP/1.1 client: a keep-alive pool of `connections`, Nagle off, no proxies, no
/// redirects (a 3xx answer to an order is an error of kind `other`, not a second request).
pub fn http_client(config: &Config) -> Result<Client, String> {
    Client::builder()
        .http1_only()
        .redirect(reqwest::redirect::Policy::none())
        .tcp_nodelay(true)
        .pool_max_idle_per_host(config.connections)
        .pool_idle_timeout(None)
        .connect_timeout(config.timeout)
        .no_proxy()
        .build()
        .map_err(|e| format!("cannot build the HTTP client ({e}); check --url"))
}

/// Warm-up then the measured phase; returns the result of the measured phase.
pub async fn run(
    config: &Config,
    runtime_threads: usize,
    stop: Arc<AtomicBool>,
) -> Result<RunResult, String> {
    let client = http_client(config)?;
    let schedule = config
        .rate
        .map(|rate| Schedule::new(Instant::now() + SCHEDULE_LEAD, rate));
    let phase = |start: u64,
                 end: u64,
                 deadline: Option<Instant>,
                 record: bool|
     -> Result<(Phase, Option<JoinHandle<()>>), String> {
        let (tickets, pacer) = match schedule {
            None => (
                Tickets::Counter {
                    next: AtomicU64::new(start),
                    end,
                    deadline,
                },
                None,
            ),
            Some(schedule) => {
                let (due, pacer) =
                    pacing::spawn_pacer(schedule, start, end, deadline, Arc::clone(&stop))
                        .map_err(|e| {
                            format!("cannot start the pacer thread ({e}); check ulimit -u")
                        })?;
                (Tickets::Paced { schedule, due }, Some(pacer))
            }
        };
        let phase = Phase {
            client: client.clone(),
            order_url: config.order_url.clone(),
            seed: config.seed,
            timeout: config.timeout,
            tickets,
            record,
            stop: Arc::clone(&stop),
        };
        Ok((phase, pacer))
    };
    if config.warmup > 0 {
        run_phase(phase(0, config.warmup, None, false)?, config.connections).await?;
    }
    let started_at = SystemTime::now();
    let measure_start = Instant::now();
    let (end, deadline) = match config.stop {
        StopRule::Orders(n) => (config.warmup.saturating_add(n), None),
        StopRule::Duration(d) => (u64::MAX, Some(measure_start + d)),
    };
    let reports = run_phase(
        phase(config.warmup, end, deadline, true)?,
        config.connections,
    )
    .await?;
    let duration = measure_start.elapsed();
    let interrupted = stop.load(Ordering::Relaxed);
    Ok(collect(
        config,
        runtime_threads,
        &reports,
        started_at,
        duration,
        interrupted,
    ))
}

/// Spawns one worker task per connection and waits for all of them (and the pacer).
async fn run_phase(
    (phase, pacer): (Phase, Option<JoinHandle<()>>),
    connections: usize,
) -> Result<Vec<Report>, String> {
    let phase = Arc::new(phase);
    let tasks: Vec<_> = (0..connections)
        .map(|_| tokio::spawn(worker::run(Arc::clone(&phase))))
        .collect();
    let mut reports = Vec::with_capacity(connections);
    for task in tasks {
        reports.push(
            task.await.map_err(|e| {
                format!("a worker task failed ({e}); this is a bug, please report it")
            })?,
        );
    }
    // The workers only end once the pacer closed its channel (or SIGINT), so this is quick;
    // dropping the phase first unblocks a pacer waiting on a full channel.
    drop(phase);
    if let Some(pacer) = pacer {
        tokio::task::spawn_blocking(move || pacer.join())
            .await
            .map_err(|e| format!("the pacer thread failed ({e}); this is a bug, please report it"))?
            .map_err(|_| {
                "the pacer thread panicked; this is a bug, please report it".to_string()
            })?;
    }
    Ok(reports)
}

/// Merges the workers' histograms and counts into the result document.
pub fn collect(
    config: &Config,
    runtime_threads: usize,
    reports: &[Report],
    started_at: SystemTime,
    duration: Duration,
    interrupted: bool,
) -> RunResult {
    let latency = stats::merge(reports.iter().map(|r| &r.latency));
    let uncorrected = config
        .rate
        .map(|_| stats::merge(reports.iter().filter_map(|r| r.uncorrected.as_ref())));
    let mut errors = ErrorKinds::default();
    for r in reports {
        errors.add(&r.errors);
    }
    let sent = reports.iter().map(|r| r.sent).sum();
    RunResult::new(
        config,
        runtime_threads,
        sent,
        errors,
        latency,
        uncorrected,
        started_at,
        duration,
        interrupted,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn probe_names_the_address_and_the_fix() {
        // Bind then drop: the port is free, so the connect is refused.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let target = Target {
            host: "127.0.0.1".into(),
            port,
        };
        let line = probe(&target, PROBE_DEADLINE).await.unwrap_err();
        assert!(
            line.starts_with(&format!("cannot connect to 127.0.0.1:{port} (")),
            "{line}"
        );
        assert!(
            line.ends_with("start bin/hft-server or pass --url"),
            "{line}"
        );
    }

    #[tokio::test]
    async fn probe_accepts_a_listening_server() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        probe(
            &Target {
                host: "127.0.0.1".into(),
                port,
            },
            PROBE_DEADLINE,
        )
        .await
        .unwrap();
    }
}
