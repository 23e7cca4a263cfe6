//! One task per connection. A worker takes order numbers from a shared counter (closed
//! loop) or from the pacer as they fall due (open loop), posts the order, reads the whole
//! answer and records the latency into its own histograms. No lock or log line per
//! request; the only allocations are the request's own (reqwest needs an owned URL and
//! header map per request, cloned from [`OrderRequest`], and allocates its state).
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use bytes::{Bytes, BytesMut};
use reqwest::header::{HeaderMap, HeaderValue, ACCEPT, CONTENT_TYPE, HOST};
use reqwest::{Client, Method, Request, StatusCode, Url};

use crate::order::{write_body, Order};
use crate::pacing::Schedule;
use crate::stats::{new_histogram, ErrorKinds, Failure, Report};

/// Room for one body (≈ 220 bytes) so the buffer never grows after the first order.
const BODY_CAPACITY: usize = 512;

/// Maps an answer's status to the contract's verdict: only 200 is a success.
pub fn status_verdict(status: StatusCode) -> Result<(), Failure> {
    match status.as_u16() {
        200 => Ok(()),
        400..=499 => Err(Failure::Http4xx),
        500..=599 => Err(Failure::Http5xx),
        _ => Err(Failure::Other),
    }
}

fn classify(err: &reqwest::Error) -> Failure {
    if err.is_timeout() {
        Failure::Timeout
    } else if err.is_connect() {
        Failure::Connect
    } else {
        Failure::Other
    }
}

/// Where a worker gets its next order number from.
pub enum Tickets {
    /// Closed loop: a shared counter up to `end`; no order is started at or after
    /// `deadline` (`--duration`).
    Counter {
        next: AtomicU64,
        end: u64,
        deadline: Option<Instant>,
    },
    /// Open loop: numbers released by the pacer thread at their due times.
    Paced {
        schedule: Schedule,
        due: async_channel::Receiver<u64>,
    },
}

impl Tickets {
    /// The next order and, in open loop, its intended send time; `None` ends the phase.
    async fn take(&self) -> Option<(u64, Option<Instant>)> {
        match self {
            Tickets::Counter {
                next,
                end,
                deadline,
            } => {
                if deadline.is_some_and(|d| Instant::now() >= d) {
                    return None;
                }
                let k = next.fetch_add(1, Ordering::Relaxed);
                (k < *end).then_some((k, None))
            }
            Tickets::Paced { schedule, due } => {
                due.recv().await.ok().map(|k| (k, Some(schedule.due(k))))
            }
        }
    }
}

/// The fixed part of every order's request, built once per client with reqwest's own
/// builder (which moves a URL's `user:password@` into an `Authorization` header) and
/// cloned per order: the URL and the header map, the default `Accept: */*` and the
/// `Host` header included, so neither reqwest (default headers) nor hyper-util (it
/// formats `host:port` for every request that lacks one) builds them per order.
#[derive(Debug, Clone)]
pub struct OrderRequest {
    url: Url,
    headers: HeaderMap,
}

impl OrderRequest {
    pub fn new(client: &Client, url: &Url) -> Result<OrderRequest, String> {
        let bad = |why: String| format!("cannot build the order request ({why}); check --url");
        let mut headers = HeaderMap::with_capacity(4);
        if let Some(host) = host_header(url) {
            headers.insert(
                HOST,
                HeaderValue::try_from(host).map_err(|e| bad(e.to_string()))?,
            );
        }
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        headers.insert(ACCEPT, HeaderValue::from_static("*/*"));
        let template = client
            .post(url.clone())
            .headers(headers)
            .build()
            .map_err(|e| bad(e.to_string()))?;
        Ok(OrderRequest {
            url: template.url().clone(),
            headers: template.headers().clone(),
        })
    }

    /// One order's request: POST, the template's URL and headers, `body`.
    pub fn with_body(&self, body: Bytes) -> Request {
        let mut request = Request::new(Method::POST, self.url.clone());
        *request.headers_mut() = self.headers.clone();
        *request.body_mut() = Some(body.into());
        request
    }
}

/// The `Host` value hyper-util would otherwise format per request: the host, plus
/// `:port` unless it is the scheme's default (which `Url` already leaves out).
fn host_header(url: &Url) -> Option<String> {
    let host = url.host_str()?;
    Some(match url.port() {
        Some(port) => format!("{host}:{port}"),
        None => host.to_string(),
    })
}

/// What every worker of one phase shares (across shards; each shard has its own client).
pub struct Phase {
    pub seed: u64,
    pub timeout: Duration,
    pub tickets: Tickets,
    /// Warm-up phases send but do not record.
    pub record: bool,
    /// Set by SIGINT: finish the order in flight, start no new one.
    pub stop: Arc<AtomicBool>,
}

