//! The `POST /order` reply: written by hand into a pre-sized buffer.

use std::fmt;

use chrono::{DateTime, Datelike, FixedOffset, Timelike, Utc};
use serde::ser::Serializer;
use serde::Serialize;

use crate::engine::Execution;
use crate::order::{Order, WireEnum};

/// Typical reply size with a few fills; one allocation covers it.
const REPLY_CAPACITY: usize = 512;

/// Writes one JSON number with serde_json's own formatting (itoa / shortest float), so
/// the hand-built reply prints numbers exactly as a serde-derived one would.
fn number(out: &mut Vec<u8>, value: impl Serialize) {
    // Writing to a Vec cannot fail and a number is plain data.
    let _ = value.serialize(&mut serde_json::Serializer::new(out));
}

/// Writes a JSON string; text that needs no escaping is copied as is.
fn string(out: &mut Vec<u8>, text: &str) {
    if text.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\') {
        out.push(b'"');
        out.extend_from_slice(text.as_bytes());
        out.push(b'"');
    } else {
        let _ = serde_json::to_writer(out, text);
    }
}

/// The reply document, written field by field in the documented order (server/README.md
/// documents each field for clients): `order_id`, `symbol`, `buy_sell`, `status`,
/// `client_timestamp`, `server_timestamp`, `latency_ms`, `filled_quantity`,
/// `remaining_quantity`, `cancelled_quantity`, `fills` (`price` in currency units =
/// ticks / 100, `quantity`, `counter_order_id`), and `reason` only when a cap refused the
/// order or its remainder. A hand-written writer: serde's derived serializer escapes every key and
/// known-plain value, which cost more than the matching itself.
fn write_reply(out: &mut Vec<u8>, order: &Order<'_>, execution: &Execution, now: DateTime<Utc>) {
    let outcome = &execution.outcome;
    out.extend_from_slice(b"{\"order_id\":");
    number(out, execution.order_id);
    out.extend_from_slice(b",\"symbol\":");
    number(out, order.symbol);
    out.extend_from_slice(b",\"buy_sell\":\"");
    out.extend_from_slice(order.side.wire_name().as_bytes());
    out.extend_from_slice(b"\",\"status\":\"");
    out.extend_from_slice(outcome.status.as_str().as_bytes());
    out.extend_from_slice(b"\",\"client_timestamp\":");
    string(out, &order.client_timestamp);
    out.extend_from_slice(b",\"server_timestamp\":");
    match UtcMicros(now).digits() {
        Some(digits) => {
            out.push(b'"');
            out.extend_from_slice(&digits);
            out.push(b'"');
        }
        None => string(out, &UtcMicros(now).to_string()),
    }
    out.extend_from_slice(b",\"latency_ms\":");
    number(out, latency_ms(now, order.client_time));
    out.extend_from_slice(b",\"filled_quantity\":");
    number(out, outcome.filled);
    out.extend_from_slice(b",\"remaining_quantity\":");
    number(out, outcome.resting);
    out.extend_from_slice(b",\"cancelled_quantity\":");
    number(out, order.quantity - outcome.filled - outcome.resting);
    out.extend_from_slice(b",\"fills\":[");
    for (k, fill) in outcome.fills.iter().enumerate() {
        if k > 0 {
            out.push(b',');
        }
        out.extend_from_slice(b"{\"price\":");
        number(out, fill.price as f64 / 100.0);
        out.extend_from_slice(b",\"quantity\":");
        number(out, fill.quantity);
        out.extend_from_slice(b",\"counter_order_id\":");
        number(out, fill.counter_order_id);
        out.push(b'}');
    }
    out.push(b']');
    if let Some(reject) = execution.reject {
        out.extend_from_slice(b",\"reason\":");
        string(out, &reject.describe(order.symbol));
    }
    out.push(b'}');
}

/// A UTC time printed as `YYYY-MM-DDTHH:MM:SS.ffffffZ`, the clients' format.
#[derive(Clone, Copy, Debug)]
pub struct UtcMicros(pub DateTime<Utc>);

