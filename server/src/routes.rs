//! The HTTP surface: routes, handlers, and JSON answers for 404 / 405 / 413. Handlers
//! only map HTTP to the order service (`service.rs`) and its results back.

use std::future::poll_fn;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes, HttpBody};
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;

use crate::error::{json_response, ApiError};
use crate::service::{OrderService, Placed};

/// Largest accepted request body; an order is about 250 bytes.
pub const MAX_BODY_BYTES: usize = 4096;

/// The application: every route, with JSON errors for everything else. A `POST /order`
/// body that has not fully arrived within `body_read_timeout` of its head is answered
/// 408 and its connection closed (`None`: no limit).
pub fn router(state: Arc<OrderService>, body_read_timeout: Option<Duration>) -> Router {
    Router::new()
        .route(
            "/order",
            post(move |app: State<Arc<OrderService>>, body: Body| {
                post_order(app, body, body_read_timeout)
            }),
        )
        .route("/stats", get(get_stats))
        .route("/stats/reset", post(reset_stats))
        .route("/health", get(health))
        .route("/metrics", get(get_metrics))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .with_state(state)
}

async fn post_order(
    State(app): State<Arc<OrderService>>,
    body: Body,
    body_read_timeout: Option<Duration>,
) -> Response {
    let body = match body_read_timeout {
        Some(limit) => tokio::time::timeout(limit, read_body(body))
            .await
            .unwrap_or_else(|_| Err(body_timed_out(limit))),
        None => read_body(body).await,
    };
    let started = Instant::now();
    let result = match body {
        Ok(body) => app.place_order(&body),
        Err(err) => Err(err),
    };
    let response = match result {
        // --inject-hang-every: this request is never answered; its connection waits
        // until the client gives up, and stays open until the server stops.
        Ok(Placed::Hang) => return std::future::pending().await,
        Ok(Placed::Reply(reply)) => {
            let response = json_response(StatusCode::OK, reply);
            app.after_reply();
            response
        }
        Err(err) => {
            app.counters.record_error(err.status.as_u16());
            let timed_out = err.status == StatusCode::REQUEST_TIMEOUT;
            let mut response = err.into_response();
            if timed_out {
                // The rest of the body may still come: the connection cannot be reused.
                response.headers_mut().insert(
                    axum::http::header::CONNECTION,
                    axum::http::HeaderValue::from_static("close"),
                );
            }
            response
        }
    };
    app.counters.observe_handler(started.elapsed());
    response
}

/// Reads the whole request body, at most `MAX_BODY_BYTES`: too large is a 413, a body
/// broken off is a 400. Polls hyper's body directly: an order arrives as one frame, which
/// is returned as is, without axum's `Bytes` extractor's limit wrapper (a boxed body) and
/// collection buffer (a queue), each allocated and freed per request.
async fn read_body(mut body: Body) -> Result<Bytes, ApiError> {
    let mut first = Bytes::new();
    let mut joined: Option<Vec<u8>> = None;
    while let Some(frame) = poll_fn(|cx| Pin::new(&mut body).poll_frame(cx)).await {
        let frame = frame.map_err(|err| {
            ApiError::new(
                StatusCode::BAD_REQUEST,
                format!("could not read the request body: {err}"),
                None,
            )
        })?;
        // Trailers come last and are not part of the order.
        let Ok(data) = frame.into_data() else { break };
        let total = joined.as_ref().map_or(first.len(), Vec::len) + data.len();
        if total > MAX_BODY_BYTES {
            return Err(ApiError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                format!("request body is larger than {MAX_BODY_BYTES} bytes; an order is one small JSON object"),
                None,
            ));
        }
        match &mut joined {
            Some(joined) => joined.extend_from_slice(&data),
            None if first.is_empty() => first = data,
            None => {
                let mut both = Vec::with_capacity(total);
                both.extend_from_slice(&first);
                both.extend_from_slice(&data);
                joined = Some(both);
            }
        }
    }
    Ok(joined.map_or(first, Bytes::from))
}

/// The 408 for a body that did not arrive within `limit`.
fn body_timed_out(limit: Duration) -> ApiError {
    ApiError::new(
        StatusCode::REQUEST_TIMEOUT,
        format!(
            "request body did not arrive within {} ms of its headers (--body-read-timeout-ms); send the whole body at once",
            limit.as_millis()
        ),
        None,
    )
}

