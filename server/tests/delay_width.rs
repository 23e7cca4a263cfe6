//! `--inject-delay-us` with `--inject-delay-min-connections C`: the delay only while at least
//! C connections are open, a cost only a wide series sees, on servers started through the
//! library on port 0. Each connection is a raw keep-alive socket, so that the test knows
//! exactly how many are open (a pooling client may open a second one between requests).
//!
//! The bounds are design guarantees, not a speed of this machine: an order the delay
//! applies to busy-waits at least the delay; one it does not apply to is answered long
//! before a 30-second delay would end.

#[allow(dead_code)] // TestServer and RawConnection only.
mod common;

use std::time::{Duration, Instant};

use common::{RawConnection, TestServer};
use hft_server::{Config, OrderService};

async fn server(delay: Duration, min_connections: usize) -> TestServer {
    TestServer::start(Config {
        inject_delay: delay,
        inject_delay_min_connections: min_connections,
        ..Config::default()
    })
    .await
}

async fn open_connections(connection: &mut RawConnection) -> u64 {
    connection.stats().await["connections_open"]
        .as_u64()
        .unwrap()
}

async fn order(connection: &mut RawConnection) -> Duration {
    let started = Instant::now();
    let (code, body) = connection.order().await;
    assert_eq!(code, 200, "{body}");
    started.elapsed()
}

#[test]
fn the_delay_applies_from_the_minimum_of_open_connections() {
    let wide = OrderService::new(&Config {
        inject_delay: Duration::from_micros(1),
        inject_delay_min_connections: 16,
        ..Config::default()
    });
    assert!(!wide.delays_at(1));
    assert!(!wide.delays_at(8));
    assert!(!wide.delays_at(15));
    assert!(wide.delays_at(16));
    assert!(wide.delays_at(64));
    // Without a minimum (the default) every order is delayed, as before the flag.
    let always = OrderService::new(&Config {
        inject_delay: Duration::from_micros(1),
        ..Config::default()
    });
    assert!(always.delays_at(0) && always.delays_at(1));
    // Without a delay nothing is, whatever the minimum.
    let none = OrderService::new(&Config {
        inject_delay_min_connections: 2,
        ..Config::default()
    });
    assert!(!none.delays_at(64));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn below_the_minimum_an_order_is_not_delayed() {
    // 30 seconds of delay from 2 connections: one connection alone gets its answers at once.
    let server = server(Duration::from_secs(30), 2).await;
    let mut only = RawConnection::open(&server).await;
    assert_eq!(open_connections(&mut only).await, 1);
    for i in 0..3 {
        let answered = tokio::time::timeout(Duration::from_secs(10), only.order()).await;
        let (code, body) =
            answered.unwrap_or_else(|_| panic!("order {i} on the only connection was delayed"));
        assert_eq!(code, 200, "{body}");
    }
    drop(only);
    server.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn from_the_minimum_every_order_is_delayed() {
    const N: Duration = Duration::from_millis(100);
    let server = server(N, 3).await;
    let mut first = RawConnection::open(&server).await;
    let mut second = RawConnection::open(&server).await;
    let mut third = RawConnection::open(&server).await;
    assert_eq!(open_connections(&mut third).await, 3);
    for (i, connection) in [&mut first, &mut second, &mut third]
        .into_iter()
        .enumerate()
    {
        let took = order(connection).await;
        assert!(
            took >= N,
            "the order on connection {i} with 3 open took {took:?}"
        );
    }
    drop((first, second, third));
    server.stop().await.unwrap();
}