impl UtcMicros {
    /// The text as fixed bytes, digits written by hand (core::fmt's padding machinery
    /// costs more than the rest of the reply); `None` outside years 0 ..= 9999.
    fn digits(&self) -> Option<[u8; 27]> {
        let t = &self.0;
        let year = u32::try_from(t.year()).ok().filter(|y| *y <= 9_999)?;
        // A leap second shows as nanosecond ≥ 1e9; clamp it into the second.
        let micros = (t.nanosecond() / 1_000).min(999_999);
        let mut buf = *b"0000-00-00T00:00:00.000000Z";
        put_digits(&mut buf[0..4], year);
        put_digits(&mut buf[5..7], t.month());
        put_digits(&mut buf[8..10], t.day());
        put_digits(&mut buf[11..13], t.hour());
        put_digits(&mut buf[14..16], t.minute());
        put_digits(&mut buf[17..19], t.second());
        put_digits(&mut buf[20..26], micros);
        Some(buf)
    }
}

impl fmt::Display for UtcMicros {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self.digits() {
            Some(buf) => f.write_str(std::str::from_utf8(&buf).map_err(|_| fmt::Error)?),
            None => write!(f, "{}", self.0.format("%Y-%m-%dT%H:%M:%S%.6fZ")),
        }
    }
}

impl Serialize for UtcMicros {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.digits() {
            Some(buf) => match std::str::from_utf8(&buf) {
                Ok(text) => serializer.serialize_str(text),
                Err(_) => serializer.collect_str(self),
            },
            None => serializer.collect_str(self),
        }
    }
}

/// Writes `value` as zero-padded decimal digits filling `out` (higher digits dropped).
fn put_digits(out: &mut [u8], mut value: u32) {
    for digit in out.iter_mut().rev() {
        *digit = b'0' + (value % 10) as u8;
        value /= 10;
    }
}

/// `server − client` in milliseconds; negative when the clocks disagree.
pub fn latency_ms(server: DateTime<Utc>, client: DateTime<FixedOffset>) -> f64 {
    let seconds = server.timestamp() - client.timestamp();
    let nanos =
        i64::from(server.timestamp_subsec_nanos()) - i64::from(client.timestamp_subsec_nanos());
    seconds as f64 * 1e3 + nanos as f64 / 1e6
}

