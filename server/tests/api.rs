//! Integration tests: a real server on 127.0.0.1:0, real HTTP.

mod common;

use common::{json_of, order, TestServer};
use hft_server::Config;
use serde_json::Value;

#[tokio::test]
async fn health_answers_ok() {
    let server = TestServer::start(Config::default()).await;
    let (status, body) = server.get("/health").await;
    assert_eq!((status, body["status"].as_str()), (200, Some("ok")));
    server.stop().await.unwrap();
}

#[tokio::test]
async fn an_order_is_answered_with_the_documented_fields() {
    let server = TestServer::start(Config::default()).await;
    let (status, rest) = server
        .post_order(order("sell", 2330, "100.05", 300, "limit", "rod"))
        .await;
    assert_eq!(status, 200, "{rest}");
    assert_eq!(rest["symbol"], 2330);
    assert_eq!(rest["buy_sell"], "sell");
    assert_eq!(rest["status"], "NEW");
    assert_eq!(rest["client_timestamp"], "2026-11-22T10:00:00.123456Z");
    assert_eq!(
        (
            rest["filled_quantity"].as_u64(),
            rest["remaining_quantity"].as_u64()
        ),
        (Some(0), Some(300))
    );
    assert!(rest["latency_ms"].is_f64());
    let server_ts = rest["server_timestamp"].as_str().unwrap();
    assert!(
        chrono::DateTime::parse_from_rfc3339(server_ts).is_ok(),
        "{server_ts}"
    );
    assert!(
        server_ts.ends_with('Z') && server_ts.len() == 27,
        "{server_ts}"
    );
    assert!(rest.get("reason").is_none());

    let (_, take) = server
        .post_order(order("buy", 2330, "100.50", 100, "limit", "ioc"))
        .await;
    assert_eq!(take["status"], "FILLED");
    assert!(take["order_id"].as_u64() > rest["order_id"].as_u64());
    let fills = take["fills"].as_array().unwrap();
    assert_eq!(fills.len(), 1);
    assert_eq!(fills[0]["price"], 100.05);
    assert_eq!(fills[0]["quantity"], 100);
    assert_eq!(fills[0]["counter_order_id"], rest["order_id"]);

    let (_, market) = server
        .post_order(order("buy", 2330, "99.50", 500, "market", "ioc"))
        .await;
    assert_eq!(market["status"], "PARTIALLY_FILLED_CANCELLED");
    assert_eq!(market["filled_quantity"], 200);
    assert_eq!(market["cancelled_quantity"], 300);

    let (_, fok) = server
        .post_order(order("sell", 2330, "100.00", 100, "limit", "fok"))
        .await;
    assert_eq!(fok["status"], "CANCELLED");
    server.stop().await.unwrap();
}

#[tokio::test]
async fn stats_count_orders_and_reset_clears_counters_and_books() {
    let server = TestServer::start(Config::default()).await;
    server
        .post_order(order("buy", 1, "100.00", 100, "limit", "rod"))
        .await;
    server
        .post_order(order("sell", 1, "100.00", 100, "limit", "rod"))
        .await;
    server
        .post_order(order("sell", 1, "100.00", 100, "limit", "rod"))
        .await;
    server.post_order("{").await;
    let (status, stats) = server.get("/stats").await;
    assert_eq!(status, 200);
    assert_eq!(stats["total_orders"], 3);
    assert_eq!(stats["accepted"], 3);
    assert_eq!(stats["rejected"], 0);
    assert_eq!(stats["filled"], 1);
    assert_eq!(stats["new"], 2);
    assert_eq!(stats["invalid_requests"], 1);
    assert_eq!(stats["fills"], 1);
    assert_eq!(stats["resting_orders"], 1);
    assert!(stats["elapsed_seconds"].as_f64().unwrap() > 0.0);
    assert!(stats["orders_per_second"].as_f64().unwrap() > 0.0);

    let (status, period) = server.post("/stats/reset").await;
    assert_eq!(status, 200);
    assert_eq!(period["total_orders"], 3);
    let (_, after) = server.get("/stats").await;
    assert_eq!(after["total_orders"], 0);
    assert_eq!(after["invalid_requests"], 0);
    assert_eq!(after["resting_orders"], 0);
    // The resting sell was cleared: a buy now finds nothing.
    let (_, buy) = server
        .post_order(order("buy", 1, "100.00", 100, "limit", "ioc"))
        .await;
    assert_eq!(buy["status"], "CANCELLED");
    server.stop().await.unwrap();
}

