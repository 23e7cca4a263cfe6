//! The limits that keep slow and greedy clients from holding the server: the header-read
//! and body-read timeouts, the connection cap, the shutdown deadline and the cap on fills
//! per order. Raw bytes over real TCP to a server on 127.0.0.1:0, answers parsed strictly.
//! Timing bounds are generous: the tests must pass with the other core busy.

mod wire;

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::thread;
use std::time::{Duration, Instant};

use hft_server::Config;
use wire::{parse_responses, Bodies, Response, Server};

/// Added to a timeout for the slowest time the server may take to act on it.
const MARGIN: Duration = Duration::from_secs(3);

fn order(side: &str, price: &str, quantity: u64, tif: &str) -> String {
    format!(
        r#"{{"buy_sell":"{side}","symbol":9,"price":{price},"quantity":{quantity},"market_type":"common","price_type":"limit","time_in_force":"{tif}","order_type":"stock","user_def":"limits","client_timestamp":"2026-11-26T10:00:00Z"}}"#
    )
}

fn post(body: &str) -> Vec<u8> {
    format!(
        "POST /order HTTP/1.1\r\nHost: test\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

fn get(path: &str) -> Vec<u8> {
    format!("GET {path} HTTP/1.1\r\nHost: test\r\n\r\n").into_bytes()
}

fn connect(addr: SocketAddr) -> TcpStream {
    let tcp = TcpStream::connect(addr).unwrap();
    tcp.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    tcp
}

/// Sends `request` on a keep-alive connection and reads its one answer.
fn ask(tcp: &mut TcpStream, request: &[u8]) -> Response {
    tcp.write_all(request).unwrap();
    let mut bytes = Vec::new();
    let mut buf = [0u8; 64 * 1024];
    loop {
        let n = tcp.read(&mut buf).expect("an answer");
        assert!(n > 0, "closed after {:?}", bytes.escape_ascii().to_string());
        bytes.extend_from_slice(&buf[..n]);
        if let Ok(mut answers) = parse_responses(&bytes, Bodies::Framed) {
            assert_eq!(answers.len(), 1);
            return answers.remove(0);
        }
    }
}

/// Reads until the server closes the connection (EOF or reset); returns what it sent.
fn until_closed(tcp: &mut TcpStream) -> Vec<u8> {
    let mut bytes = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match tcp.read(&mut buf) {
            Ok(0) => return bytes,
            Ok(n) => bytes.extend_from_slice(&buf[..n]),
            Err(err) if err.kind() == ErrorKind::ConnectionReset => return bytes,
            Err(err) => panic!("not closed: {err}; got {:?}", bytes.escape_ascii()),
        }
    }
}

/// Writes `bytes` one byte every `every` on a second handle of `tcp`, until the server
/// closes the connection (a write fails) or all are sent.
fn trickle(tcp: &TcpStream, bytes: Vec<u8>, every: Duration) -> thread::JoinHandle<()> {
    let mut tcp = tcp.try_clone().unwrap();
    thread::spawn(move || {
        for byte in bytes {
            thread::sleep(every);
            if tcp.write_all(&[byte]).is_err() {
                return;
            }
        }
    })
}

fn assert_within(elapsed: Duration, timeout: Duration) {
    // The timer starts when the server has accepted the connection, after our clock did.
    assert!(
        elapsed + Duration::from_millis(50) >= timeout,
        "closed after {elapsed:?}, before the timeout {timeout:?}"
    );
    assert!(
        elapsed <= timeout + MARGIN,
        "closed after {elapsed:?}, timeout {timeout:?}"
    );
}

#[test]
fn a_slowloris_head_is_cut_off_after_the_header_read_timeout() {
    let timeout = Duration::from_millis(600);
    let server = Server::start(Config {
        header_read_timeout: Some(timeout),
        ..Config::default()
    });
    let started = Instant::now();
    let mut tcp = connect(server.addr);
    tcp.write_all(b"POST /order HTTP/1.1\r\nHost: test\r\nX-Slow: ")
        .unwrap();
    let writer = trickle(&tcp, vec![b'a'; 200], Duration::from_millis(50));
    let answer = until_closed(&mut tcp);
    assert_within(started.elapsed(), timeout);
    assert!(answer.is_empty(), "{:?}", answer.escape_ascii().to_string());
    writer.join().unwrap();
    // A client that sends its request at once is served as before; hyper's timer starts
    // when a connection waits for a head, so an idle keep-alive one is closed as well.
    let mut fresh = connect(server.addr);
    assert_eq!(ask(&mut fresh, &get("/health")).status, 200);
    let idle = Instant::now();
    assert!(until_closed(&mut fresh).is_empty());
    assert_within(idle.elapsed(), timeout);
    server.stop().unwrap();
}

#[test]
fn a_trickling_body_is_answered_408_after_the_body_read_timeout() {
    let timeout = Duration::from_millis(600);
    let server = Server::start(Config {
        body_read_timeout: Some(timeout),
        ..Config::default()
    });
    let request = post(&order("buy", "100.00", 100, "rod"));
    let split = request.len() - 100;
    let mut tcp = connect(server.addr);
    tcp.write_all(&request[..split]).unwrap();
    let started = Instant::now();
    let writer = trickle(&tcp, request[split..].to_vec(), Duration::from_millis(50));
    let bytes = until_closed(&mut tcp);
    assert_within(started.elapsed(), timeout);
    writer.join().unwrap();
    let answers = parse_responses(&bytes, Bodies::Framed).unwrap();
    assert_eq!(answers.len(), 1);
    assert_eq!(answers[0].status, 408);
    assert!(answers[0].closes());
    let body = answers[0].json().unwrap();
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .contains("--body-read-timeout-ms"),
        "{body}"
    );
    let mut fresh = connect(server.addr);
    let metrics = ask(&mut fresh, &get("/metrics"));
    let text = String::from_utf8(metrics.body).unwrap();
    assert!(
        text.lines()
            .any(|l| l == "hft_http_errors_total{code=\"408\"} 1"),
        "{text}"
    );
    server.stop().unwrap();
}

