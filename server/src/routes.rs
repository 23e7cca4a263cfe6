//! The HTTP surface: routes, handlers, and JSON answers for 404 / 405 / 413.

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use chrono::Utc;

use crate::engine::Engine;
use crate::error::{json_response, ApiError};
use crate::metrics::{self, Gauges};
use crate::stats::{Stats, StatsReport};
use crate::{order, reply, Config};

/// Largest accepted request body; an order is about 250 bytes.
pub const MAX_BODY_BYTES: usize = 4096;

/// What every handler shares.
pub struct AppState {
    /// The books.
    pub engine: Engine,
    /// Counters and the latency histogram.
    pub stats: Stats,
    /// `--inject-delay-us`: busy-wait per order, a known slowdown for testing the gate.
    pub inject_delay: Duration,
}

impl AppState {
    pub fn new(config: &Config) -> Self {
        AppState {
            engine: Engine::new(config.max_resting_per_symbol, config.max_symbols),
            stats: Stats::default(),
            inject_delay: config.inject_delay,
        }
    }

    /// Parses, matches and answers one order body; counts the result.
    pub fn place_order(&self, body: &[u8]) -> Result<Vec<u8>, ApiError> {
        let order = order::parse(body)?;
        spin(self.inject_delay);
        let execution = self.engine.submit(
            order.symbol,
            order.side,
            order.limit(),
            order.quantity,
            order.time_in_force,
        );
        let outcome = &execution.outcome;
        self.stats
            .record_order(outcome.status, outcome.fills.len(), outcome.filled);
        Ok(reply::order_reply(&order, &execution, Utc::now()))
    }
}

/// Busy-waits: a sleep would free the worker thread and not cost CPU like real work does.
fn spin(delay: Duration) {
    if delay.is_zero() {
        return;
    }
    let start = Instant::now();
    while start.elapsed() < delay {
        std::hint::spin_loop();
    }
}

/// The application: every route, with JSON errors for everything else.
pub fn router(state: Arc<AppState>) -> Router {
    Router::new()
        .route("/order", post(post_order))
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
    State(app): State<Arc<AppState>>,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let started = Instant::now();
    let result = match body {
        Ok(body) => app.place_order(&body),
        Err(rejection) => Err(body_error(&rejection)),
    };
    let response = match result {
        Ok(reply) => json_response(StatusCode::OK, reply),
        Err(err) => {
            app.stats.record_error(err.status.as_u16());
            err.into_response()
        }
    };
    app.stats.observe_handler(started.elapsed());
    response
}

/// A body that could not be read: too large (413), or broken off (400).
fn body_error(rejection: &BytesRejection) -> ApiError {
    if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
        ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("request body is larger than {MAX_BODY_BYTES} bytes; an order is one small JSON object"),
            None,
        )
    } else {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            format!("could not read the request body: {}", rejection.body_text()),
            None,
        )
    }
}

async fn get_stats(State(app): State<Arc<AppState>>) -> Response {
    let (totals, elapsed) = app.stats.since_reset();
    let report = StatsReport::new(
        &totals,
        elapsed,
        app.engine.resting_orders(),
        app.engine.symbols(),
    );
    json(&report)
}

/// Zeroes `/stats` and empties the books, so each run starts from the same state.
/// Answers with the figures of the period that ended.
async fn reset_stats(State(app): State<Arc<AppState>>) -> Response {
    let resting = app.engine.resting_orders();
    let symbols = app.engine.symbols();
    app.engine.clear();
    let (totals, elapsed) = app.stats.reset();
    json(&StatsReport::new(&totals, elapsed, resting, symbols))
}

async fn health() -> Response {
    json_response(StatusCode::OK, br#"{"status":"ok"}"#.to_vec())
}

async fn get_metrics(State(app): State<Arc<AppState>>) -> Response {
    let gauges = Gauges {
        resting_orders: app.engine.resting_orders(),
        symbols: app.engine.symbols(),
    };
    let text = metrics::render(&app.stats.totals(), &app.stats.handler_latency(), gauges);
    (
        [(
            axum::http::header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        text,
    )
        .into_response()
}

async fn not_found(State(app): State<Arc<AppState>>, method: Method, uri: Uri) -> Response {
    app.stats.record_error(404);
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
    State(app): State<Arc<AppState>>,
    method: Method,
    uri: Uri,
) -> Response {
    app.stats.record_error(405);
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
