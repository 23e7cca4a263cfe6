//! `--inject-contention-us`: a cost that appears only while two or more connections are
//! open (a server-wide lock held for N per order), on servers started through the
//! library on port 0. Each connection is a raw keep-alive socket, so that the test knows
//! exactly how many are open (a pooling client may open a second one between requests).
//!
//! The bounds are design guarantees (the lock is only taken with two connections open;
//! held, it makes orders queue), not a speed of this machine: N = 100 ms dwarfs loopback
//! and the scheduling delays of a busy 2-core host.

#[allow(dead_code)] // TestServer and RawConnection only.
mod common;

use std::time::{Duration, Instant};

use common::{RawConnection, TestServer};
use hft_server::Config;

const N: Duration = Duration::from_millis(100);

/// One raw keep-alive connection to the server, its orders timed.
struct Connection(RawConnection);

impl Connection {
    async fn open(server: &TestServer) -> Connection {
        Connection(RawConnection::open(server).await)
    }

    /// Sends one valid order; the time to its whole answer.
    async fn order(&mut self) -> Duration {
        let started = Instant::now();
        let (code, body) = self.0.order().await;
        assert_eq!(code, 200, "{body}");
        started.elapsed()
    }

    /// `connections_open` of `GET /stats`.
    async fn connections_open(&mut self) -> u64 {
        self.0.stats().await["connections_open"].as_u64().unwrap()
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
