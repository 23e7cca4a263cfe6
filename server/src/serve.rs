//! `run`, the API on a listener, and its accept loop: hyper's HTTP/1 server on every connection, set up by hand because
//! `axum::serve` exposes none of hyper's settings and two of them matter here:
//!
//! - `half_close`: a client may send its request and then shut down its write side
//!   (`nc -N`, `shutdown(SHUT_WR)`). hyper's default treats that EOF as the end of the
//!   connection and drops the answer; with `half_close` the answer is written, then the
//!   connection closes.
//! - `max_header_size`: the most of a request head hyper buffers. Below it, a head whose
//!   header fields add up to more than `MAX_HEADER_BYTES` is answered here with the JSON 431.
//!
//! - `header_read_timeout` (with tokio's timer): a request head that has not arrived
//!   within `Config::header_read_timeout` of the connection being ready for it closes the
//!   connection (slowloris); hyper starts the clock when it waits for a head, so an idle
//!   keep-alive connection is closed after the same time.
//!
//! Otherwise it does what `axum::serve(..).with_graceful_shutdown(..)` did: one task per
//! connection; on shutdown, stop accepting, let each connection finish the request in
//! flight (hyper's graceful shutdown), and return when the last one has closed, or after
//! `Config::shutdown_timeout`, closing the ones still open (a client sending slowly keeps
//! its connection mid-request, which hyper's graceful shutdown waits for). Past
//! `Config::max_connections` open connections, a new one is closed as soon as accepted.

use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::pin::pin;
use std::sync::Arc;

use axum::extract::Request;
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::serve::{Listener, ListenerExt};
use axum::Router;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio::sync::watch;
use tower_service::Service;

use crate::config::Config;
use crate::counters::Counters;
use crate::error::ApiError;
use crate::routes::router;
use crate::service::OrderService;

/// Most bytes of header fields a request may carry, counted as the name, the value and 4
/// bytes (`: ` and CRLF) per field; more is a 431 with the JSON error body. Generous for
/// cookies and proxies (nginx refuses one line over 8 KiB, Node.js a head over 16 KiB),
/// tiny next to what a client could make the server hold.
pub const MAX_HEADER_BYTES: usize = 16 * 1024;

/// Most bytes of a request head (request line and headers) hyper reads at all: it answers
/// a longer head itself with a 431 without a body, and closes the connection. Bounds the
/// memory one connection can make the server buffer (hyper's default is about 400 KiB),
/// while heads between `MAX_HEADER_BYTES` and this still get the JSON answer.
pub const MAX_HEAD_BYTES: usize = 128 * 1024;

/// Serves the API on `listener` until `shutdown` completes, then finishes the requests in
/// flight and returns (within `config.shutdown_timeout`, closing connections still open).
/// On the caller's runtime; `runtime::serve` is the binary's whole life around it.
pub async fn run(
    listener: TcpListener,
    config: Config,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> io::Result<()> {
    let state = Arc::new(OrderService::new(&config));
    let app = router(Arc::clone(&state), config.body_read_timeout);
    // Replies are small and latency matters: no Nagle delay.
    let listener = listener.tap_io(|tcp| {
        if let Err(err) = tcp.set_nodelay(true) {
            tracing::debug!("could not set TCP_NODELAY: {err}");
        }
    });
    tracing::info!(?config, "serving");
    connections(listener, app, state, &config, shutdown).await;
    Ok(())
}

/// What the connection tasks are asked to do, through a watch channel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// Serve requests (the value the channel starts with).
    Serving,
    /// Finish the request in flight, then close (hyper's graceful shutdown).
    Draining,
    /// Close now: the shutdown deadline has passed.
    Closing,
}

