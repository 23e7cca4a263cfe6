//! Well-framed HTTP/1.1 requests for the HTTP fuzz test: generated, written to bytes, and
//! what the server must answer each (status, and whether it may close the connection
//! after it).

use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::select;

use hft_server::routes::MAX_BODY_BYTES;
use hft_server::serve::MAX_HEADER_BYTES;

/// One request, as written.
#[derive(Clone, Debug)]
pub struct Request {
    pub method: &'static str,
    pub path: &'static str,
    /// HTTP/1.0 (with `Connection: keep-alive` unless `close`); else HTTP/1.1.
    pub http10: bool,
    /// Extra header fields, lower-case names, values without surrounding spaces.
    pub headers: Vec<(String, String)>,
    pub body: Body,
    /// `Expect: 100-continue`.
    pub expect: bool,
    /// `Connection: close`.
    pub close: bool,
}

#[derive(Clone, Debug)]
pub enum Body {
    None,
    Length(Vec<u8>),
    /// Chunks (an empty one is skipped: it would end the body), chunk extensions,
    /// trailer fields.
    Chunked(Vec<Vec<u8>>, bool, Vec<(String, String)>),
}

impl Body {
    fn bytes(&self) -> Vec<u8> {
        match self {
            Body::None => Vec::new(),
            Body::Length(bytes) => bytes.clone(),
            Body::Chunked(chunks, _, _) => chunks.concat(),
        }
    }
}

impl Request {
    /// The header fields as sent, framing included.
    fn fields(&self) -> Vec<(String, String)> {
        let mut fields = vec![("host".to_string(), "fuzz".to_string())];
        fields.extend(self.headers.iter().cloned());
        match &self.body {
            Body::None => {}
            Body::Length(bytes) => fields.push(("content-length".into(), bytes.len().to_string())),
            Body::Chunked(..) => fields.push(("transfer-encoding".into(), "chunked".into())),
        }
        if self.expect {
            fields.push(("expect".into(), "100-continue".into()));
        }
        if self.close {
            fields.push(("connection".into(), "close".into()));
        } else if self.http10 {
            fields.push(("connection".into(), "keep-alive".into()));
        }
        fields
    }

    pub fn render(&self) -> Vec<u8> {
        let version = if self.http10 { "1.0" } else { "1.1" };
        let mut out = format!("{} {} HTTP/{version}\r\n", self.method, self.path).into_bytes();
        for (name, value) in self.fields() {
            out.extend_from_slice(format!("{name}: {value}\r\n").as_bytes());
        }
        out.extend_from_slice(b"\r\n");
        match &self.body {
            Body::None => {}
            Body::Length(bytes) => out.extend_from_slice(bytes),
            Body::Chunked(chunks, extension, trailers) => {
                for chunk in chunks.iter().filter(|c| !c.is_empty()) {
                    let ext = if *extension { ";fuzz=1" } else { "" };
                    out.extend_from_slice(format!("{:X}{ext}\r\n", chunk.len()).as_bytes());
                    out.extend_from_slice(chunk);
                    out.extend_from_slice(b"\r\n");
                }
                out.extend_from_slice(b"0\r\n");
                for (name, value) in trailers {
                    out.extend_from_slice(format!("{name}: {value}\r\n").as_bytes());
                }
                out.extend_from_slice(b"\r\n");
            }
        }
        out
    }

    /// The status the server must answer.
    pub fn status(&self) -> u16 {
        let header_bytes: usize = self
            .fields()
            .iter()
            .map(|(n, v)| n.len() + v.len() + 4)
            .sum();
        if header_bytes > MAX_HEADER_BYTES {
            return 431;
        }
        let path = self.path.split('?').next().unwrap_or_default();
        let method = self.method;
        match path {
            "/order" if method == "POST" => {
                let body = self.body.bytes();
                if body.len() > MAX_BODY_BYTES {
                    413
                } else {
                    hft_server::order::parse(&body).map_or_else(|e| e.status.as_u16(), |_| 200)
                }
            }
            "/health" | "/stats" | "/metrics" if matches!(method, "GET" | "HEAD") => 200,
            "/stats/reset" if method == "POST" => 200,
            "/order" | "/health" | "/stats" | "/metrics" | "/stats/reset" => 405,
            _ => 404,
        }
    }

    /// The server may close the connection after answering: it did not read the whole
    /// body (any route but `POST /order`, a body over the limit, a 431), unless the body
    /// had already arrived whole, which the client cannot know. Found by this fuzz test:
    /// even an empty chunked body counts (`0\r\n\r\n` may still be on its way).
    pub fn may_close(&self) -> bool {
        let read_whole = self.method == "POST"
            && self.path.split('?').next() == Some("/order")
            && matches!(self.status(), 200 | 400 | 422);
        // A chunked body has bytes on the wire even when empty: its last chunk.
        let has_body = match &self.body {
            Body::None => false,
            Body::Length(bytes) => !bytes.is_empty(),
            Body::Chunked(..) => true,
        };
        (has_body && !read_whole) || self.ends()
    }

