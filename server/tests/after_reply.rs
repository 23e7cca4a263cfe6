//! `--inject-after-reply-us`: CPU work after each reply, which the reply does not wait
//! for and the server's CPU time shows (/proc/<pid>/stat of the binary, so that nothing
//! else of the test process is counted). Its own test binary: no other test of this file
//! competes for the host's cores with the server while its CPU time is read.
//!
//! The bounds are design guarantees, not a speed of this machine: the work runs until its
//! thread has used N of CPU time, however busy the host, and N = 200 ms dwarfs loopback,
//! the scheduling delays of a 2-core host with a core busy, and /proc's 10 ms ticks.

use std::process::Child;
use std::time::{Duration, Instant};

#[allow(dead_code)] // spawn_binary only.
mod common;

const N: Duration = Duration::from_millis(200);

/// An order in the clients' exact format (an IOC on an empty book: nothing rests).
const ORDER: &str = r#"{"buy_sell":"buy","symbol":7,"price":10.00,"quantity":1,"market_type":"common","price_type":"limit","time_in_force":"ioc","order_type":"stock","user_def":"hftbench","client_timestamp":"2026-11-22T10:00:00.123456Z"}"#;

/// The server binary on port 0 with `args`; its port.
fn start(args: &[&str]) -> (Child, u16) {
    let (child, line) = common::spawn_binary(&[&["--addr", "127.0.0.1:0"], args].concat());
    let port = line
        .trim_end()
        .rsplit(':')
        .next()
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("unexpected startup line {line:?}"));
    (child, port)
}

/// The CPU time (user + system) the process `pid` has used, from /proc/<pid>/stat.
fn cpu_time(pid: u32) -> Duration {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // The fields after the command name, which is in parentheses and may hold spaces:
    // utime and stime are fields 14 and 15 of the whole line, 11 and 12 after ")".
    let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 1..]
        .split_whitespace()
        .collect();
    let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    // SAFETY: sysconf only reads a configuration value.
    let per_second = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as u64;
    Duration::from_nanos(ticks * 1_000_000_000 / per_second)
}

/// The time the threads of process `pid` have run, to the nanosecond: the sum of the first
/// field of each /proc/<pid>/task/<tid>/schedstat (/proc/<pid>/stat counts 10 ms ticks).
fn run_time(pid: u32) -> Duration {
    let mut total = Duration::ZERO;
    for task in std::fs::read_dir(format!("/proc/{pid}/task")).unwrap() {
        let path = task.unwrap().path().join("schedstat");
        // A thread that ended between the listing and the read is skipped.
        let Ok(text) = std::fs::read_to_string(path) else {
            continue;
        };
        total += Duration::from_nanos(text.split_whitespace().next().unwrap().parse().unwrap());
    }
    total
}

/// Waits (at most 30 s) until the threads of `pid` have run `at_least`.
fn wait_for_run_time(pid: u32, at_least: Duration) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while run_time(pid) < at_least && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
}

async fn post_order(client: &reqwest::Client, base: &str) -> Duration {
    let started = Instant::now();
    let response = client
        .post(format!("{base}/order"))
        .header("content-type", "application/json")
        .body(ORDER)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    response.bytes().await.unwrap();
    started.elapsed()
}

#[tokio::test]
async fn after_reply_work_costs_server_cpu_but_not_the_reply() {
    // One worker: the work and the reply share it, and still the reply comes first.
    let n_us = N.as_micros().to_string();
    let (mut child, port) = start(&["--workers", "1", "--inject-after-reply-us", &n_us]);
    let base = format!("http://127.0.0.1:{port}");
    let client = reqwest::Client::new();
    // Opens the keep-alive connection; not an order, so no work after it.
    assert_eq!(
        client
            .get(format!("{base}/health"))
            .send()
            .await
            .unwrap()
            .status(),
        200
    );
    let before = cpu_time(child.id());
    let ran_before = run_time(child.id());
    let orders = 3;
    for i in 1..=orders {
        let reply = post_order(&client, &base).await;
        assert!(
            reply < N / 2,
            "order {i}: the reply took {reply:?}, waiting for the work"
        );
        // The next order is sent once this one's work is done (it works until its thread
        // has used N of CPU), so that it does not queue behind it on the one worker.
        wait_for_run_time(child.id(), ran_before + N * i);
    }
    // N per order and a little for the orders themselves, less /proc's cut to 10 ms ticks.
    let used = cpu_time(child.id()) - before;
    assert!(
        used >= N / 2 * orders,
        "{orders} orders cost the server {used:?} of CPU, expected about {:?}",
        N * orders
    );
    child.kill().unwrap();
    child.wait().unwrap();
}

#[test]
fn after_reply_work_is_off_by_default_and_waits_for_inject_after() {
    // Outside any runtime: spawning the work here would panic, so these spawn nothing.
    let off = hft_server::OrderService::new(&hft_server::Config::default());
    off.after_reply();
    let later = hft_server::OrderService::new(&hft_server::Config {
        inject_after_reply: N,
        inject_after: Duration::from_secs(3_600),
        ..hft_server::Config::default()
    });
    later.after_reply();
}