/// The worker loop: runs until the phase's orders, deadline or SIGINT end it.
pub async fn run(phase: Arc<Phase>, client: Client, order: Arc<OrderRequest>) -> Report {
    let mut report = Report {
        latency: new_histogram(),
        uncorrected: matches!(phase.tickets, Tickets::Paced { .. }).then(new_histogram),
        lateness: matches!(phase.tickets, Tickets::Paced { .. }).then(new_histogram),
        errors: ErrorKinds::default(),
        sent: 0,
    };
    let mut body = BytesMut::with_capacity(BODY_CAPACITY);
    while let Some((k, intended)) = phase.tickets.take().await {
        if phase.stop.load(Ordering::Relaxed) {
            break;
        }
        body.reserve(BODY_CAPACITY); // takes the buffer back once reqwest dropped the last body
        write_body(&mut body, &Order::nth(phase.seed, k), SystemTime::now());
        let payload = body.split().freeze();
        let start = Instant::now();
        let outcome = post(&client, &phase, order.with_body(payload)).await;
        let done = Instant::now();
        report.sent += 1;
        if !phase.record {
            continue;
        }
        if let (Some(intended), Some(h)) = (intended, report.lateness.as_mut()) {
            h.saturating_record(lateness_nanos(start, intended));
        }
        match outcome {
            Ok(()) => {
                let from = intended.unwrap_or(start);
                report.latency.saturating_record(nanos(done - from));
                if let Some(h) = report.uncorrected.as_mut() {
                    h.saturating_record(nanos(done - start));
                }
            }
            Err(failure) => report.errors.count(failure),
        }
    }
    report
}

/// Sends one order and reads the answer to its end, within the per-request timeout.
async fn post(client: &Client, phase: &Phase, request: Request) -> Result<(), Failure> {
    let exchange = async {
        let mut response = client.execute(request).await.map_err(|e| classify(&e))?;
        let status = response.status();
        // Drain chunk by chunk: the body is read fully but never collected.
        while response.chunk().await.map_err(|e| classify(&e))?.is_some() {}
        status_verdict(status)
    };
    tokio::time::timeout(phase.timeout, exchange)
        .await
        .unwrap_or(Err(Failure::Timeout))
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX).max(1)
}

/// Send lateness in ns: the actual send minus the intended one, 0 when it was on time.
fn lateness_nanos(start: Instant, intended: Instant) -> u64 {
    u64::try_from(start.saturating_duration_since(intended).as_nanos()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lateness_is_the_send_after_its_time_and_never_negative() {
        let intended = Instant::now();
        let late = intended + Duration::from_micros(250);
        assert_eq!(lateness_nanos(late, intended), 250_000);
        assert_eq!(lateness_nanos(intended, late), 0);
    }

    #[test]
    fn only_200_is_a_success() {
        assert_eq!(status_verdict(StatusCode::OK), Ok(()));
        assert_eq!(status_verdict(StatusCode::CREATED), Err(Failure::Other));
        assert_eq!(status_verdict(StatusCode::FOUND), Err(Failure::Other));
        assert_eq!(
            status_verdict(StatusCode::UNPROCESSABLE_ENTITY),
            Err(Failure::Http4xx)
        );
        assert_eq!(
            status_verdict(StatusCode::SERVICE_UNAVAILABLE),
            Err(Failure::Http5xx)
        );
    }

    #[test]
    fn host_header_is_what_hyper_would_send() {
        for (url, host) in [
            ("http://127.0.0.1:8080/order", "127.0.0.1:8080"),
            ("http://localhost/order", "localhost"),
            ("http://localhost:80/order", "localhost"),
            ("http://h.test:8443/order", "h.test:8443"),
            ("http://[::1]:9/order", "[::1]:9"),
            ("http://u:p@127.0.0.1:9/order", "127.0.0.1:9"),
        ] {
            let got = host_header(&Url::parse(url).unwrap());
            assert_eq!(got.as_deref(), Some(host), "{url}");
        }
    }

    #[test]
    fn order_request_is_a_post_with_fixed_headers() {
        let client = Client::builder().build().unwrap();
        let url = Url::parse("http://u:p@127.0.0.1:9/base/order").unwrap();
        let order = OrderRequest::new(&client, &url).unwrap();
        let request = order.with_body(Bytes::from_static(b"{}"));
        assert_eq!(request.method(), Method::POST);
        assert_eq!(request.url().as_str(), "http://127.0.0.1:9/base/order");
        let headers = request.headers();
        assert_eq!(headers[HOST], "127.0.0.1:9");
        assert_eq!(headers[CONTENT_TYPE], "application/json");
        assert_eq!(headers[ACCEPT], "*/*");
        assert_eq!(headers[reqwest::header::AUTHORIZATION], "Basic dTpw");
        assert_eq!(headers.len(), 4);
        let body = request.body().and_then(|b| b.as_bytes());
        assert_eq!(body, Some(&b"{}"[..]));
    }
}