#[tokio::test]
async fn metrics_are_prometheus_text() {
    let server = TestServer::start(Config::default()).await;
    server
        .post_order(order("buy", 1, "100.00", 100, "limit", "rod"))
        .await;
    server.post_order("[]").await;
    let response = server
        .client
        .get(server.url("/metrics"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert!(response.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/plain"));
    let text = response.text().await.unwrap();
    for line in [
        "hft_orders_total{status=\"NEW\"} 1",
        "hft_http_errors_total{code=\"422\"} 1",
        "hft_order_handler_duration_seconds_count 2",
        "hft_order_handler_duration_seconds_bucket{le=\"+Inf\"} 2",
        "hft_resting_orders 1",
    ] {
        assert!(
            text.lines().any(|l| l == line),
            "missing {line:?} in\n{text}"
        );
    }
    server.stop().await.unwrap();
}

#[tokio::test]
async fn a_full_book_rejects_with_a_reason_naming_the_flag() {
    let config = Config {
        max_resting_per_symbol: 2,
        ..Config::default()
    };
    let server = TestServer::start(config).await;
    for price in ["99.00", "99.10"] {
        let (_, out) = server
            .post_order(order("buy", 5, price, 100, "limit", "rod"))
            .await;
        assert_eq!(out["status"], "NEW");
    }
    let (status, out) = server
        .post_order(order("buy", 5, "99.20", 100, "limit", "rod"))
        .await;
    assert_eq!(status, 200);
    assert_eq!(out["status"], "REJECTED");
    assert!(
        out["reason"]
            .as_str()
            .unwrap()
            .contains("--max-resting-per-symbol"),
        "{out}"
    );
    let (_, stats) = server.get("/stats").await;
    assert_eq!(stats["rejected"], 1);
    assert_eq!(stats["resting_orders"], 2);
    server.stop().await.unwrap();
}

/// Each bad request, its status, and the field the error must name.
fn bad_inputs() -> Vec<(&'static str, String, u16, Option<&'static str>)> {
    let valid = order("buy", 2330, "100.00", 100, "limit", "rod");
    let swap = |from: &str, to: &str| valid.replace(from, to);
    vec![
        ("malformed JSON", "{\"buy_sell\":".to_owned(), 400, None),
        ("not JSON", "hello".to_owned(), 400, None),
        ("empty body", String::new(), 400, None),
        (
            "missing field",
            swap("\"quantity\":100,", ""),
            422,
            Some("quantity"),
        ),
        (
            "wrong type",
            swap("\"symbol\":2330", "\"symbol\":\"2330\""),
            422,
            Some("symbol"),
        ),
        (
            "unknown enum value",
            swap("\"rod\"", "\"gtc\""),
            422,
            Some("time_in_force"),
        ),
        (
            "quantity zero",
            swap("\"quantity\":100", "\"quantity\":0"),
            422,
            Some("quantity"),
        ),
        (
            "quantity negative",
            swap("\"quantity\":100", "\"quantity\":-5"),
            422,
            Some("quantity"),
        ),
        (
            "price zero",
            swap("\"price\":100.00", "\"price\":0"),
            422,
            Some("price"),
        ),
        (
            "price negative",
            swap("\"price\":100.00", "\"price\":-1"),
            422,
            Some("price"),
        ),
        (
            "price not finite",
            swap("\"price\":100.00", "\"price\":1e999"),
            422,
            Some("price"),
        ),
        (
            "price off tick",
            swap("\"price\":100.00", "\"price\":100.001"),
            422,
            Some("price"),
        ),
        (
            "bad timestamp",
            swap("2026-11-22T10:00:00.123456Z", "22/11/2026 10:00"),
            422,
            Some("client_timestamp"),
        ),
        (
            "user_def too long",
            swap("hftbench", &"x".repeat(33)),
            422,
            Some("user_def"),
        ),
        ("not an object", "[1,2,3]".to_owned(), 422, None),
        (
            "body over 4 KiB",
            format!("{}{}", " ".repeat(5000), valid),
            413,
            None,
        ),
    ]
}

#[tokio::test]
async fn every_bad_input_gets_its_json_error_and_the_server_keeps_serving() {
    let server = TestServer::start(Config::default()).await;
    for (what, body, want, field) in bad_inputs() {
        let (status, error) = server.post_order(body).await;
        assert_eq!(status, want, "{what}: {error}");
        assert!(
            error["error"].as_str().is_some_and(|e| !e.is_empty()),
            "{what}: {error}"
        );
        assert_eq!(error["field"].as_str(), field, "{what}: {error}");
    }

    let wrong_method = json_of(
        server
            .client
            .get(server.url("/order"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(wrong_method.0, 405);
    assert_eq!(wrong_method.1["field"], Value::Null);
    let (status, error) = server.post("/health").await;
    assert_eq!(status, 405, "{error}");
    let (status, error) = server.get("/no/such/path").await;
    assert_eq!(status, 404);
    assert!(error["error"].as_str().unwrap().contains("/no/such/path"));

    let (status, ok) = server
        .post_order(order("buy", 2330, "100.00", 100, "limit", "rod"))
        .await;
    assert_eq!((status, ok["status"].as_str()), (200, Some("NEW")));
    let (_, stats) = server.get("/stats").await;
    assert_eq!(stats["total_orders"], 1);
    assert_eq!(stats["invalid_requests"], bad_inputs().len() + 3);
    server.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn eight_concurrent_tasks_lose_no_order() {
    const TASKS: u64 = 8;
    const PER_TASK: u64 = 1_000;
    let server = std::sync::Arc::new(TestServer::start(Config::default()).await);
    let mut tasks = Vec::new();
    for t in 0..TASKS {
        let server = server.clone();
        tasks.push(tokio::spawn(async move {
            let mut last_id = 0;
            for i in 0..PER_TASK {
                let side = if (t + i) % 2 == 0 { "buy" } else { "sell" };
                let price = format!("{:.2}", 99.5 + ((i * 7 + t) % 21) as f64 * 0.05);
                let body = order(side, 2330 + (i % 3) as u32, &price, 100, "limit", "rod");
                let (status, reply) = server.post_order(body).await;
                assert_eq!(status, 200, "{reply}");
                let id = reply["order_id"].as_u64().unwrap();
                assert!(id > last_id, "ids must grow: {id} after {last_id}");
                last_id = id;
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    let (_, stats) = server.get("/stats").await;
    assert_eq!(stats["total_orders"], TASKS * PER_TASK);
    assert_eq!(stats["accepted"], TASKS * PER_TASK);
    std::sync::Arc::into_inner(server)
        .unwrap()
        .stop()
        .await
        .unwrap();
}

#[tokio::test]
async fn shutdown_future_stops_the_server() {
    let server = TestServer::start(Config::default()).await;
    let base = server.base.clone();
    server.stop().await.unwrap();
    let refused = reqwest::Client::new()
        .get(format!("{base}/health"))
        .send()
        .await;
    assert!(
        refused.is_err(),
        "the listener must be closed after shutdown"
    );
}

#[tokio::test]
async fn the_tail_stall_knob_slows_exactly_one_order_in_n() {
    // A 300 ms busy-wait dwarfs any scheduling delay of this host, so "slow" is unambiguous.
    let stall = std::time::Duration::from_millis(300);
    let config = Config {
        inject_stall: Some(hft_server::Stall {
            delay: stall,
            every: 3,
        }),
        ..Config::default()
    };
    let server = TestServer::start(config).await;
    let mut slow = Vec::new();
    for i in 0..6 {
        let started = std::time::Instant::now();
        let (status, _) = server
            .post_order(order("buy", 7, "10.00", 1, "limit", "ioc"))
            .await;
        assert_eq!(status, 200);
        if started.elapsed() >= stall {
            slow.push(i);
        }
    }
    assert_eq!(slow, vec![2, 5], "the 3rd and 6th orders are stalled");
    server.stop().await.unwrap();
}

#[test]
fn the_injection_starts_after_inject_after() {
    let later = hft_server::OrderService::new(&Config {
        inject_delay: std::time::Duration::from_micros(200),
        inject_after: std::time::Duration::from_secs(30),
        ..Config::default()
    });
    assert!(!later.injects_at(std::time::Duration::from_millis(29_999)));
    assert!(later.injects_at(std::time::Duration::from_secs(30)));
    assert!(later.injects_at(std::time::Duration::from_secs(600)));
    let at_once = hft_server::OrderService::new(&Config::default());
    assert!(at_once.injects_at(std::time::Duration::ZERO));
}
