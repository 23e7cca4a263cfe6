//! The `POST /order` reply: serialized straight into a pre-sized buffer.

use std::fmt;

use chrono::{DateTime, Datelike, FixedOffset, Timelike, Utc};
use serde::ser::{SerializeSeq, Serializer};
use serde::Serialize;

use crate::book::Fill;
use crate::engine::Execution;
use crate::order::{side_name, Order};

/// Typical reply size with a few fills; one allocation covers it.
const REPLY_CAPACITY: usize = 512;

/// The reply document; server/README.md documents each field for clients.
#[derive(Serialize)]
struct Reply<'a> {
    /// Lets clients and logs refer to this order and match `counter_order_id`s.
    order_id: u64,
    /// Echoed (seed 000 reply field).
    symbol: u32,
    /// Echoed (seed 000 reply field).
    buy_sell: &'static str,
    /// What became of the order (seed 000 reply field).
    status: &'static str,
    /// Echoed verbatim, so a client can match the reply to its request.
    client_timestamp: &'a str,
    /// When the reply was built (seed 000 reply field).
    server_timestamp: UtcMicros,
    /// `server_timestamp − client_timestamp` (seed 000 reply field).
    latency_ms: f64,
    /// Shares executed now.
    filled_quantity: u64,
    /// Shares left resting on the book.
    remaining_quantity: u64,
    /// Shares neither filled nor resting, so the three always add up to `quantity`.
    cancelled_quantity: u64,
    /// The executions, for clients that check matching.
    fills: Fills<'a>,
    /// Only when a cap refused the order: which cap and flag.
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
}

/// Fills with prices converted from ticks to currency units.
struct Fills<'a>(&'a [Fill]);

/// One fill as clients see it.
#[derive(Serialize)]
struct FillReply {
    /// Trade price in currency units (ticks / 100), the resting order's price.
    price: f64,
    /// Shares in this fill.
    quantity: u64,
    /// The resting order traded against.
    counter_order_id: u64,
}

impl Serialize for Fills<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.0.len()))?;
        for fill in self.0 {
            seq.serialize_element(&FillReply {
                price: fill.price as f64 / 100.0,
                quantity: fill.quantity,
                counter_order_id: fill.counter_order_id,
            })?;
        }
        seq.end()
    }
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
    let outcome = &execution.outcome;
    let reply = Reply {
        order_id: execution.order_id,
        symbol: order.symbol,
        buy_sell: side_name(order.side),
        status: outcome.status.as_str(),
        client_timestamp: &order.client_timestamp,
        server_timestamp: UtcMicros(now),
        latency_ms: latency_ms(now, order.client_time),
        filled_quantity: outcome.filled,
        remaining_quantity: outcome.resting,
        cancelled_quantity: order.quantity - outcome.filled - outcome.resting,
        fills: Fills(&outcome.fills),
        reason: execution.reject.map(|r| r.describe(order.symbol)),
    };
    let mut body = Vec::with_capacity(REPLY_CAPACITY);
    // Writing to a Vec cannot fail and every field is plain data.
    let _ = serde_json::to_writer(&mut body, &reply);
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

    #[test]
    fn latency_is_server_minus_client_across_offsets() {
        let server = Utc.with_ymd_and_hms(2026, 1, 1, 10, 0, 1).unwrap();
        let client = DateTime::parse_from_rfc3339("2026-01-01T18:00:00.9995+08:00").unwrap();
        assert!((latency_ms(server, client) - 0.5).abs() < 1e-9);
        let ahead = DateTime::parse_from_rfc3339("2026-01-01T10:00:01.002Z").unwrap();
        assert!((latency_ms(server, ahead) + 2.0).abs() < 1e-9);
    }
}
