//! The order stream of clients/README.md: order `k` is a pure function of `(seed, k)`,
//! identical in every client, and its compact JSON body written into a reused buffer.
use std::time::SystemTime;

use bytes::BytesMut;
use time::OffsetDateTime;

/// splitmix64's increment.
pub const GOLDEN: u64 = 0x9E37_79B9_7F4A_7C15;

const SYMBOLS: [u16; 8] = [2330, 2317, 2454, 2308, 2412, 2881, 2882, 1301];

/// splitmix64's output function.
pub fn mix(z: u64) -> u64 {
    let z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    let z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// splitmix64's output number `k` from state `seed`.
pub fn stream_x(seed: u64, k: u64) -> u64 {
    mix(seed.wrapping_add(k.wrapping_add(1).wrapping_mul(GOLDEN)))
}

/// The variable fields of one order; the rest of the body is constant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Order {
    pub symbol: u16,
    /// "buy" or "sell".
    pub buy_sell: &'static str,
    /// 9950 ..= 10050 in steps of 5.
    pub price_cents: u32,
    pub quantity: u32,
    pub price_type: &'static str,
    pub time_in_force: &'static str,
}

impl Order {
    /// Order `k` of the stream of `seed`.
    pub fn nth(seed: u64, k: u64) -> Order {
        Order::from_x(stream_x(seed, k))
    }

    /// Carves the fields out of one splitmix64 output.
    pub fn from_x(x: u64) -> Order {
        let r = (x >> 32) % 100;
        let (price_type, time_in_force) = match r {
            0..=4 => ("market", "ioc"),
            5..=74 => ("limit", "rod"),
            75..=94 => ("limit", "ioc"),
            _ => ("limit", "fok"),
        };
        Order {
            symbol: SYMBOLS[(x % 8) as usize],
            buy_sell: if (x >> 8) & 1 == 0 { "buy" } else { "sell" },
            price_cents: (10_000 + 5 * (((x >> 16) % 21) as i64 - 10)) as u32,
            quantity: (((x >> 24) % 10 + 1) * 100) as u32,
            price_type,
            time_in_force,
        }
    }
}

/// Appends the compact JSON body of `order` sent at wall-clock time `now`, keys in the
/// contract's order. No formatting machinery: this runs once per request.
pub fn write_body(buf: &mut BytesMut, order: &Order, now: SystemTime) {
    let mut ints = itoa::Buffer::new();
    buf.extend_from_slice(b"{\"buy_sell\":\"");
    buf.extend_from_slice(order.buy_sell.as_bytes());
    buf.extend_from_slice(b"\",\"symbol\":");
    buf.extend_from_slice(ints.format(order.symbol).as_bytes());
    buf.extend_from_slice(b",\"price\":");
    write_price(buf, order.price_cents);
    buf.extend_from_slice(b",\"quantity\":");
    buf.extend_from_slice(ints.format(order.quantity).as_bytes());
    buf.extend_from_slice(b",\"market_type\":\"common\",\"price_type\":\"");
    buf.extend_from_slice(order.price_type.as_bytes());
    buf.extend_from_slice(b"\",\"time_in_force\":\"");
    buf.extend_from_slice(order.time_in_force.as_bytes());
    buf.extend_from_slice(
        b"\",\"order_type\":\"stock\",\"user_def\":\"hftbench\",\"client_timestamp\":\"",
    );
    write_timestamp(buf, now);
    buf.extend_from_slice(b"\"}");
}

/// Cents as a decimal with exactly two places: 9950 → `99.50`.
pub fn write_price(buf: &mut BytesMut, cents: u32) {
    let mut ints = itoa::Buffer::new();
    buf.extend_from_slice(ints.format(cents / 100).as_bytes());
    buf.extend_from_slice(b".");
    write_padded(buf, cents % 100, 2);
}

