//! The injected faults: `--inject-fail-every` (503), `--inject-fail-min-connections`,
//! `--inject-hang-every` (never answered) on servers started through the library on port
//! 0, and `--inject-crash-after` (exit 101) on the binary, whose exit it is. Connections
//! are raw keep-alive sockets, so that a test knows exactly how many are open.

#[allow(dead_code)] // TestServer, RawConnection, order and spawn_binary_piped only.
mod common;

use std::io::Read;
use std::process::Command;
use std::time::Duration;

use common::{order, RawConnection as Connection, TestServer};
use hft_server::Config;

/// The statuses of `n` orders sent one after another on `connection`, with the body of
/// every answer that is not 200 checked to be the usual JSON error naming the knob.
async fn statuses(connection: &mut Connection, n: usize) -> Vec<u16> {
    let mut codes = Vec::new();
    for _ in 0..n {
        let (code, body) = connection.order().await;
        if code != 200 {
            let error: serde_json::Value = serde_json::from_str(&body).unwrap();
            assert!(error["field"].is_null(), "{body}");
            let message = error["error"].as_str().unwrap();
            assert!(message.contains("--inject-fail-every"), "{body}");
        }
        codes.push(code);
    }
    codes
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_nth_valid_order_is_answered_503_and_still_counted() {
    let server = TestServer::start(Config {
        inject_fail_every: 4,
        ..Config::default()
    })
    .await;
    let mut connection = Connection::open(&server).await;
    // An invalid order is a 422 and not counted towards the N.
    let (code, _) = connection
        .ask("POST /order HTTP/1.1\r\nHost: t\r\nContent-Length: 2\r\n\r\n{}")
        .await;
    assert_eq!(code, 422);
    let codes = statuses(&mut connection, 12).await;
    let expected: Vec<u16> = (1..=12)
        .map(|i| if i % 4 == 0 { 503 } else { 200 })
        .collect();
    assert_eq!(codes, expected);
    let stats = connection.stats().await;
    assert_eq!(stats["total_orders"], 12, "{stats}");
    assert_eq!(stats["failed"], 3, "{stats}");
    assert_eq!(stats["accepted"], 9, "{stats}");
    assert_eq!(stats["cancelled"], 9, "{stats}");
    assert_eq!(stats["invalid_requests"], 1, "{stats}");
    assert_eq!(stats["hung"], 0, "{stats}");
    let (_, metrics) = connection
        .ask("GET /metrics HTTP/1.1\r\nHost: t\r\n\r\n")
        .await;
    assert!(
        metrics
            .lines()
            .any(|l| l == "hft_http_errors_total{code=\"503\"} 3"),
        "{metrics}"
    );
    drop(connection);
    server.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failures_come_only_while_enough_connections_are_open() {
    let server = TestServer::start(Config {
        inject_fail_every: 2,
        inject_fail_min_connections: 2,
        ..Config::default()
    })
    .await;
    let mut first = Connection::open(&server).await;
    assert_eq!(first.stats().await["connections_open"], 1);
    assert_eq!(statuses(&mut first, 10).await, [200; 10]);
    let mut second = Connection::open(&server).await;
    let mut third = Connection::open(&server).await;
    assert_eq!(third.stats().await["connections_open"], 3);
    // Only the orders sent with enough connections open count towards the N: every
    // second of them fails.
    let mut codes = Vec::new();
    for connection in [&mut first, &mut second, &mut third] {
        codes.extend(statuses(connection, 2).await);
    }
    assert_eq!(codes, [200, 503, 200, 503, 200, 503]);
    let stats = first.stats().await;
    assert_eq!(
        (stats["total_orders"].as_u64(), stats["failed"].as_u64()),
        (Some(16), Some(3))
    );
    drop((first, second, third));
    server.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn faults_wait_for_inject_after() {
    let server = TestServer::start(Config {
        inject_fail_every: 1,
        inject_hang_every: 1,
        inject_after: Duration::from_secs(3_600),
        ..Config::default()
    })
    .await;
    let mut connection = Connection::open(&server).await;
    assert_eq!(statuses(&mut connection, 5).await, [200; 5]);
    drop(connection);
    server.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hung_order_times_out_at_the_client_and_other_connections_go_on() {
    let server = TestServer::start(Config {
        inject_hang_every: 3,
        // The hung connection is still open when the server stops: closed after this.
        shutdown_timeout: Duration::from_millis(200),
        ..Config::default()
    })
    .await;
    let mut hung = Connection::open(&server).await;
    assert_eq!(statuses(&mut hung, 2).await, [200, 200]);
    let third = tokio::time::timeout(Duration::from_millis(500), hung.order()).await;
    assert!(third.is_err(), "the third order was answered: {third:?}");
    // A client gives up on the hung connection and opens another: it is served.
    let mut next = Connection::open(&server).await;
    assert_eq!(statuses(&mut next, 2).await, [200, 200]);
    let stats = next.stats().await;
    assert_eq!(stats["total_orders"], 5, "{stats}");
    assert_eq!(stats["hung"], 1, "{stats}");
    assert_eq!(stats["accepted"], 4, "{stats}");
    assert_eq!(stats["connections_open"], 2, "{stats}");
    // The sixth order hangs too, on the new connection.
    let sixth = tokio::time::timeout(Duration::from_millis(500), next.order()).await;
    assert!(sixth.is_err(), "the sixth order was answered: {sixth:?}");
    // The client closes the first hung connection; the server cannot tell (a half-closed
    // connection is still answered), so it stays open until the server stops.
    drop(hung);
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut third = Connection::open(&server).await;
    assert_eq!(third.stats().await["connections_open"], 3);
    drop((next, third));
    let stopped = tokio::time::timeout(Duration::from_secs(5), server.stop()).await;
    assert!(matches!(stopped, Ok(Ok(()))), "{stopped:?}");
}

/// POSTs one valid order to the binary on `port`; its status, or `None` when the
/// connection ended without an answer.
async fn post_order(client: &reqwest::Client, port: u16) -> Option<u16> {
    let answer = client
        .post(format!("http://127.0.0.1:{port}/order"))
        .body(order("buy", 7, "10.00", 1, "limit", "ioc"))
        .timeout(Duration::from_secs(10))
        .send()
        .await;
    answer.ok().map(|a| a.status().as_u16())
}

#[tokio::test]
async fn the_binary_exits_101_after_n_orders_with_its_last_words_on_stderr() {
    let (mut child, line) =
        common::spawn_binary_piped(&["--addr", "127.0.0.1:0", "--inject-crash-after", "3"]);
    let port: u16 = line.trim_end().rsplit(':').next().unwrap().parse().unwrap();
    let client = reqwest::Client::new();
    assert_eq!(post_order(&client, port).await, Some(200));
    assert_eq!(post_order(&client, port).await, Some(200));
    // /stats/reset does not reset the count of orders towards the crash.
    let reset = client
        .post(format!("http://127.0.0.1:{port}/stats/reset"))
        .send()
        .await
        .unwrap();
    assert_eq!(reset.status().as_u16(), 200);
    assert_eq!(post_order(&client, port).await, Some(200));
    assert!(child.try_wait().unwrap().is_none(), "exited after 3 orders");
    // The fourth order ends the process: no answer.
    assert_eq!(post_order(&client, port).await, None);
    assert_eq!(child.wait().unwrap().code(), Some(101));
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert_eq!(
        stderr.lines().last(),
        Some("hft-server: injected crash after 3 orders (--inject-crash-after 3)"),
        "{stderr}"
    );
}

#[test]
fn the_fault_knobs_are_in_the_help() {
    let out = Command::new(env!("CARGO_BIN_EXE_hft-server"))
        .arg("--help")
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    for flag in [
        "--inject-fail-every",
        "--inject-fail-min-connections",
        "--inject-crash-after",
        "--inject-hang-every",
    ] {
        assert!(help.contains(flag), "{flag} missing from\n{help}");
    }
}
