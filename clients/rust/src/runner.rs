//! The run: probe the server, warm up, measure, merge, build the result.
//! Warm-up and measurement are two phases over the same connection pools, so the
//! measured orders always find warm connections and `duration_s` covers only them.
//!
//! The connections are split over `Shard`s: one OS thread per core, each with its own
//! current-thread tokio runtime and its own reqwest client. A worker task, the hyper
//! connection task it talks to and the socket's readiness all live on one thread, so an
//! order costs no cross-thread wake-up (futex, work stealing); with one multi-thread
//! runtime they cost ~1 µs of CPU per order on a 2-core box.
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};

use reqwest::Client;
use tokio::net::TcpStream;
use tokio::sync::{mpsc, oneshot};

use crate::args::{Config, StopRule, Target};
use crate::pacing::{self, Schedule};
use crate::result::RunResult;
use crate::stats::{self, Report};
use crate::worker::{self, OrderRequest, Phase, Tickets};

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

/// The HTTP/1.1 client of one shard: a keep-alive pool of `connections`, Nagle off, no
/// proxies, no redirects (a 3xx answer to an order is an error of kind `other`, not a
/// second request).
pub fn http_client(config: &Config, connections: usize) -> Result<Client, String> {
    Client::builder()
        .http1_only()
        .redirect(reqwest::redirect::Policy::none())
        .tcp_nodelay(true)
        .pool_max_idle_per_host(connections)
        .pool_idle_timeout(None)
        .connect_timeout(config.timeout)
        .no_proxy()
        .build()
        .map_err(|e| format!("cannot build the HTTP client ({e}); check --url"))
}

/// Warm-up then the measured phase over `threads` shards (at most one per connection);
/// returns the result of the measured phase.
pub async fn run(
    config: &Config,
    threads: usize,
    stop: Arc<AtomicBool>,
) -> Result<RunResult, String> {
    let shards = start_shards(config, threads)?;
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
            seed: config.seed,
            timeout: config.timeout,
            tickets,
            record,
            stop: Arc::clone(&stop),
        };
        Ok((phase, pacer))
    };
    if config.warmup > 0 {
        run_phase(&shards, phase(0, config.warmup, None, false)?).await?;
    }
    let started_at = SystemTime::now();
    let measure_start = Instant::now();
    let (end, deadline) = match config.stop {
        StopRule::Orders(n) => (config.warmup.saturating_add(n), None),
        StopRule::Duration(d) => (u64::MAX, Some(measure_start + d)),
    };
    let reports = run_phase(&shards, phase(config.warmup, end, deadline, true)?).await?;
    let duration = measure_start.elapsed();
    let interrupted = stop.load(Ordering::Relaxed);
    let threads = shards.len();
    stop_shards(shards).await?;
    Ok(collect(
        config,
        threads,
        &reports,
        started_at,
        duration,
        interrupted,
    ))
}

/// One OS thread running a current-thread runtime: its own HTTP client (so its hyper
/// connection tasks live on it too) and `connections` worker tasks per phase.
struct Shard {
    jobs: mpsc::UnboundedSender<Job>,
    thread: JoinHandle<()>,
}

/// A phase handed to a shard; the reply carries its workers' reports.
struct Job {
    phase: Arc<Phase>,
    reply: oneshot::Sender<Result<Vec<Report>, String>>,
}

/// Starts `min(threads, connections)` shards, the connections spread evenly over them.
fn start_shards(config: &Config, threads: usize) -> Result<Vec<Shard>, String> {
    let count = threads.clamp(1, config.connections);
    (0..count)
        .map(|i| {
            let connections =
                config.connections / count + usize::from(i < config.connections % count);
            let client = http_client(config, connections)?;
            let order = Arc::new(OrderRequest::new(&client, &config.order_url)?);
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| {
                    format!("cannot start a tokio runtime ({e}); check ulimit -n and memory")
                })?;
            let (jobs, mut inbox) = mpsc::unbounded_channel::<Job>();
            let thread = std::thread::Builder::new()
                .name(format!("shard-{i}"))
                .spawn(move || {
                    runtime.block_on(async move {
                        while let Some(job) = inbox.recv().await {
                            let _ = job
                                .reply
                                .send(shard_phase(&job.phase, &client, &order, connections).await);
                        }
                    })
                })
                .map_err(|e| format!("cannot start a client thread ({e}); check ulimit -u"))?;
            Ok(Shard { jobs, thread })
        })
        .collect()
}

/// On a shard's runtime: one worker task per connection, all awaited.
async fn shard_phase(
    phase: &Arc<Phase>,
    client: &Client,
    order: &Arc<OrderRequest>,
    connections: usize,
) -> Result<Vec<Report>, String> {
    let tasks: Vec<_> = (0..connections)
        .map(|_| {
            tokio::spawn(worker::run(
                Arc::clone(phase),
                client.clone(),
                Arc::clone(order),
            ))
        })
        .collect();
    let mut reports = Vec::with_capacity(connections);
    for task in tasks {
        reports.push(
            task.await.map_err(|e| {
                format!("a worker task failed ({e}); this is a bug, please report it")
            })?,
        );
    }
    Ok(reports)
}

/// Runs one phase on every shard and waits for all of them (and the pacer).
async fn run_phase(
    shards: &[Shard],
    (phase, pacer): (Phase, Option<JoinHandle<()>>),
) -> Result<Vec<Report>, String> {
    let phase = Arc::new(phase);
    let mut replies = Vec::with_capacity(shards.len());
    for shard in shards {
        let (reply, answer) = oneshot::channel();
        shard
            .jobs
            .send(Job {
                phase: Arc::clone(&phase),
                reply,
            })
            .map_err(|_| "a client thread ended early; this is a bug, please report it")?;
        replies.push(answer);
    }
    let mut reports = Vec::new();
    for answer in replies {
        let shard_reports = answer
            .await
            .map_err(|_| "a client thread ended early; this is a bug, please report it")??;
        reports.extend(shard_reports);
    }
    // The workers only end once the pacer closed its channel (or SIGINT), so this is quick;
    // dropping the phase first unblocks a pacer waiting on a full channel.
    drop(phase);
    if let Some(pacer) = pacer {
        join_thread(pacer, "the pacer thread").await?;
    }
    Ok(reports)
}

/// Closes the shards' inboxes and waits for their threads (their runtimes and pools drop).
async fn stop_shards(shards: Vec<Shard>) -> Result<(), String> {
    for Shard { jobs, thread } in shards {
        drop(jobs);
        join_thread(thread, "a client thread").await?;
    }
    Ok(())
}

/// Joins an OS thread without blocking the caller's runtime.
async fn join_thread(thread: JoinHandle<()>, what: &str) -> Result<(), String> {
    tokio::task::spawn_blocking(move || thread.join())
        .await
        .map_err(|e| format!("{what} failed ({e}); this is a bug, please report it"))?
        .map_err(|_| format!("{what} panicked; this is a bug, please report it"))
}

/// The result document of the workers' reports, merged by the stats stage.
pub fn collect(
    config: &Config,
    threads: usize,
    reports: &[Report],
    started_at: SystemTime,
    duration: Duration,
    interrupted: bool,
) -> RunResult {
    let merged = stats::merge_reports(reports, config.rate.is_some());
    RunResult::new(
        config,
        threads,
        merged.sent,
        merged.errors,
        merged.latency,
        merged.uncorrected,
        merged.lateness,
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