    /// The connection ends after this answer: no request after it is answered.
    pub fn ends(&self) -> bool {
        self.close
    }
}

/// An order body: a valid one, or something near it.
fn order_body(orders: Vec<Vec<u8>>) -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        3 => (
            select(&["buy", "sell"][..]),
            1u32..5,
            (9_950u32..=10_050).prop_map(|t| format!("{}.{:02}", t / 100, t % 100)),
            1u32..500,
            select(&["rod", "ioc", "fok"][..]),
            select(&["limit", "market"][..]),
        )
            .prop_map(|(side, symbol, price, qty, tif, pt)| {
                format!(r#"{{"buy_sell":"{side}","symbol":{symbol},"price":{price},"quantity":{qty},"market_type":"common","price_type":"{pt}","time_in_force":"{tif}","order_type":"stock","user_def":"fuzz","client_timestamp":"2026-11-23T10:00:00.5Z"}}"#).into_bytes()
            }),
        3 => select(orders),
        1 => vec(any::<u8>(), 0..64),
        1 => (MAX_BODY_BYTES - 300..MAX_BODY_BYTES + 200)
            .prop_map(|n| format!("{}{{}}", " ".repeat(n)).into_bytes()),
    ]
}

fn header() -> impl Strategy<Value = (String, String)> {
    let name = "[a-z][a-z0-9-]{0,16}".prop_filter("not a framing or connection header", |n| {
        !matches!(
            n.as_str(),
            "host"
                | "content-length"
                | "transfer-encoding"
                | "expect"
                | "connection"
                | "te"
                | "upgrade"
                | "trailer"
                | "keep-alive"
        )
    });
    let value = prop_oneof![
        8 => "([!-~]([ !-~]{0,30}[!-~])?)?",
        1 => (1_000usize..12_000).prop_map(|n| "v".repeat(n)),
    ];
    (name, value)
}

fn body(orders: Vec<Vec<u8>>, chunked: bool) -> BoxedStrategy<Body> {
    let bytes = order_body(orders);
    if chunked {
        (
            bytes,
            vec(any::<usize>(), 0..4),
            any::<bool>(),
            vec(header(), 0..2),
        )
            .prop_map(|(bytes, cuts, ext, trailers)| {
                let mut cuts: Vec<usize> = cuts.iter().map(|c| c % (bytes.len() + 1)).collect();
                cuts.sort_unstable();
                let mut chunks = Vec::new();
                let mut from = 0;
                for cut in cuts.into_iter().chain([bytes.len()]) {
                    chunks.push(bytes[from..cut].to_vec());
                    from = cut;
                }
                // Trailers stay short: they count against no header limit of ours.
                let trailers = trailers
                    .into_iter()
                    .filter(|(_, v)| v.len() < 100)
                    .collect();
                Body::Chunked(chunks, ext, trailers)
            })
            .boxed()
    } else {
        bytes.prop_map(Body::Length).boxed()
    }
}

pub fn request(orders: Vec<Vec<u8>>) -> impl Strategy<Value = Request> {
    let route = prop_oneof![
        6 => Just(("POST", "/order")),
        2 => Just(("GET", "/health")),
        1 => (
            select(&["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE"][..]),
            select(
                &[
                    "/order", "/health", "/stats", "/stats/reset", "/metrics", "/", "/nope",
                    "/order/", "/ORDER", "/health?x=1", "/order?client=fuzz", "/stats/reset/",
                ][..]
            ),
        ),
    ];
    let framing = prop_oneof![3 => Just(0u8), 3 => Just(1u8), 2 => Just(2u8)];
    // Now and then one header field that brings the total near MAX_HEADER_BYTES, on
    // either side of it.
    let near_limit = prop::option::weighted(0.1, MAX_HEADER_BYTES - 400..MAX_HEADER_BYTES);
    let headers = (vec(header(), 0..4), near_limit).prop_map(|(mut headers, pad)| {
        if let Some(len) = pad {
            headers.push(("x-pad".to_string(), "p".repeat(len)));
        }
        headers
    });
    (
        route,
        framing,
        prop::bool::weighted(0.1),
        headers,
        prop::bool::weighted(0.1),
        prop::bool::weighted(0.05),
    )
        .prop_flat_map(
            move |((method, path), framing, http10, headers, expect, close)| {
                let http10 = http10 && framing != 2;
                let bodies = match framing {
                    0 if method != "POST" => Just(Body::None).boxed(),
                    1 | 0 => body(orders.clone(), false),
                    _ => body(orders.clone(), true),
                };
                bodies.prop_map(move |body| Request {
                    method,
                    path,
                    http10,
                    headers: headers.clone(),
                    expect: expect && !matches!(body, Body::None),
                    body,
                    close,
                })
            },
        )
}
