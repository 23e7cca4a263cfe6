//! `--inject-leak-bytes N`: N bytes kept for every matched order, resident and never freed,
//! `/stats/reset` included; the process's anonymous resident memory (/proc/<pid>/status
//! `RssAnon`) grows by about N per order, and without the knob it does not.
//!
//! The bounds are design guarantees, not a property of this machine: N = 16 KiB over 1,000
//! orders (16 MB) dwarfs what one keep-alive connection's orders leave in the allocator
//! (an IOC on an empty book rests nothing), and the kept bytes are written, so no kernel
//! can leave them unmapped.

use std::process::Child;

#[allow(dead_code)] // spawn_binary and order only.
mod common;

const N: usize = 16 * 1024;
const ORDERS: usize = 1_000;

/// The server binary on port 0 with `args`, one worker; its base URL.
fn start(args: &[&str]) -> (Child, String) {
    let (child, line) =
        common::spawn_binary(&[&["--addr", "127.0.0.1:0", "--workers", "1"], args].concat());
    let url = line
        .trim_end()
        .rsplit(' ')
        .next()
        .unwrap_or_else(|| panic!("unexpected startup line {line:?}"))
        .to_string();
    (child, url)
}

/// The anonymous resident memory of process `pid` in bytes (/proc/<pid>/status RssAnon).
fn rss_anon(pid: u32) -> usize {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status
        .lines()
        .find(|l| l.starts_with("RssAnon:"))
        .unwrap_or_else(|| panic!("no RssAnon in /proc/{pid}/status"));
    let kib: usize = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    kib * 1024
}

/// `count` IOC orders (nothing rests), one keep-alive connection.
async fn orders(client: &reqwest::Client, base: &str, count: usize) {
    let body = common::order("buy", 7, "10.00", 1, "limit", "ioc");
    for _ in 0..count {
        let response = client
            .post(format!("{base}/order"))
            .header("content-type", "application/json")
            .body(body.clone())
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        response.bytes().await.unwrap();
    }
}

/// Resident growth over ORDERS orders after a warm-up, and after a /stats/reset that follows.
async fn growth(args: &[&str]) -> (usize, usize) {
    let (mut child, base) = start(args);
    let client = reqwest::Client::new();
    orders(&client, &base, 200).await; // the connection, the worker's arena, the book
    let before = rss_anon(child.id());
    orders(&client, &base, ORDERS).await;
    let after = rss_anon(child.id());
    let reset = client
        .post(format!("{base}/stats/reset"))
        .send()
        .await
        .unwrap();
    assert_eq!(reset.status(), 200);
    let after_reset = rss_anon(child.id());
    child.kill().unwrap();
    child.wait().unwrap();
    (
        after.saturating_sub(before),
        after_reset.saturating_sub(before),
    )
}

#[tokio::test]
async fn leak_keeps_n_resident_bytes_per_order_past_a_reset() {
    let n = N.to_string();
    let (grown, kept) = growth(&["--inject-leak-bytes", &n]).await;
    let expected = N * ORDERS;
    assert!(
        grown >= expected * 9 / 10 && grown <= expected * 12 / 10,
        "{ORDERS} orders with --inject-leak-bytes {N} grew RssAnon by {grown} bytes, expected about {expected}"
    );
    assert!(
        kept >= expected * 9 / 10,
        "after /stats/reset only {kept} of the {grown} bytes stayed resident"
    );
}

#[tokio::test]
async fn without_the_knob_orders_leave_no_such_growth() {
    let (grown, _) = growth(&[]).await;
    assert!(
        grown < N * ORDERS / 8,
        "{ORDERS} orders without --inject-leak-bytes grew RssAnon by {grown} bytes"
    );
}

#[test]
fn the_leak_follows_inject_after() {
    let later = hft_server::OrderService::new(&hft_server::Config {
        inject_leak_bytes: 100,
        inject_after: std::time::Duration::from_secs(3_600),
        ..hft_server::Config::default()
    });
    let order = common::order("buy", 7, "10.00", 1, "limit", "ioc");
    later.place_order(order.as_bytes()).unwrap();
    assert_eq!(later.leak.kept(), 0);
    let now = hft_server::OrderService::new(&hft_server::Config {
        inject_leak_bytes: 100,
        ..hft_server::Config::default()
    });
    for _ in 0..3 {
        now.place_order(order.as_bytes()).unwrap();
    }
    now.reset();
    assert_eq!(now.leak.kept(), 300);
}
