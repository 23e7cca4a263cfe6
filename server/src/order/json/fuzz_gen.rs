//! Generators for the parser fuzz tests: valid orders as lists of JSON members, the
//! structured edits that break them (a field dropped, duplicated, renamed, given a value
//! of another type, a huge number, unicode), and byte-level edits for any body.

use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::select;

/// An order as JSON members: key text and value text, both raw JSON.
pub(super) type Members = Vec<(String, String)>;

/// A JSON string literal for `s`.
pub(super) fn json_str(s: &str) -> String {
    serde_json::to_string(s).expect("a string serializes")
}

/// `s` with every character as a `\uXXXX` escape (surrogate pairs above U+FFFF).
fn escaped_str(s: &str) -> String {
    let mut out = String::from("\"");
    for unit in s.encode_utf16() {
        out.push_str(&format!("\\u{unit:04x}"));
    }
    out.push('"');
    out
}

/// Whole cents as a decimal in one of the ways a client may write it.
fn price_text(ticks: u64, style: u8) -> String {
    let (int, cents) = (ticks / 100, ticks % 100);
    match style {
        0 if cents == 0 => int.to_string(),
        0 if cents % 10 == 0 => format!("{int}.{}", cents / 10),
        1 => format!("{int}.{cents:02}000"),
        2 => {
            let digits = ticks.to_string();
            let (first, rest) = digits.split_at(1);
            let exponent = digits.len() as i64 - 3;
            match rest.trim_end_matches('0') {
                "" => format!("{first}e{exponent}"),
                rest => format!("{first}.{rest}E{exponent:+}"),
            }
        }
        _ => format!("{int}.{cents:02}"),
    }
}

fn timestamp() -> impl Strategy<Value = String> {
    (
        (0u32..=9999, 1u32..=12, 1u32..=28),
        (0u32..=23, 0u32..=59, 0u32..=59),
        "[0-9]{0,12}",
        select(&["T", "t"][..]),
        prop_oneof![
            Just("Z".to_string()),
            Just("z".to_string()),
            (select(&["+", "-"][..]), 0u32..=23, 0u32..=59)
                .prop_map(|(sign, h, m)| format!("{sign}{h:02}:{m:02}")),
        ],
    )
        .prop_map(|((y, mo, d), (h, mi, s), frac, t, offset)| {
            let frac = if frac.is_empty() {
                frac
            } else {
                format!(".{frac}")
            };
            format!("{y:04}-{mo:02}-{d:02}{t}{h:02}:{mi:02}:{s:02}{frac}{offset}")
        })
}

/// A `user_def` of at most 32 bytes, ASCII or not, plain or escaped.
fn user_def() -> impl Strategy<Value = String> {
    prop_oneof![
        "[ -~]{0,32}".prop_map(|s| json_str(&s)),
        ".{0,8}"
            .prop_filter("at most 32 bytes", |s| s.len() <= 32)
            .prop_map(|s| json_str(&s)),
        "[a-zé😀]{0,6}"
            .prop_filter("at most 32 bytes", |s| s.len() <= 32)
            .prop_map(|s| escaped_str(&s)),
    ]
}

/// A valid order, every field once, keys in the documented order.
pub(super) fn valid_order() -> impl Strategy<Value = Members> {
    (
        select(&["buy", "sell"][..]),
        1u32..=u32::MAX,
        (1u64..=100_000_000_000, 0u8..4),
        1u64..=1_000_000_000,
        select(&["common", "odd", "fixed"][..]),
        select(&["limit", "market"][..]),
        select(&["rod", "ioc", "fok"][..]),
        select(&["stock", "margin", "short"][..]),
        user_def(),
        timestamp(),
    )
        .prop_map(
            |(side, symbol, (ticks, style), qty, mt, pt, tif, ot, ud, ts)| {
                [
                    ("buy_sell", json_str(side)),
                    ("symbol", symbol.to_string()),
                    ("price", price_text(ticks, style)),
                    ("quantity", qty.to_string()),
                    ("market_type", json_str(mt)),
                    ("price_type", json_str(pt)),
                    ("time_in_force", json_str(tif)),
                    ("order_type", json_str(ot)),
                    ("user_def", ud),
                    ("client_timestamp", json_str(&ts)),
                ]
                .into_iter()
                .map(|(key, value)| (json_str(key), value))
                .collect()
            },
        )
}

