//! A second reading of the order schema of server/README.md, for the fuzz tests, written
//! without the server's reader: serde_json's generic types (`Value`, `RawValue`) for the
//! JSON, exact decimal arithmetic on the number's text for `price`, chrono for
//! `client_timestamp` (the same RFC 3339 parser the server uses: the fuzzing is about
//! reading the body, not about dates).

use std::collections::BTreeMap;
use std::fmt;

use serde::de::{IgnoredAny, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;
use serde_json::Value;

/// What the schema says about a body.
#[derive(Debug, PartialEq)]
pub(crate) enum Verdict {
    /// Valid: the order it must read as.
    Accept(Expected),
    /// Refused with this status, naming one of these fields (each of them is wrong; the
    /// server names the first it meets). No fields: the error must name none.
    Reject(u16, Vec<&'static str>),
    /// A 422 that may name any field or none: an object key that cannot be decoded (a lone
    /// surrogate `\ud800`) ends serde's reading wherever it stands.
    RejectAnyField,
}

/// The values of a valid order, as plain data.
#[derive(Debug, PartialEq)]
pub(crate) struct Expected {
    pub(crate) buy_sell: String,
    pub(crate) symbol: u32,
    pub(crate) price: Price,
    pub(crate) quantity: u64,
    pub(crate) market_type: String,
    pub(crate) price_type: String,
    pub(crate) time_in_force: String,
    pub(crate) order_type: String,
    pub(crate) client_timestamp: String,
}

/// `price` read as exact decimal text.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Price {
    /// A whole number of cents in range: must be accepted as these ticks.
    Ticks(u64),
    /// Not a whole number of cents (or just over the maximum), but closer to `ticks` than
    /// a double can tell apart within the server's documented tolerance: the server may
    /// accept it (as these ticks) or refuse it.
    Either(u64),
    /// Must be refused.
    Invalid,
}

pub(crate) const FIELDS: [&str; 10] = [
    "buy_sell",
    "symbol",
    "price",
    "quantity",
    "market_type",
    "price_type",
    "time_in_force",
    "order_type",
    "user_def",
    "client_timestamp",
];

/// The top-level members in body order, values as raw text.
struct Members<'a>(Vec<(String, &'a RawValue)>);

impl<'de> Deserialize<'de> for Members<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Members<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Members<'de>, A::Error> {
                let mut members = Vec::new();
                while let Some(key) = map.next_key::<String>()? {
                    members.push((key, map.next_value::<&RawValue>()?));
                }
                Ok(Members(members))
            }
        }
        deserializer.deserialize_map(V)
    }
}

