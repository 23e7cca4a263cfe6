//! The binary's contract: the startup line, flags, and exit 0 on SIGTERM / SIGINT.

use std::process::{Child, Command};

#[allow(dead_code)] // spawn_binary only.
mod common;

fn start(args: &[&str]) -> (Child, String) {
    common::spawn_binary(args)
}

fn signal(child: &Child, name: &str) {
    let status = Command::new("kill")
        .args([&format!("-{name}"), &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

fn port_of(line: &str) -> u16 {
    let rest = line
        .strip_prefix("hft-server listening on http://127.0.0.1:")
        .unwrap_or_else(|| panic!("unexpected startup line {line:?}"));
    rest.trim_end().parse().unwrap()
}

async fn health(port: u16) -> u16 {
    reqwest::get(format!("http://127.0.0.1:{port}/health"))
        .await
        .unwrap()
        .status()
        .as_u16()
}

#[tokio::test]
async fn prints_the_port_serves_and_exits_0_on_sigterm() {
    let (mut child, line) = start(&["--addr", "127.0.0.1:0", "--workers", "1"]);
    let port = port_of(&line);
    assert_ne!(port, 0);
    assert_eq!(health(port).await, 200);
    signal(&child, "TERM");
    assert_eq!(child.wait().unwrap().code(), Some(0));
}

#[tokio::test]
async fn exits_0_on_sigint() {
    let (mut child, line) = start(&["--addr", "127.0.0.1:0", "--inject-delay-us", "5"]);
    assert_eq!(health(port_of(&line)).await, 200);
    signal(&child, "INT");
    assert_eq!(child.wait().unwrap().code(), Some(0));
}

#[tokio::test]
async fn the_calibration_knobs_parse_and_the_server_takes_orders() {
    let (mut child, line) = start(&[
        "--addr",
        "127.0.0.1:0",
        "--inject-delay-us",
        "0.5",
        "--inject-delay-min-connections",
        "2",
        "--inject-stall-us",
        "5",
        "--inject-stall-every",
        "2",
        "--inject-after-reply-us",
        "5",
        "--inject-contention-us",
        "5",
        "--inject-after-s",
        "0",
    ]);
    let port = port_of(&line);
    let order = r#"{"buy_sell":"buy","symbol":7,"price":10.00,"quantity":1,"market_type":"common","price_type":"limit","time_in_force":"ioc","order_type":"stock","user_def":"","client_timestamp":"2026-11-22T10:00:00Z"}"#;
    let client = reqwest::Client::new();
    for _ in 0..3 {
        let answer = client
            .post(format!("http://127.0.0.1:{port}/order"))
            .header("content-type", "application/json")
            .body(order)
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status().as_u16(), 200);
    }
    signal(&child, "TERM");
    assert_eq!(child.wait().unwrap().code(), Some(0));
}

#[tokio::test]
async fn sigterm_exits_by_the_shutdown_deadline_with_a_slow_client_attached() {
    let (mut child, line) = start(&[
        "--addr",
        "127.0.0.1:0",
        "--shutdown-timeout-ms",
        "1000",
        "--header-read-timeout-ms",
        "60000",
    ]);
    let port = port_of(&line);
    let mut slow = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    std::io::Write::write_all(&mut slow, b"POST /order HTTP/1.1\r\nHost: x\r\nX-Slow: a").unwrap();
    // Served after the slow one was accepted: the slow one is attached.
    assert_eq!(health(port).await, 200);
    let started = std::time::Instant::now();
    signal(&child, "TERM");
    assert_eq!(child.wait().unwrap().code(), Some(0));
    let took = started.elapsed();
    assert!(
        took >= std::time::Duration::from_millis(900) && took.as_secs() < 5,
        "exited after {took:?}, deadline 1 s"
    );
}

#[test]
fn bad_flags_fail_with_a_message_naming_the_flag() {
    for args in [
        &["--workers", "0"][..],
        &["--max-resting-per-symbol", "0"],
        &["--addr", "not-an-address"],
        &["--inject-delay-us=-1"],
        &["--inject-delay-us", "soon"],
        &["--inject-delay-us", "NaN"],
        &["--inject-delay-us", "2000000"],
        &["--inject-delay-min-connections", "many"],
        &["--inject-after-s", "soon"],
        &["--inject-after-reply-us", "soon"],
        &["--inject-after-reply-us=-1"],
        &["--inject-contention-us", "1.5"],
        &["--inject-contention-us=-1"],
        &["--inject-fail-every=-1"],
        &["--inject-fail-min-connections", "some"],
        &["--inject-crash-after", "soon"],
        &["--inject-hang-every", "1.5"],
        &["--workers", "many"],
        &["--max-fills-per-order", "0"],
        &["--max-connections", "0"],
        &["--header-read-timeout-ms", "soon"],
        &["--shutdown-timeout-ms=-1"],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_hft-server"))
            .args(args)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        let flag = args[0].split('=').next().unwrap();
        assert!(stderr.contains(flag), "{args:?}: {stderr}");
    }
}

#[test]
fn an_address_in_use_is_a_clear_error() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let out = Command::new(env!("CARGO_BIN_EXE_hft-server"))
        .args(["--addr", &addr])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&addr) && stderr.contains("--addr"),
        "{stderr}"
    );
}