/// A JSON number, valid or not, in range or not.
fn number() -> impl Strategy<Value = String> {
    prop_oneof![
        select(
            &[
                "0",
                "-0",
                "1",
                "-1",
                "4294967295",
                "4294967296",
                "1000000000",
                "1000000001",
                "9223372036854775807",
                "9223372036854775808",
                "18446744073709551615",
                "18446744073709551616",
                "1e999",
                "-1e999",
                "1e-999",
                "5e-324",
                "1.7976931348623157e308",
                "100.05",
                "100.001",
                "0.01",
                "0.005",
                "1000000000.01",
                "1e2",
                "1E+2",
                "2.0",
                "01",
                "+1",
                ".5",
                "1.",
                "1e",
                "--1",
                "0x10",
                "NaN",
                "Infinity",
                "-Infinity",
            ][..]
        )
        .prop_map(str::to_owned),
        any::<u64>().prop_map(|n| n.to_string()),
        any::<i64>().prop_map(|n| n.to_string()),
        ("[0-9]{1,20}", "[0-9]{0,20}", prop::option::of(-400i32..400)).prop_map(|(i, f, e)| {
            let mut text = i;
            if !f.is_empty() {
                text = format!("{text}.{f}");
            }
            if let Some(e) = e {
                text = format!("{text}e{e}");
            }
            text
        }),
    ]
}

/// A JSON string, mostly near the values the fields take.
fn string() -> impl Strategy<Value = String> {
    let known = &[
        "buy",
        "sell",
        "common",
        "odd",
        "fixed",
        "limit",
        "market",
        "rod",
        "ioc",
        "fok",
        "stock",
        "margin",
        "short",
        "BUY",
        "Sell",
        "gtc",
        "",
        " buy",
        "buy ",
        "2026-11-22T10:00:00Z",
        "2026-11-22T10:00:00",
        "2026-11-22 10:00:00Z",
        "2026-02-30T10:00:00Z",
        "2026-11-22T24:00:00Z",
        "2026-11-22T10:00:60Z",
        "2026-11-22T10:00:00+24:00",
        "yesterday",
        "1301",
        "100.05",
    ][..];
    prop_oneof![
        4 => select(known).prop_map(json_str),
        1 => select(known).prop_map(escaped_str),
        2 => ".{0,40}".prop_map(|s| json_str(&s)),
        1 => "[a-z]{30,36}".prop_map(|s| json_str(&s)),
        1 => "[é]{15,18}".prop_map(|s| json_str(&s)),
        1 => select(
            &[
                r#""\ud800""#, r#""\udc00x""#, r#""\ud83d\ude00""#, r#""\u0000""#,
                r#""a\qb""#, r#""\u12""#, "\"tab\there\"", "\"nl\nhere\"", "\"unterminated",
                "'buy'", "\"\u{7f}\u{80}\"",
            ][..]
        )
        .prop_map(str::to_owned),
    ]
}

/// Any JSON value text (and some that are not JSON).
pub(super) fn value() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => number(),
        4 => string(),
        1 => select(&["null", "true", "false", "[]", "{}", "[1,{\"a\":null}]", "{\"price\":1}"][..])
            .prop_map(str::to_owned),
        1 => (1usize..200).prop_map(|depth| format!("{}1{}", "[".repeat(depth), "]".repeat(depth))),
        1 => select(&["tru", "nul", "[1,]", "{\"a\"}", "{,}", "[", "}"][..]).prop_map(str::to_owned),
    ]
}