/// UTC `YYYY-MM-DDTHH:MM:SS.ffffffZ` (microseconds), the contract's timestamp format.
pub fn write_timestamp(buf: &mut BytesMut, now: SystemTime) {
    let t = OffsetDateTime::from(now);
    let (year, month, day) = t.to_calendar_date();
    let (hour, minute, second, micro) = t.to_hms_micro();
    write_padded(buf, year.max(0) as u32, 4);
    buf.extend_from_slice(b"-");
    write_padded(buf, month as u32, 2);
    buf.extend_from_slice(b"-");
    write_padded(buf, day.into(), 2);
    buf.extend_from_slice(b"T");
    write_padded(buf, hour.into(), 2);
    buf.extend_from_slice(b":");
    write_padded(buf, minute.into(), 2);
    buf.extend_from_slice(b":");
    write_padded(buf, second.into(), 2);
    buf.extend_from_slice(b".");
    write_padded(buf, micro, 6);
    buf.extend_from_slice(b"Z");
}

/// `value` in decimal, left-padded with zeros to `width` digits.
fn write_padded(buf: &mut BytesMut, mut value: u32, width: usize) {
    let mut digits = [b'0'; 10];
    for slot in digits[..width].iter_mut().rev() {
        *slot = b'0' + (value % 10) as u8;
        value /= 10;
    }
    buf.extend_from_slice(&digits[..width]);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, UNIX_EPOCH};

    /// Every vector of bench-config/testdata/order-stream.json.
    #[test]
    fn matches_every_shared_vector() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../bench-config/testdata/order-stream.json"
        );
        let text = std::fs::read_to_string(path).expect("order-stream.json is in the repository");
        let doc: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
        let mut checked = 0;
        for case in doc["cases"].as_array().expect("cases") {
            let seed: u64 = case["seed"]
                .as_str()
                .expect("seed is a string")
                .parse()
                .expect("u64 seed");
            for v in case["orders"].as_array().expect("orders") {
                let k = v["k"].as_u64().expect("k");
                let x = stream_x(seed, k);
                assert_eq!(
                    format!("{x:016x}"),
                    v["x"].as_str().unwrap(),
                    "x of seed {seed} k {k}"
                );
                let o = Order::from_x(x);
                let mut price = BytesMut::new();
                write_price(&mut price, o.price_cents);
                assert_eq!(
                    o.buy_sell,
                    v["buy_sell"].as_str().unwrap(),
                    "seed {seed} k {k}"
                );
                assert_eq!(
                    u64::from(o.symbol),
                    v["symbol"].as_u64().unwrap(),
                    "seed {seed} k {k}"
                );
                assert_eq!(
                    &price[..],
                    v["price"].as_str().unwrap().as_bytes(),
                    "seed {seed} k {k}"
                );
                assert_eq!(
                    u64::from(o.quantity),
                    v["quantity"].as_u64().unwrap(),
                    "seed {seed} k {k}"
                );
                assert_eq!(
                    o.price_type,
                    v["price_type"].as_str().unwrap(),
                    "seed {seed} k {k}"
                );
                assert_eq!(
                    o.time_in_force,
                    v["time_in_force"].as_str().unwrap(),
                    "seed {seed} k {k}"
                );
                checked += 1;
            }
        }
        assert!(checked >= 40, "only {checked} vectors checked");
    }

    #[test]
    fn body_is_the_contract_example_byte_for_byte() {
        // 2026-11-22T10:00:00.123456Z; seed 0, k 0 is the README's example order.
        let at = UNIX_EPOCH + Duration::from_micros(1_795_341_600_123_456);
        let mut buf = BytesMut::new();
        write_body(&mut buf, &Order::nth(0, 0), at);
        let expected = r#"{"buy_sell":"sell","symbol":1301,"price":100.05,"quantity":200,"market_type":"common","price_type":"limit","time_in_force":"rod","order_type":"stock","user_def":"hftbench","client_timestamp":"2026-11-22T10:00:00.123456Z"}"#;
        assert_eq!(std::str::from_utf8(&buf).unwrap(), expected);
    }

    #[test]
    fn prices_have_two_decimals() {
        for (cents, text) in [
            (9950, "99.50"),
            (10000, "100.00"),
            (10005, "100.05"),
            (10050, "100.50"),
        ] {
            let mut buf = BytesMut::new();
            write_price(&mut buf, cents);
            assert_eq!(&buf[..], text.as_bytes());
        }
    }

    #[test]
    fn timestamps_pad_every_field() {
        let at = UNIX_EPOCH + Duration::from_micros(946_684_800_000_007); // 2000-01-01
        let mut buf = BytesMut::new();
        write_timestamp(&mut buf, at);
        assert_eq!(&buf[..], b"2000-01-01T00:00:00.000007Z");
    }
}