/// Each worker thread's allowed CPUs ("0", "1", ...), from /proc, sorted (the workers
/// start at once, so which one takes which CPU of the list is a race; how many per CPU is not).
fn worker_cpus(child: &Child) -> Vec<String> {
    let mut tasks: Vec<u32> = std::fs::read_dir(format!("/proc/{}/task", child.id()))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().parse().unwrap())
        .collect();
    tasks.sort_unstable();
    let mut cpus = Vec::new();
    for tid in tasks {
        let status =
            std::fs::read_to_string(format!("/proc/{}/task/{tid}/status", child.id())).unwrap();
        let field = |name: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(name))
                .map(|v| v.trim().to_string())
                .unwrap()
        };
        if field("Name:") == "hft-worker" {
            cpus.push(field("Cpus_allowed_list:"));
        }
    }
    cpus.sort();
    cpus
}

/// worker_cpus once all `n` workers exist and each has pinned itself (a thread pins itself
/// first thing, but it may not have run yet when /proc is read); the last reading after 5 s.
fn settled_worker_cpus(child: &Child, n: usize) -> Vec<String> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        let cpus = worker_cpus(child);
        let pinned = cpus.len() == n && cpus.iter().all(|c| !c.contains([',', '-']));
        if pinned || std::time::Instant::now() > deadline {
            return cpus;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

#[tokio::test]
async fn cpus_pins_one_worker_to_each_cpu_in_turn() {
    let (mut child, line) = start(&["--addr", "127.0.0.1:0", "--cpus", "1,0", "--workers", "3"]);
    assert_eq!(health(port_of(&line)).await, 200);
    assert_eq!(settled_worker_cpus(&child, 3), vec!["0", "1", "1"]);
    signal(&child, "TERM");
    assert_eq!(child.wait().unwrap().code(), Some(0));

    // Without --workers: one worker per CPU of the list.
    let (mut child, line) = start(&["--addr", "127.0.0.1:0", "--cpus", "0"]);
    assert_eq!(health(port_of(&line)).await, 200);
    assert_eq!(settled_worker_cpus(&child, 1), vec!["0"]);
    signal(&child, "TERM");
    assert_eq!(child.wait().unwrap().code(), Some(0));
}

#[test]
fn cpus_the_machine_lacks_exit_2_naming_them() {
    let out = Command::new(env!("CARGO_BIN_EXE_hft-server"))
        .args(["--addr", "127.0.0.1:0", "--cpus", "1000"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--cpus [1000]") && err.contains("cpu/online"),
        "{err}"
    );
    let bad = Command::new(env!("CARGO_BIN_EXE_hft-server"))
        .args(["--cpus", "2-x"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("\"2-x\" is not a CPU number"));
}
