//! Whole runs of the library against a stub HTTP/1.1 server on port 0: every order of
//! warm-up + measured is posted exactly once, and failures are counted by kind.
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use hft_client_rust::{args, runner};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// How the stub answers every order.
#[derive(Clone, Copy)]
enum Answer {
    Status(u16),
    After(Duration),
}

/// Starts the stub; returns its base URL and the count of orders it received.
async fn stub(answer: Answer) -> (String, Arc<AtomicU64>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let posts = Arc::new(AtomicU64::new(0));
    let counter = Arc::clone(&posts);
    tokio::spawn(async move {
        loop {
            let (conn, _) = listener.accept().await.unwrap();
            tokio::spawn(serve(conn, answer, Arc::clone(&counter)));
        }
    });
    (url, posts)
}

/// Keep-alive: read a request head + Content-Length body, answer, repeat.
async fn serve(mut conn: TcpStream, answer: Answer, posts: Arc<AtomicU64>) {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let head_end = loop {
            if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break i + 4;
            }
            match conn.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        };
        let head = String::from_utf8_lossy(&buf[..head_end]).to_ascii_lowercase();
        let length: usize = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length:"))
            .map(|v| v.trim().parse().unwrap())
            .unwrap_or(0);
        while buf.len() < head_end + length {
            match conn.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        }
        let body: serde_json::Value =
            serde_json::from_slice(&buf[head_end..head_end + length]).unwrap();
        assert_eq!(body["user_def"], "hftbench");
        assert!(head.starts_with("post /order http/1.1"), "{head}");
        buf.drain(..head_end + length);
        posts.fetch_add(1, Ordering::Relaxed);
        let status = match answer {
            Answer::Status(code) => code,
            Answer::After(delay) => {
                tokio::time::sleep(delay).await;
                200
            }
        };
        let reply = format!("HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{{}}");
        if conn.write_all(reply.as_bytes()).await.is_err() {
            return;
        }
    }
}

async fn run(url: &str, extra: &[&str]) -> hft_client_rust::result::RunResult {
    let mut argv = vec![
        "client-rust",
        "--url",
        url,
        "--orders",
        "300",
        "--warmup",
        "50",
        "--connections",
        "4",
    ];
    argv.extend_from_slice(extra);
    let config = args::parse(argv).unwrap();
    runner::run(&config, 2, Arc::new(AtomicBool::new(false)))
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closed_and_open_loop_post_every_order_once() {
    let (url, posts) = stub(Answer::Status(200)).await;
    for extra in [&[][..], &["--rate", "20000"][..]] {
        posts.store(0, Ordering::Relaxed);
        let r = run(&url, extra).await;
        assert_eq!(posts.load(Ordering::Relaxed), 350, "{extra:?}");
        assert_eq!((r.orders, r.ok, r.errors), (300, 300, 0), "{extra:?}");
        assert_eq!(r.hdr.len(), 300);
        assert_eq!(
            r.hdr_uncorrected.as_ref().map(|h| h.len()),
            (!extra.is_empty()).then_some(300)
        );
        assert!(r.histogram.data.starts_with("HISTF"));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failures_are_counted_by_kind_and_not_recorded() {
    let (url, _) = stub(Answer::Status(422)).await;
    let r = run(&url, &[]).await;
    assert_eq!((r.ok, r.errors, r.error_kinds.http_4xx), (0, 300, 300));
    assert_eq!(r.latency_us.p50, None);

    let (url, _) = stub(Answer::After(Duration::from_millis(300))).await;
    let config = args::parse([
        "client-rust",
        "--url",
        &url,
        "--orders",
        "2",
        "--warmup",
        "0",
        "--connections",
        "1",
        "--timeout-ms",
        "20",
    ])
    .unwrap();
    let r = runner::run(&config, 2, Arc::new(AtomicBool::new(false)))
        .await
        .unwrap();
    assert_eq!((r.orders, r.errors, r.error_kinds.timeout), (2, 2, 2));
}