/// Builds the reply JSON for an executed order.
pub fn order_reply(order: &Order<'_>, execution: &Execution, now: DateTime<Utc>) -> Vec<u8> {
    let mut body = Vec::with_capacity(REPLY_CAPACITY);
    write_reply(&mut body, order, execution, now);
    body
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn server_timestamp_has_microseconds_and_z() {
        let t = Utc.with_ymd_and_hms(2026, 1, 2, 3, 4, 5).unwrap()
            + chrono::Duration::nanoseconds(6_789_123);
        assert_eq!(UtcMicros(t).to_string(), "2026-01-02T03:04:05.006789Z");
        let end = Utc.with_ymd_and_hms(999, 12, 31, 23, 59, 59).unwrap()
            + chrono::Duration::nanoseconds(999_999_999);
        assert_eq!(UtcMicros(end).to_string(), "0999-12-31T23:59:59.999999Z");
        let far = Utc.with_ymd_and_hms(12_345, 6, 7, 8, 9, 10).unwrap();
        assert_eq!(UtcMicros(far).to_string(), "+12345-06-07T08:09:10.000000Z");
        let json = serde_json::to_string(&[UtcMicros(t), UtcMicros(far)]).unwrap();
        assert_eq!(
            json,
            r#"["2026-01-02T03:04:05.006789Z","+12345-06-07T08:09:10.000000Z"]"#
        );
    }

    /// The serde-derived reply this module used to build, field for field: the
    /// hand-written writer must produce the same bytes.
    #[derive(Serialize)]
    struct DerivedReply<'a> {
        order_id: u64,
        symbol: u32,
        buy_sell: &'static str,
        status: &'static str,
        client_timestamp: &'a str,
        server_timestamp: UtcMicros,
        latency_ms: f64,
        filled_quantity: u64,
        remaining_quantity: u64,
        cancelled_quantity: u64,
        fills: Vec<DerivedFill>,
        #[serde(skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    }

    #[derive(Serialize)]
    struct DerivedFill {
        price: f64,
        quantity: u64,
        counter_order_id: u64,
    }

    fn derived(order: &Order<'_>, execution: &Execution, now: DateTime<Utc>) -> Vec<u8> {
        let outcome = &execution.outcome;
        serde_json::to_vec(&DerivedReply {
            order_id: execution.order_id,
            symbol: order.symbol,
            buy_sell: order.side.wire_name(),
            status: outcome.status.as_str(),
            client_timestamp: &order.client_timestamp,
            server_timestamp: UtcMicros(now),
            latency_ms: latency_ms(now, order.client_time),
            filled_quantity: outcome.filled,
            remaining_quantity: outcome.resting,
            cancelled_quantity: order.quantity - outcome.filled - outcome.resting,
            fills: outcome
                .fills
                .iter()
                .map(|f| DerivedFill {
                    price: f.price as f64 / 100.0,
                    quantity: f.quantity,
                    counter_order_id: f.counter_order_id,
                })
                .collect(),
            reason: execution.reject.map(|r| r.describe(order.symbol)),
        })
        .unwrap()
    }

    #[test]
    fn hand_written_reply_matches_the_serde_derived_one() {
        use crate::book::{Fill, Outcome, Status};
        use crate::engine::RejectReason;
        let stamps = [
            "2026-11-22T10:00:00.123456Z",
            "2026-11-22T18:00:00.9+08:00",
            "2026-11-22 10:00:00Z",
        ];
        let bodies: Vec<String> = stamps
            .iter()
            .map(|stamp| {
                format!(
                    r#"{{"buy_sell":"sell","symbol":1301,"price":100.05,"quantity":300,"market_type":"common","price_type":"limit","time_in_force":"rod","order_type":"stock","user_def":"hftbench","client_timestamp":"{stamp}"}}"#
                )
            })
            .collect();
        let fills = vec![
            Fill {
                price: 10_010,
                quantity: 100,
                counter_order_id: 17,
            },
            Fill {
                price: 10_000,
                quantity: 7,
                counter_order_id: u64::MAX,
            },
            Fill {
                price: 1,
                quantity: 1,
                counter_order_id: 1,
            },
        ];
        let executions = [
            Execution {
                order_id: 42,
                outcome: Outcome {
                    status: Status::PartiallyFilled,
                    filled: 107,
                    resting: 193,
                    fills: fills.clone(),
                    book_full: false,
                    fills_capped: false,
                },
                reject: None,
            },
            Execution {
                order_id: 1,
                outcome: Outcome {
                    status: Status::New,
                    filled: 0,
                    resting: 300,
                    fills: Vec::new(),
                    book_full: false,
                    fills_capped: false,
                },
                reject: None,
            },
            Execution {
                order_id: u64::MAX,
                outcome: Outcome {
                    status: Status::Rejected,
                    filled: 0,
                    resting: 0,
                    fills: Vec::new(),
                    book_full: true,
                    fills_capped: false,
                },
                reject: Some(RejectReason::BookFull { cap: 100_000 }),
            },
        ];
        let times = [
            Utc.with_ymd_and_hms(2026, 11, 22, 10, 0, 0).unwrap()
                + chrono::Duration::nanoseconds(123_789_001),
            Utc.with_ymd_and_hms(2026, 11, 22, 9, 59, 59).unwrap(),
            Utc.with_ymd_and_hms(12_345, 6, 7, 8, 9, 10).unwrap(),
        ];
        for body in &bodies {
            let order = crate::order::parse(body.as_bytes()).unwrap();
            for execution in &executions {
                for now in times {
                    let mine = order_reply(&order, execution, now);
                    assert_eq!(
                        String::from_utf8(mine).unwrap(),
                        String::from_utf8(derived(&order, execution, now)).unwrap()
                    );
                }
            }
        }
    }

    #[test]
    fn strings_that_need_escapes_are_escaped() {
        let mut out = Vec::new();
        string(&mut out, "a\"b\\c\u{1}d\u{e9}");
        assert_eq!(out, serde_json::to_vec("a\"b\\c\u{1}d\u{e9}").unwrap());
    }

    #[test]
    fn latency_is_server_minus_client_across_offsets() {
        let server = Utc.with_ymd_and_hms(2026, 1, 1, 10, 0, 1).unwrap();
        let client = DateTime::parse_from_rfc3339("2026-01-01T18:00:00.9995+08:00").unwrap();
        assert!((latency_ms(server, client) - 0.5).abs() < 1e-9);
        let ahead = DateTime::parse_from_rfc3339("2026-01-01T10:00:01.002Z").unwrap();
        assert!((latency_ms(server, ahead) + 2.0).abs() < 1e-9);
    }
}