/// Key text: a known key (as written, escaped, or in another case) or another key.
fn key() -> impl Strategy<Value = String> {
    let names = &super::reference::FIELDS[..];
    prop_oneof![
        3 => select(names).prop_map(json_str),
        1 => select(names).prop_map(escaped_str),
        1 => select(names).prop_map(|n| json_str(&n.to_uppercase())),
        1 => select(&["price_", "extra", "", "symbol ", "note"][..]).prop_map(json_str),
        1 => ".{0,6}".prop_map(|s| json_str(&s)),
        1 => select(&[r#""\ud800""#, r#""a\ud800b""#, "1", "null", "\"x"][..]).prop_map(str::to_owned),
    ]
}

/// One structured edit of an order's members.
#[derive(Clone, Debug)]
pub(super) enum Edit {
    Drop(usize),
    Duplicate(usize),
    DuplicateWith(usize, String),
    Value(usize, String),
    Key(usize, String),
    Extra(usize, String, String),
    Swap(usize, usize),
}

pub(super) fn edit() -> impl Strategy<Value = Edit> {
    let i = || any::<usize>();
    prop_oneof![
        2 => i().prop_map(Edit::Drop),
        1 => i().prop_map(Edit::Duplicate),
        1 => (i(), value()).prop_map(|(i, v)| Edit::DuplicateWith(i, v)),
        5 => (i(), value()).prop_map(|(i, v)| Edit::Value(i, v)),
        2 => (i(), key()).prop_map(|(i, k)| Edit::Key(i, k)),
        2 => (i(), key(), value()).prop_map(|(i, k, v)| Edit::Extra(i, k, v)),
        1 => (i(), i()).prop_map(|(a, b)| Edit::Swap(a, b)),
    ]
}

pub(super) fn apply(members: &mut Members, edit: &Edit) {
    let n = members.len();
    let at = |i: usize| i % n.max(1);
    match edit {
        Edit::Extra(i, k, v) => members.insert(i % (n + 1), (k.clone(), v.clone())),
        _ if n == 0 => {}
        Edit::Drop(i) => {
            members.remove(at(*i));
        }
        Edit::Duplicate(i) => members.push(members[at(*i)].clone()),
        Edit::DuplicateWith(i, v) => members.push((members[at(*i)].0.clone(), v.clone())),
        Edit::Value(i, v) => members[at(*i)].1 = v.clone(),
        Edit::Key(i, k) => members[at(*i)].0 = k.clone(),
        Edit::Swap(a, b) => members.swap(at(*a), at(*b)),
    }
}

/// The members as an object, with one of the spacings JSON allows.
pub(super) fn render(members: &Members, space: &str) -> Vec<u8> {
    let inner: Vec<String> = members
        .iter()
        .map(|(k, v)| format!("{space}{k}{space}:{space}{v}{space}"))
        .collect();
    format!("{{{}}}", inner.join(",")).into_bytes()
}

pub(super) fn space() -> impl Strategy<Value = &'static str> {
    select(&["", "", "", " ", "\n", "\t", "\r\n  ", "\u{a0}"][..])
}

/// A byte-level edit of a whole body.
#[derive(Clone, Debug)]
pub(super) enum ByteEdit {
    Truncate(usize),
    Set(usize, u8),
    Insert(usize, Vec<u8>),
    Delete(usize, usize),
    Splice(usize, usize, usize),
}

pub(super) fn byte_edit() -> impl Strategy<Value = ByteEdit> {
    let i = || any::<usize>();
    prop_oneof![
        1 => i().prop_map(ByteEdit::Truncate),
        2 => (i(), any::<u8>()).prop_map(|(i, b)| ByteEdit::Set(i, b)),
        2 => (i(), prop_oneof![
            vec(any::<u8>(), 1..4),
            select(&["{", "}", "\"", ",", ":", "\\", "\\u", "1e999", "\u{0}", "\u{2028}", "\u{feff}"][..])
                .prop_map(|s: &str| s.as_bytes().to_vec()),
        ]).prop_map(|(i, b)| ByteEdit::Insert(i, b)),
        1 => (i(), 1usize..16).prop_map(|(i, n)| ByteEdit::Delete(i, n)),
        1 => (i(), 1usize..32, i()).prop_map(|(from, n, to)| ByteEdit::Splice(from, n, to)),
    ]
}

pub(super) fn apply_bytes(body: &mut Vec<u8>, edit: &ByteEdit) {
    let n = body.len();
    let at = |i: usize| i % (n + 1);
    match edit {
        ByteEdit::Truncate(i) => body.truncate(at(*i)),
        ByteEdit::Insert(i, bytes) => {
            let i = at(*i);
            body.splice(i..i, bytes.iter().copied());
        }
        _ if n == 0 => {}
        ByteEdit::Set(i, b) => body[i % n] = *b,
        ByteEdit::Delete(i, len) => {
            let i = i % n;
            body.drain(i..(i + len).min(n));
        }
        ByteEdit::Splice(from, len, to) => {
            let from = from % n;
            let piece = body[from..(from + len).min(n)].to_vec();
            let to = at(*to);
            body.splice(to..to, piece);
        }
    }
}