pub(crate) fn judge<'a>(body: &'a [u8]) -> Verdict {
    let Ok(text) = std::str::from_utf8(body) else {
        return Verdict::Reject(400, vec![]);
    };
    // JSON's grammar, numbers of any size included.
    if serde_json::from_str::<IgnoredAny>(text).is_err() {
        return Verdict::Reject(400, vec![]);
    }
    let members = match serde_json::from_str::<Members>(text) {
        Ok(Members(members)) => members,
        Err(_) if text.trim_start().starts_with('{') => return Verdict::RejectAnyField,
        Err(_) => return Verdict::Reject(422, vec![]),
    };
    let mut values: BTreeMap<&str, Vec<&'a RawValue>> = BTreeMap::new();
    for (key, value) in members {
        if let Some(field) = FIELDS.into_iter().find(|f| *f == key) {
            values.entry(field).or_default().push(value);
        }
    }
    let mut faults = Vec::new();
    let mut one = |field: &'static str| -> Option<&'a RawValue> {
        match values.get(field).map(Vec::as_slice) {
            Some([value]) => Some(*value),
            _ => {
                faults.push(field);
                None
            }
        }
    };
    let buy_sell = one("buy_sell").and_then(|v| choice(v, &["buy", "sell"]));
    let symbol = one("symbol").and_then(|v| {
        let n = serde_json::from_str::<Value>(v.get()).ok()?.as_u64()?;
        u32::try_from(n).ok().filter(|&n| n > 0)
    });
    let price = one("price").map_or(Price::Invalid, |v| price(v.get()));
    let quantity = one("quantity").and_then(|v| {
        let n = serde_json::from_str::<Value>(v.get()).ok()?.as_i64()?;
        u64::try_from(n)
            .ok()
            .filter(|n| (1..=1_000_000_000).contains(n))
    });
    let market_type = one("market_type").and_then(|v| choice(v, &["common", "odd", "fixed"]));
    let price_type = one("price_type").and_then(|v| choice(v, &["limit", "market"]));
    let time_in_force = one("time_in_force").and_then(|v| choice(v, &["rod", "ioc", "fok"]));
    let order_type = one("order_type").and_then(|v| choice(v, &["stock", "margin", "short"]));
    let user_def = one("user_def").and_then(|v| string(v).filter(|s| s.len() <= 32));
    let client_timestamp = one("client_timestamp")
        .and_then(|v| string(v).filter(|s| chrono::DateTime::parse_from_rfc3339(s).is_ok()));
    // `one` has recorded missing and repeated fields; now the values that are wrong.
    let checks = [
        ("buy_sell", buy_sell.is_some()),
        ("symbol", symbol.is_some()),
        ("price", price != Price::Invalid),
        ("quantity", quantity.is_some()),
        ("market_type", market_type.is_some()),
        ("price_type", price_type.is_some()),
        ("time_in_force", time_in_force.is_some()),
        ("order_type", order_type.is_some()),
        ("user_def", user_def.is_some()),
        ("client_timestamp", client_timestamp.is_some()),
    ];
    for (field, ok) in checks {
        if !ok && !faults.contains(&field) {
            faults.push(field);
        }
    }
    if !faults.is_empty() {
        return Verdict::Reject(422, faults);
    }
    match (
        buy_sell,
        symbol,
        quantity,
        market_type,
        price_type,
        time_in_force,
        order_type,
        client_timestamp,
    ) {
        (Some(b), Some(s), Some(q), Some(m), Some(p), Some(t), Some(o), Some(c)) => {
            Verdict::Accept(Expected {
                buy_sell: b,
                symbol: s,
                price,
                quantity: q,
                market_type: m,
                price_type: p,
                time_in_force: t,
                order_type: o,
                client_timestamp: c,
            })
        }
        _ => unreachable!("every None was recorded as a fault"),
    }
}

/// A JSON string value, decoded.
fn string(raw: &RawValue) -> Option<String> {
    match serde_json::from_str::<Value>(raw.get()).ok()? {
        Value::String(s) => Some(s),
        _ => None,
    }
}

/// A string value that is one of `choices`.
fn choice(raw: &RawValue, choices: &[&str]) -> Option<String> {
    string(raw).filter(|s| choices.contains(&s.as_str()))
}

/// Ticks in the most the server accepts, 1,000,000,000.00.
const MAX_TICKS: u64 = 100_000_000_000;

/// Judges a price from its JSON text, exactly: `digits × 10^exponent` in cents.
pub(crate) fn price(text: &str) -> Price {
    let Some((digits, exponent)) = decimal(text) else {
        return Price::Invalid;
    };
    // Significant digits only: leading zeros carry nothing, trailing ones go to the exponent.
    let digits = digits.trim_start_matches('0');
    let kept = digits.trim_end_matches('0');
    let exponent = exponent.saturating_add((digits.len() - kept.len()) as i64);
    if kept.is_empty() {
        return Price::Invalid; // zero
    }
    // Cents = kept × 10^exponent; split into whole cents and the fraction of a cent.
    let (whole, fraction) = if exponent >= 0 {
        if kept.len() as i64 + exponent > 12 {
            return Price::Invalid; // at least 10^12 cents, over the maximum
        }
        (
            format!("{kept}{}", "0".repeat(exponent as usize)),
            String::new(),
        )
    } else {
        let point = kept.len() as i64 + exponent; // digits before the decimal point
        if point > 12 {
            return Price::Invalid;
        }
        if point >= 0 {
            let (w, f) = kept.split_at(point as usize);
            (w.to_string(), f.to_string())
        } else if point < -40 {
            return Price::Invalid; // far below a cent: a double reads it as 0
        } else {
            (
                String::new(),
                format!("{}{kept}", "0".repeat(-point as usize)),
            )
        }
    };
    let whole: u64 = if whole.is_empty() {
        0
    } else {
        whole.parse().expect("at most 12 digits")
    };
    if fraction.is_empty() {
        return match whole {
            1..=MAX_TICKS => Price::Ticks(whole),
            _ => Price::Invalid,
        };
    }
    // The server reads the price as a double and accepts cents within
    // max(1e-6, ticks × 1e-13) of a whole number; twice that band is "either way".
    let below: f64 = format!("0.{fraction}").parse().expect("digits");
    let (nearest, distance) = if below <= 0.5 {
        (whole, below)
    } else {
        (whole + 1, 1.0 - below)
    };
    let tolerance = 1e-6_f64.max(nearest as f64 * 1e-13);
    if whole == MAX_TICKS && nearest == MAX_TICKS && distance < 1e-5 {
        // Just over 1,000,000,000: reads as exactly the maximum in a double.
        return Price::Either(MAX_TICKS);
    }
    if (1..=MAX_TICKS).contains(&nearest) && whole < MAX_TICKS && distance <= 2.0 * tolerance {
        Price::Either(nearest)
    } else {
        Price::Invalid
    }
}

