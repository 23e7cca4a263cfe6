//! Fuzzing the HTTP layer (server/README.md, "Fuzzing"): raw bytes over real TCP to a
//! real server, starting from the seed corpus in server/fuzz/corpus/http.
//!
//! - `fuzz_http_raw`: anything (corpus requests mutated byte- and line-wise, several glued
//!   together, random bytes), then a half-close. What comes back must be well-formed
//!   answers with 1xx (100 Continue), 2xx or 4xx statuses, then the close.
//! - `fuzz_http_framed`: pipelines of well-framed requests (content-length or chunked,
//!   chunk extensions, trailers, HTTP/1.0, `Expect`, big headers), written in random
//!   pieces, ended by a half-close or kept open. Each request gets exactly the answer it
//!   must (status computed from the route, the header limit and `order::parse`), in
//!   order; the server may end the connection only where `Request::may_close` allows.
//!
//! After every case `GET /health` on a new connection answers 200, the server has not
//! stopped, and no server thread has panicked.

#[path = "fuzz_http/requests.rs"]
mod requests;
mod wire;

#[path = "../fuzz/harness.rs"]
mod harness;

use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::select;
use proptest::test_runner::TestCaseError;

use harness::{corpus, fuzz, Bytes};
use hft_server::Config;
use requests::Request;
use wire::{exchange, parse_responses, Bodies, End, Server};

/// Cases per fuzz test in a plain `cargo test`: a second or two each.
const CASES: u32 = 800;

/// What every case must leave behind: a healthy, running server that never panicked.
fn still_serving(server: &Server) -> Result<(), TestCaseError> {
    prop_assert_eq!(
        Server::panics(),
        0,
        "a server thread panicked (see the output)"
    );
    prop_assert!(server.running(), "the server stopped serving");
    prop_assert_eq!(server.health(), Ok(200));
    Ok(())
}

/// One edit of raw request bytes.
#[derive(Clone, Debug)]
enum Edit {
    Set(usize, u8),
    Insert(usize, Bytes),
    Delete(usize, usize),
    Truncate(usize),
    Repeat(usize, usize, usize),
    /// A header field of this many bytes after the first line break.
    BigHeader(usize),
}

fn edit() -> impl Strategy<Value = Edit> {
    let i = || any::<usize>();
    let snippets = select(
        &[
            "\r\n",
            "\n",
            "\r",
            " ",
            "\t",
            ":",
            "\0",
            "\r\n\r\n",
            "Content-Length: 5\r\n",
            "Content-Length: 99999999999\r\n",
            "Transfer-Encoding: chunked\r\n",
            "Transfer-Encoding: gzip, chunked\r\n",
            "Expect: 100-continue\r\n",
            "Connection: close\r\n",
            "Connection: upgrade\r\nUpgrade: h2c\r\n",
            "HEAD ",
            "GET / HTTP/1.1\r\n\r\n",
            "0\r\n\r\n",
            "ffffffff\r\n",
            "HTTP/1.0",
            "\u{e9}",
        ][..],
    );
    prop_oneof![
        3 => (i(), any::<u8>()).prop_map(|(at, b)| Edit::Set(at, b)),
        3 => (i(), snippets).prop_map(|(at, s)| Edit::Insert(at, Bytes(s.as_bytes().to_vec()))),
        1 => (i(), vec(any::<u8>(), 1..8)).prop_map(|(at, b)| Edit::Insert(at, Bytes(b))),
        2 => (i(), 1usize..32).prop_map(|(at, n)| Edit::Delete(at, n)),
        1 => i().prop_map(Edit::Truncate),
        1 => (i(), 1usize..64, 2usize..50).prop_map(|(at, n, times)| Edit::Repeat(at, n, times)),
        1 => prop_oneof![10_000usize..20_000, 100_000usize..200_000].prop_map(Edit::BigHeader),
    ]
}

fn apply(bytes: &mut Vec<u8>, edit: &Edit) {
    let n = bytes.len();
    let at = |i: usize| i % (n + 1);
    match edit {
        Edit::Insert(i, Bytes(more)) => {
            let i = at(*i);
            bytes.splice(i..i, more.iter().copied());
        }
        Edit::Truncate(i) => bytes.truncate(at(*i)),
        Edit::BigHeader(len) => {
            let line = bytes
                .windows(2)
                .position(|w| w == b"\r\n")
                .map_or(n, |p| p + 2);
            let field = format!("X-Big: {}\r\n", "a".repeat(*len));
            bytes.splice(line..line, field.into_bytes());
        }
        _ if n == 0 => {}
        Edit::Set(i, b) => bytes[i % n] = *b,
        Edit::Delete(i, len) => {
            let i = i % n;
            bytes.drain(i..(i + len).min(n));
        }
        Edit::Repeat(i, len, times) => {
            let i = i % n;
            let piece = bytes[i..(i + len).min(n)].repeat(*times);
            bytes.splice(i..i, piece);
        }
    }
}

