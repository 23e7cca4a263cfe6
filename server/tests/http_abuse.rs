//! Requests real clients send that axum::serve's defaults got wrong: a request followed
//! by a half-close (`nc -N`), header fields that are too large, and a shutdown while a
//! request is in flight. Raw bytes over real TCP, answers parsed strictly.

mod wire;

use std::net::{Shutdown, TcpStream};
use std::time::{Duration, Instant};

use hft_server::serve::{MAX_HEADER_BYTES, MAX_HEAD_BYTES};
use hft_server::{Config, Stall};
use wire::{exchange, parse_responses, Bodies, End, Response, Server};

const ORDER: &str = r#"{"buy_sell":"buy","symbol":7,"price":100.05,"quantity":100,"market_type":"common","price_type":"limit","time_in_force":"ioc","order_type":"stock","user_def":"nc","client_timestamp":"2026-11-23T10:00:00Z"}"#;

fn post_order(extra_headers: &str) -> Vec<u8> {
    format!(
        "POST /order HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n{extra_headers}Content-Length: {}\r\n\r\n{ORDER}",
        ORDER.len()
    )
    .into_bytes()
}

/// The only answer on a connection that sent `request` and half-closed.
fn answer_half_closed(server: &Server, request: &[u8]) -> Response {
    let got = exchange(server.addr, &[request], End::HalfClose, Bodies::Framed).unwrap();
    let mut answers = parse_responses(&got.bytes, Bodies::Framed).unwrap();
    assert_eq!(
        answers.len(),
        1,
        "{:?}",
        got.bytes.escape_ascii().to_string()
    );
    answers.remove(0)
}

#[test]
fn every_half_closed_request_is_answered() {
    let server = Server::start(Config::default());
    let request = post_order("");
    for i in 0..200 {
        let answer = answer_half_closed(&server, &request);
        assert_eq!(answer.status, 200, "request {i}: {answer:?}");
        let order = answer.json().unwrap();
        assert_eq!(order["status"], "CANCELLED", "request {i}: {order}");
        assert_eq!(order["client_timestamp"], "2026-11-23T10:00:00Z");
    }
    // Two pipelined requests, then the half-close: both answered, in order.
    let health = b"GET /health HTTP/1.1\r\nHost: test\r\n\r\n";
    let got = exchange(
        server.addr,
        &[&request, health],
        End::HalfClose,
        Bodies::Framed,
    )
    .unwrap();
    let answers = parse_responses(&got.bytes, Bodies::Framed).unwrap();
    let statuses: Vec<u16> = answers.iter().map(|a| a.status).collect();
    assert_eq!(statuses, [200, 200]);
    assert_eq!(answers[1].json().unwrap()["status"], "ok");
    assert_eq!(Server::panics(), 0);
    server.stop().unwrap();
}

#[test]
fn header_fields_over_the_limit_get_a_json_431() {
    let server = Server::start(Config::default());
    // About 70 KB in one header, on an otherwise valid order.
    let big = format!("X-Big: {}\r\n", "a".repeat(70_000));
    let answer = answer_half_closed(&server, &post_order(&big));
    assert_eq!(answer.status, 431, "{answer:?}");
    assert_eq!(
        answer.header("content-type"),
        Some(&b"application/json"[..])
    );
    let error = answer.json().unwrap();
    assert_eq!(error["field"], serde_json::Value::Null, "{error}");
    let message = error["error"].as_str().unwrap();
    assert!(
        message.contains(&MAX_HEADER_BYTES.to_string()) && message.contains("x-big"),
        "{message}"
    );

    // The limit is on the header fields: name, value, ": " and CRLF each.
    let fixed = format!(
        "host: test\r\ncontent-type: application/json\r\ncontent-length: {}\r\n",
        ORDER.len()
    );
    let fill = MAX_HEADER_BYTES - fixed.len() - "x-fill: \r\n".len();
    let at_limit = format!("X-Fill: {}\r\n", "b".repeat(fill));
    assert_eq!(
        answer_half_closed(&server, &post_order(&at_limit)).status,
        200
    );
    let over = format!("X-Fill: {}\r\n", "b".repeat(fill + 1));
    assert_eq!(answer_half_closed(&server, &post_order(&over)).status, 431);

    // Counted like every other refusal.
    let stats = answer_half_closed(&server, b"GET /stats HTTP/1.1\r\nHost: t\r\n\r\n");
    assert_eq!(stats.json().unwrap()["invalid_requests"], 2);
    let metrics = answer_half_closed(&server, b"GET /metrics HTTP/1.1\r\nHost: t\r\n\r\n");
    let text = String::from_utf8(metrics.body).unwrap();
    assert!(
        text.lines()
            .any(|l| l == "hft_http_errors_total{code=\"431\"} 2"),
        "{text}"
    );
    assert_eq!(server.health(), Ok(200));
    server.stop().unwrap();
}

#[test]
fn heads_hyper_will_not_read_get_its_bare_431_and_a_close() {
    let server = Server::start(Config::default());
    // Longer than hyper reads at all: its own 431, no body, and the connection closes.
    let huge = format!("X-Huge: {}\r\n", "c".repeat(MAX_HEAD_BYTES + 1_000));
    let request = post_order(&huge);
    let got = exchange(server.addr, &[&request], End::Answers(1), Bodies::Framed).unwrap();
    let answers = parse_responses(&got.bytes, Bodies::Framed).unwrap();
    assert_eq!(answers.len(), 1);
    assert_eq!(answers[0].status, 431);
    assert!(answers[0].body.is_empty());
    // More header fields than hyper parses (100): the same.
    let many: String = (0..101).map(|i| format!("X-{i}: v\r\n")).collect();
    let answer = answer_half_closed(&server, &post_order(&many));
    assert_eq!(answer.status, 431, "{answer:?}");
    assert_eq!(server.health(), Ok(200));
    server.stop().unwrap();
}

#[test]
fn shutdown_finishes_the_request_in_flight() {
    // Every order busy-waits 300 ms: long enough to shut down while one is in flight.
    let config = Config {
        inject_stall: Some(Stall {
            delay: Duration::from_millis(300),
            every: 1,
        }),
        ..Config::default()
    };
    let server = Server::start(config);
    let mut tcp = TcpStream::connect(server.addr).unwrap();
    std::io::Write::write_all(&mut tcp, &post_order("")).unwrap();
    tcp.shutdown(Shutdown::Write).unwrap();
    std::thread::sleep(Duration::from_millis(100));
    let started = Instant::now();
    server.stop().unwrap();
    assert!(
        started.elapsed() >= Duration::from_millis(100),
        "stopped early"
    );
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut tcp, &mut bytes).unwrap();
    let answers = parse_responses(&bytes, Bodies::Framed).unwrap();
    assert_eq!(answers.len(), 1);
    assert_eq!(answers[0].status, 200);
}