#[test]
fn past_the_connection_cap_a_connection_is_closed_and_counted() {
    let cap = 3;
    let server = Server::start(Config {
        max_connections: cap,
        ..Config::default()
    });
    let mut open: Vec<TcpStream> = (0..cap).map(|_| connect(server.addr)).collect();
    // Served: the server has accepted each (connections are accepted in order).
    for tcp in &mut open {
        assert_eq!(ask(tcp, &get("/health")).status, 200);
    }
    let mut refused = connect(server.addr);
    let got = until_closed(&mut refused);
    assert!(got.is_empty(), "{:?}", got.escape_ascii().to_string());
    for tcp in &mut open {
        let answer = ask(tcp, &post(&order("sell", "101.00", 10, "rod")));
        assert_eq!(answer.status, 200);
        assert_eq!(answer.json().unwrap()["status"], "NEW");
    }
    let stats = ask(&mut open[0], &get("/stats")).json().unwrap();
    assert_eq!(stats["connections_refused"], 1, "{stats}");
    assert_eq!(stats["connections_open"], cap, "{stats}");
    let metrics = ask(&mut open[1], &get("/metrics"));
    let text = String::from_utf8(metrics.body).unwrap();
    assert!(
        text.lines().any(|l| l == "hft_connections_refused_total 1"),
        "{text}"
    );
    // Once one closes, a new connection is served again.
    drop(open.pop());
    let deadline = Instant::now() + MARGIN;
    loop {
        let mut again = connect(server.addr);
        match again.write_all(b"GET /health HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n") {
            Ok(()) if !until_closed(&mut again).is_empty() => break,
            _ => assert!(Instant::now() < deadline, "no room after a close"),
        }
        thread::sleep(Duration::from_millis(20));
    }
    server.stop().unwrap();
}

#[test]
fn shutdown_returns_by_its_deadline_with_a_slow_client_attached() {
    let deadline = Duration::from_millis(1_500);
    let server = Server::start(Config {
        shutdown_timeout: deadline,
        // The head timeout must not be what frees the slow client.
        header_read_timeout: Some(Duration::from_secs(60)),
        ..Config::default()
    });
    let mut slow = connect(server.addr);
    slow.write_all(b"POST /order HTTP/1.1\r\nHost: test\r\nX-Slow: a")
        .unwrap();
    // A request in flight: its head and part of its body have arrived.
    let request = post(&order("buy", "100.00", 100, "rod"));
    let split = request.len() - 20;
    let mut inflight = connect(server.addr);
    inflight.write_all(&request[..split]).unwrap();
    thread::sleep(Duration::from_millis(200));
    let started = Instant::now();
    let stopping = thread::spawn(move || server.stop());
    thread::sleep(Duration::from_millis(200));
    inflight.write_all(&request[split..]).unwrap();
    let finished = parse_responses(&until_closed(&mut inflight), Bodies::Framed).unwrap();
    assert_eq!(finished.len(), 1);
    assert_eq!(finished[0].status, 200, "the request in flight is answered");
    stopping.join().unwrap().unwrap();
    let stopped = started.elapsed();
    // The slow client kept `run` waiting until the deadline, not longer.
    assert_within(stopped, deadline);
    assert!(until_closed(&mut slow).is_empty());
}

#[test]
fn one_order_trades_with_at_most_max_fills_per_order_resting_orders() {
    let cap = 5;
    let server = Server::start(Config {
        max_fills_per_order: cap,
        ..Config::default()
    });
    let mut tcp = connect(server.addr);
    for _ in 0..cap + 3 {
        let rested = ask(&mut tcp, &post(&order("sell", "100.00", 10, "rod")));
        assert_eq!(rested.json().unwrap()["status"], "NEW");
    }
    // The FOK would need 6 of the 8 resting orders: it trades nothing. The ROD order
    // takes 5 and cancels the rest (resting, it would cross the 3 left).
    for (tif, quantity, status) in [
        ("fok", 60, "CANCELLED"),
        ("rod", 1_000, "PARTIALLY_FILLED_CANCELLED"),
    ] {
        let reply = ask(&mut tcp, &post(&order("buy", "100.00", quantity, tif)));
        let reply = reply.json().unwrap();
        assert_eq!(reply["status"], status, "{reply}");
        assert_eq!(reply["remaining_quantity"], 0, "{reply}");
        let reason = reply["reason"].as_str().unwrap();
        assert!(reason.contains("--max-fills-per-order"), "{reply}");
        let fills = reply["fills"].as_array().unwrap().len();
        let filled = if tif == "rod" { cap } else { 0 };
        assert_eq!(fills, filled, "{reply}");
        assert_eq!(reply["filled_quantity"], 10 * filled as u64, "{reply}");
        assert_eq!(reply["cancelled_quantity"], quantity - 10 * filled as u64);
    }
    let stats = ask(&mut tcp, &get("/stats")).json().unwrap();
    assert_eq!(stats["resting_orders"], 3, "{stats}");
    drop(tcp);
    server.stop().unwrap();
}