/// Serves `app` on every connection `listener` accepts until `shutdown` completes, then
/// finishes the requests in flight and returns once every connection has closed, or once
/// `config.shutdown_timeout` has passed, closing the connections still open.
async fn connections<L: Listener>(
    mut listener: L,
    app: Router,
    state: Arc<OrderService>,
    config: &Config,
    shutdown: impl Future<Output = ()>,
) {
    let mut http = http1::Builder::new();
    http.half_close(true)
        .max_header_size(MAX_HEAD_BYTES)
        .timer(TokioTimer::new())
        .header_read_timeout(config.header_read_timeout);
    // Each connection task holds a receiver: `send` asks them to drain or close, and
    // `closed()` on the sender completes when the last one has dropped its receiver.
    let (stop_tx, stop_rx) = watch::channel(Phase::Serving);
    let mut shutdown = pin!(shutdown);
    loop {
        // The listener retries failed accepts itself (axum's `Listener`): this loop only
        // ends on shutdown, so the listener is never closed by a bad client. `biased`:
        // `shutdown` is polled first, so it is armed (`runtime::shutdown_signal`'s handlers
        // are installed on its first poll) before the first connection is served.
        let (io, _remote) = tokio::select! {
            biased;
            () = &mut shutdown => break,
            accepted = listener.accept() => accepted,
        };
        // Only this loop adds connections, so the count cannot pass the cap between the
        // check and the increment.
        if state.counters.open_connections() >= config.max_connections {
            state.counters.record_refused_connection();
            drop(io);
            continue;
        }
        let open = OpenConnection::new(Arc::clone(&state));
        let app = app.clone();
        let state = Arc::clone(&state);
        let service =
            service_fn(move |request: Request<Incoming>| answer(&app, &state.counters, request));
        let connection = http.serve_connection(TokioIo::new(io), service);
        let mut stop = stop_rx.clone();
        tokio::spawn(async move {
            let mut connection = pin!(connection);
            loop {
                tokio::select! {
                    result = connection.as_mut() => {
                        if let Err(err) = result {
                            tracing::debug!("connection ended: {err}");
                        }
                        break;
                    }
                    // On each `send`; an error (the sender is gone: `connections` was
                    // dropped) closes the connection like the deadline does.
                    changed = stop.changed() => {
                        if changed.is_err() || *stop.borrow_and_update() == Phase::Closing {
                            break;
                        }
                        connection.as_mut().graceful_shutdown();
                    }
                }
            }
            drop(stop);
            drop(open);
        });
    }
    drop(listener);
    let _ = stop_tx.send(Phase::Draining);
    drop(stop_rx);
    if tokio::time::timeout(config.shutdown_timeout, stop_tx.closed())
        .await
        .is_err()
    {
        tracing::warn!(
            "shutdown: {} connections still open after {:?} (--shutdown-timeout-ms), closing them",
            state.counters.open_connections(),
            config.shutdown_timeout
        );
        let _ = stop_tx.send(Phase::Closing);
        stop_tx.closed().await;
    }
}

/// One served connection, counted in `Counters::open_connections` while it lives.
struct OpenConnection(Arc<OrderService>);

impl OpenConnection {
    fn new(state: Arc<OrderService>) -> Self {
        state.counters.connection_opened();
        OpenConnection(state)
    }
}

impl Drop for OpenConnection {
    fn drop(&mut self) {
        self.0.counters.connection_closed();
    }
}

/// One request: the header limit, then the router. Everything the future needs is taken
/// before it starts, so it borrows nothing from the connection.
fn answer(
    app: &Router,
    counters: &Counters,
    request: Request<Incoming>,
) -> impl Future<Output = Result<Response, Infallible>> + Send + 'static {
    let routed = match header_limit(request.headers()) {
        Some(error) => {
            counters.record_error(error.status.as_u16());
            Err(error.into_response())
        }
        // tower's `call` takes `&mut self` and hyper hands the service out as `&self`, so
        // the router is cloned per request, as axum::serve does (a reference count).
        // `poll_ready` is skipped: a Router is always ready.
        None => Ok(app.clone().call(request)),
    };
    async move {
        match routed {
            Ok(route) => route.await,
            Err(response) => Ok(response),
        }
    }
}

/// Bytes one header field takes on the wire: name, `: `, value, CRLF.
fn field_bytes(name: &HeaderName, value: &HeaderValue) -> usize {
    name.as_str().len() + value.len() + 4
}

/// The 431 for header fields over `MAX_HEADER_BYTES`, naming the largest field. On the
/// common path this is a few additions per header: no allocation, no lock.
fn header_limit(headers: &HeaderMap) -> Option<ApiError> {
    let total: usize = headers.iter().map(|(n, v)| field_bytes(n, v)).sum();
    if total <= MAX_HEADER_BYTES {
        return None;
    }
    let largest = headers
        .iter()
        .max_by_key(|(n, v)| field_bytes(n, v))
        .map_or_else(String::new, |(name, value)| {
            format!(
                "; the largest is {name} ({} bytes)",
                field_bytes(name, value)
            )
        });
    Some(ApiError::new(
        StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
        format!(
            "request header fields are {total} bytes, over the limit of {MAX_HEADER_BYTES}{largest}; send fewer or shorter headers"
        ),
        None,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_limit_counts_names_values_and_separators() {
        let mut headers = HeaderMap::new();
        headers.insert("host", HeaderValue::from_static("x"));
        // "host: x\r\n" is 9 bytes; fill the rest of the limit with one field exactly.
        let fill = MAX_HEADER_BYTES - 9 - "x-fill".len() - 4;
        headers.insert("x-fill", HeaderValue::from_str(&"a".repeat(fill)).unwrap());
        assert_eq!(header_limit(&headers), None);
        headers.insert("x-one-more", HeaderValue::from_static(""));
        let error = header_limit(&headers).expect("one byte over the limit");
        assert_eq!(error.status, StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE);
        assert_eq!(error.field, None);
        assert!(
            error.message.contains("the largest is x-fill"),
            "{}",
            error.message
        );
    }
}