async fn get_stats(State(app): State<Arc<OrderService>>) -> Response {
    json(&app.stats_report())
}

/// Zeroes `/stats` and empties the books; answers with the figures of the period that
/// ended.
async fn reset_stats(State(app): State<Arc<OrderService>>) -> Response {
    json(&app.reset())
}

async fn health() -> Response {
    json_response(StatusCode::OK, br#"{"status":"ok"}"#.to_vec())
}

async fn get_metrics(State(app): State<Arc<OrderService>>) -> Response {
    let text = app.metrics_text();
    (
        [(
            axum::http::header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        text,
    )
        .into_response()
}

async fn not_found(State(app): State<Arc<OrderService>>, method: Method, uri: Uri) -> Response {
    app.counters.record_error(404);
    ApiError::new(
        StatusCode::NOT_FOUND,
        format!(
            "no such path: {method} {}; the endpoints are POST /order, GET /stats, POST /stats/reset, GET /health, GET /metrics",
            uri.path()
        ),
        None,
    )
    .into_response()
}

async fn method_not_allowed(
    State(app): State<Arc<OrderService>>,
    method: Method,
    uri: Uri,
) -> Response {
    app.counters.record_error(405);
    let allowed = match uri.path() {
        "/order" | "/stats/reset" => "POST",
        _ => "GET",
    };
    let mut response = ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        format!("{method} is not allowed on {}; use {allowed}", uri.path()),
        None,
    )
    .into_response();
    response.headers_mut().insert(
        axum::http::header::ALLOW,
        axum::http::HeaderValue::from_static(allowed),
    );
    response
}

fn json(value: &impl serde::Serialize) -> Response {
    match serde_json::to_vec(value) {
        Ok(body) => json_response(StatusCode::OK, body),
        Err(err) => ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("could not encode the answer: {err}"),
            None,
        )
        .into_response(),
    }
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};
    use std::net::{SocketAddr, TcpStream};

    use std::time::Duration;

    use super::*;
    use crate::config::Config;

    /// Sends `POST /order` with a chunked body, one write per chunk with a pause between,
    /// so the server sees several body frames; returns the whole answer. The server may
    /// answer (413) and close before the last chunk is written: then a write, or the read
    /// after the answer, meets a closed or reset connection, which ends the exchange.
    fn post_chunked(addr: SocketAddr, chunks: &[String]) -> String {
        let closed = |err: std::io::Error| {
            use std::io::ErrorKind::{BrokenPipe, ConnectionReset};
            assert!(matches!(err.kind(), BrokenPipe | ConnectionReset), "{err}");
        };
        let mut tcp = TcpStream::connect(addr).unwrap();
        let head = "POST /order HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\
                    Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n";
        let sent = (|| {
            tcp.write_all(head.as_bytes())?;
            for chunk in chunks {
                tcp.write_all(format!("{:x}\r\n{chunk}\r\n", chunk.len()).as_bytes())?;
                std::thread::sleep(Duration::from_millis(20));
            }
            tcp.write_all(b"0\r\n\r\n")
        })();
        sent.unwrap_or_else(closed);
        let mut answer = Vec::new();
        tcp.read_to_end(&mut answer)
            .map(drop)
            .unwrap_or_else(closed);
        String::from_utf8_lossy(&answer).into_owned()
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn bodies_in_several_frames_are_joined_up_to_the_limit() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let app = router(Arc::new(OrderService::new(&Config::default())), None);
        tokio::spawn(async move { axum::serve(listener, app).await });
        let order = r#"{"buy_sell":"buy","symbol":7,"price":100.05,"quantity":100,"market_type":"common","price_type":"limit","time_in_force":"rod","order_type":"stock","user_def":"","client_timestamp":"2026-11-22T10:00:00Z"}"#;
        let (head, tail) = order.split_at(60);
        let pieces = vec![head.to_string(), tail.to_string()];
        let spaces = " ".repeat(MAX_BODY_BYTES / 2);
        let too_large = vec![spaces.clone(), spaces, order.to_string()];
        let (ok, over) = tokio::task::spawn_blocking(move || {
            (post_chunked(addr, &pieces), post_chunked(addr, &too_large))
        })
        .await
        .unwrap();
        assert!(ok.starts_with("HTTP/1.1 200"), "{ok}");
        assert!(ok.contains(r#""status":"NEW""#), "{ok}");
        assert!(over.starts_with("HTTP/1.1 413"), "{over}");
    }
}
