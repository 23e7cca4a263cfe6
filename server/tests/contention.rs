//! `--inject-contention-us`: a cost that appears only while two or more connections are
//! open (a server-wide lock held for N per order), on servers started through the
//! library on port 0. Each connection is a raw keep-alive socket, so that the test knows
//! exactly how many are open (a pooling client may open a second one between requests).
//!
//! The bounds are design guarantees (the lock is only taken with two connections open;
//! held, it makes orders queue), not a speed of this machine: N = 100 ms dwarfs loopback
//! and the scheduling delays of a busy 2-core host.

#[allow(dead_code)] // TestServer and order only.
mod common;

use std::time::{Duration, Instant};

use common::{order, TestServer};
use hft_server::Config;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const N: Duration = Duration::from_millis(100);

/// One keep-alive connection to the server.
struct Connection(TcpStream);

impl Connection {
    async fn open(server: &TestServer) -> Connection {
        let addr = server.base.strip_prefix("http://").unwrap();
        let tcp = TcpStream::connect(addr).await.unwrap();
        tcp.set_nodelay(true).unwrap();
        Connection(tcp)
    }

    /// Sends one request; the time to its whole answer, and the answer's body.
    async fn ask(&mut self, request: &str) -> (Duration, String) {
        let started = Instant::now();
        self.0.write_all(request.as_bytes()).await.unwrap();
        let mut bytes = Vec::new();
        let mut chunk = [0u8; 4096];
        loop {
            let read = self.0.read(&mut chunk).await.unwrap();
            assert!(read > 0, "closed: {:?}", String::from_utf8_lossy(&bytes));
            bytes.extend_from_slice(&chunk[..read]);
            let mut headers = [httparse::EMPTY_HEADER; 16];
            let mut head = httparse::Response::new(&mut headers);
            if let httparse::Status::Complete(size) = head.parse(&bytes).unwrap() {
                assert_eq!(
                    head.code,
                    Some(200),
                    "{:?}",
                    String::from_utf8_lossy(&bytes)
                );
                let length: usize = head
                    .headers
                    .iter()
                    .find(|h| h.name.eq_ignore_ascii_case("content-length"))
                    .map(|h| std::str::from_utf8(h.value).unwrap().parse().unwrap())
                    .unwrap();
                if bytes.len() >= size + length {
                    let body = String::from_utf8_lossy(&bytes[size..size + length]);
                    return (started.elapsed(), body.into_owned());
                }
            }
        }
    }

    /// Sends one valid order; the time to its whole answer.
    async fn order(&mut self) -> Duration {
        let body = order("buy", 7, "10.00", 1, "limit", "ioc");
        let request = format!(
            "POST /order HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n\
             Content-Length: {}\r\n\r\n{body}",
            body.len()
        );
        self.ask(&request).await.0
    }

    /// `connections_open` of `GET /stats`.
    async fn connections_open(&mut self) -> u64 {
        let (_, body) = self.ask("GET /stats HTTP/1.1\r\nHost: test\r\n\r\n").await;
        let stats: serde_json::Value = serde_json::from_str(&body).unwrap();
        stats["connections_open"].as_u64().unwrap()
    }
}

async fn server() -> TestServer {
    TestServer::start(Config {
        inject_contention: N,
        ..Config::default()
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn contention_costs_nothing_with_one_connection_open() {
    let server = server().await;
    let mut only = Connection::open(&server).await;
    assert_eq!(only.connections_open().await, 1);
    let started = Instant::now();
    for _ in 0..5 {
        only.order().await;
    }
    let took = started.elapsed();
    assert!(took < N * 5 / 2, "5 orders on one connection took {took:?}");
    drop(only);
    server.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn contention_costs_every_order_while_two_connections_are_open() {
    let server = server().await;
    // The first connection: one order (alone, it pays nothing), then held open.
    let mut first = Connection::open(&server).await;
    let alone = first.order().await;
    assert!(alone < N, "the order on the only connection took {alone:?}");
    let mut second = Connection::open(&server).await;
    for i in 0..5 {
        let took = second.order().await;
        assert!(
            took >= N,
            "order {i} with two connections open took {took:?}"
        );
    }
    // Two orders at once hold the one lock in turn: the later one ends after both spins.
    let started = Instant::now();
    tokio::join!(first.order(), second.order());
    let took = started.elapsed();
    assert!(
        took >= N * 2,
        "two concurrent orders took {took:?} together"
    );
    // With the first closed, the second is the only one again, and its orders are free.
    drop(first);
    let deadline = Instant::now() + Duration::from_secs(5);
    while second.connections_open().await != 1 {
        assert!(Instant::now() < deadline, "the first connection stays open");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let free = second.order().await;
    assert!(free < N, "alone again, an order took {free:?}");
    drop(second);
    server.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn contention_waits_for_inject_after() {
    let server = TestServer::start(Config {
        inject_contention: N,
        inject_after: Duration::from_secs(3_600),
        ..Config::default()
    })
    .await;
    let mut first = Connection::open(&server).await;
    let mut second = Connection::open(&server).await;
    assert_eq!(second.connections_open().await, 2);
    let started = Instant::now();
    for _ in 0..3 {
        tokio::join!(first.order(), second.order());
    }
    let took = started.elapsed();
    assert!(
        took < N * 3 / 2,
        "6 orders on two connections took {took:?}"
    );
    drop((first, second));
    server.stop().await.unwrap();
}