/// A JSON number's text as its decimal digits and power of ten: `-?int(.frac)?(e±exp)?`.
/// `None` when it is not a positive number.
fn decimal(text: &str) -> Option<(String, i64)> {
    let text = text.trim();
    if text.starts_with('-') {
        return None;
    }
    let (mantissa, exponent) = match text.find(['e', 'E']) {
        Some(at) => {
            let exp = &text[at + 1..];
            let exp = exp.strip_prefix('+').unwrap_or(exp);
            // An exponent too long for i64 is beyond any price either way.
            let exp: i64 = exp
                .parse()
                .unwrap_or(if exp.starts_with('-') { -1_000 } else { 1_000 });
            (&text[..at], exp)
        }
        None => (text, 0),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if int.is_empty() || !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit()) {
        return None;
    }
    // cents = value × 100
    let exponent = exponent.saturating_sub(frac.len() as i64).saturating_add(2);
    Some((format!("{int}{frac}"), exponent))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prices_are_judged_on_their_decimal_text() {
        for (text, want) in [
            ("100.05", Price::Ticks(10_005)),
            ("100.050", Price::Ticks(10_005)),
            ("1E2", Price::Ticks(10_000)),
            ("0.01", Price::Ticks(1)),
            ("1000000000", Price::Ticks(MAX_TICKS)),
            ("1000000000.00000000001", Price::Either(MAX_TICKS)),
            ("1000000000.01", Price::Invalid),
            ("100.001", Price::Invalid),
            ("100.0500000001", Price::Either(10_005)),
            ("0.00999999999", Price::Either(1)),
            ("0.005", Price::Invalid),
            ("0", Price::Invalid),
            ("-1", Price::Invalid),
            ("1e999", Price::Invalid),
            ("1e-999", Price::Invalid),
            ("\"1\"", Price::Invalid),
        ] {
            assert_eq!(price(text), want, "{text}");
        }
    }

    #[test]
    fn the_verdicts_follow_the_readme() {
        let valid = r#"{"buy_sell":"sell","symbol":1301,"price":100.05,"quantity":200,"market_type":"common","price_type":"limit","time_in_force":"rod","order_type":"stock","user_def":"hftbench","client_timestamp":"2026-11-22T10:00:00.123456Z"}"#;
        assert!(matches!(judge(valid.as_bytes()), Verdict::Accept(_)));
        assert_eq!(judge(b"{"), Verdict::Reject(400, vec![]));
        assert_eq!(judge(b"[1]"), Verdict::Reject(422, vec![]));
        assert_eq!(judge(b"\xff"), Verdict::Reject(400, vec![]));
        let twice = valid.replace('{', r#"{"symbol":0,"#);
        assert_eq!(
            judge(twice.as_bytes()),
            Verdict::Reject(422, vec!["symbol"])
        );
        let two = valid.replace("200", "0").replace("\"sell\"", "1");
        assert_eq!(
            judge(two.as_bytes()),
            Verdict::Reject(422, vec!["buy_sell", "quantity"])
        );
        let key = valid.replace('{', r#"{"\ud800":1,"#);
        assert_eq!(judge(key.as_bytes()), Verdict::RejectAnyField);
    }
}