/// Answers to bytes that may be anything: well-formed, 2xx or 4xx, then the close.
fn check_raw(server: &Server, sent: &[u8]) -> Result<(), TestCaseError> {
    let bodies = if sent.windows(4).any(|w| w == b"HEAD") {
        Bodies::Guess
    } else {
        Bodies::Framed
    };
    let got = exchange(server.addr, &[sent], End::HalfClose, bodies)
        .map_err(|e| TestCaseError::fail(format!("{e}")))?;
    prop_assert!(got.closed);
    let answers = parse_responses(&got.bytes, bodies).map_err(TestCaseError::fail)?;
    for answer in &answers {
        prop_assert!(
            matches!(answer.status, 200..=299 | 400..=499),
            "status {}: {answer:?}",
            answer.status
        );
        prop_assert!(answer.interim.iter().all(|&s| s == 100), "{answer:?}");
    }
    still_serving(server)
}

#[test]
fn fuzz_http_raw() {
    let server = Server::start(Config::default());
    let files = corpus("http");
    let requests: Vec<Vec<u8>> = files.iter().map(|(_, b)| b.clone()).collect();
    let seeds = files
        .into_iter()
        .map(|(name, bytes)| (name, Bytes(bytes)))
        .collect();
    let strategy = prop_oneof![
        4 => (select(requests.clone()), vec(edit(), 0..5)).prop_map(|(mut bytes, edits)| {
            for edit in &edits {
                apply(&mut bytes, edit);
            }
            Bytes(bytes)
        }),
        2 => (vec(select(requests), 2..5), vec(edit(), 0..3)).prop_map(|(parts, edits)| {
            let mut bytes = parts.concat();
            for edit in &edits {
                apply(&mut bytes, edit);
            }
            Bytes(bytes)
        }),
        1 => vec(any::<u8>(), 0..600).prop_map(Bytes),
    ];
    fuzz("http_raw", CASES, seeds, strategy, |Bytes(sent)| {
        check_raw(&server, &sent)
    });
    server.stop().unwrap();
}

/// A pipeline of requests, how it is cut into writes, and whether it ends in a half-close.
#[derive(Clone, Debug)]
struct Pipeline {
    requests: Vec<Request>,
    cuts: Vec<usize>,
    half_close: bool,
}

fn check_framed(server: &Server, pipeline: &Pipeline) -> Result<(), TestCaseError> {
    let mut bytes = Vec::new();
    for request in &pipeline.requests {
        bytes.extend(request.render());
    }
    let mut cuts: Vec<usize> = pipeline
        .cuts
        .iter()
        .map(|c| c % (bytes.len() + 1))
        .collect();
    cuts.sort_unstable();
    let mut pieces: Vec<&[u8]> = Vec::new();
    let mut from = 0;
    for cut in cuts.into_iter().chain([bytes.len()]) {
        pieces.push(&bytes[from..cut]);
        from = cut;
    }
    // Requests after one that ends the connection get no answer.
    let answered = match pipeline.requests.iter().position(Request::ends) {
        Some(last) => &pipeline.requests[..=last],
        None => &pipeline.requests[..],
    };
    let heads: Vec<bool> = answered.iter().map(|r| r.method == "HEAD").collect();
    let end = if pipeline.half_close {
        End::HalfClose
    } else {
        End::Answers(answered.len())
    };
    let got = exchange(server.addr, &pieces, end, Bodies::Heads(&heads))
        .map_err(|e| TestCaseError::fail(format!("{e}")))?;
    let answers =
        parse_responses(&got.bytes, Bodies::Heads(&heads)).map_err(TestCaseError::fail)?;
    let statuses: Vec<u16> = answers.iter().map(|a| a.status).collect();
    let expected: Vec<u16> = answered.iter().map(Request::status).collect();
    prop_assert!(
        expected.starts_with(&statuses) && !statuses.is_empty(),
        "answers {statuses:?}, expected {expected:?}"
    );
    if statuses.len() < expected.len() {
        prop_assert!(
            got.closed,
            "{statuses:?} of {expected:?}, and the connection is open"
        );
        prop_assert!(
            answered[statuses.len() - 1].may_close(),
            "the connection closed after {statuses:?} of {expected:?}"
        );
    }
    if pipeline.half_close {
        prop_assert!(got.closed, "no close after the half-close");
    }
    for (request, answer) in answered.iter().zip(&answers) {
        prop_assert!(
            answer.interim.is_empty() || (request.expect && answer.interim == [100]),
            "{answer:?}"
        );
        if request.method == "HEAD" || request.path.starts_with("/metrics") {
            continue;
        }
        let json = answer.json().map_err(TestCaseError::fail)?;
        if answer.status >= 400 {
            prop_assert!(
                json["error"].as_str().is_some_and(|e| !e.is_empty()),
                "{json}"
            );
            prop_assert!(
                json["field"].is_null() || json["field"].is_string(),
                "{json}"
            );
        }
    }
    still_serving(server)
}

#[test]
fn fuzz_http_framed() {
    let server = Server::start(Config::default());
    let orders: Vec<Vec<u8>> = corpus("order").into_iter().map(|(_, b)| b).collect();
    let strategy = (
        vec(requests::request(orders), 1..6),
        vec(any::<usize>(), 0..4),
        any::<bool>(),
    )
        .prop_map(|(requests, cuts, half_close)| Pipeline {
            requests,
            cuts,
            half_close,
        });
    fuzz("http_framed", CASES, vec![], strategy, |pipeline| {
        check_framed(&server, &pipeline)
    });
    server.stop().unwrap();
}
