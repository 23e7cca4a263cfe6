//! The fast path for the common body: one object of the known keys, each once, with
//! plain values (strings of printable ASCII without escapes, unsigned numbers of at most
//! 15 digits without exponent). It returns `None` on anything else (errors, escapes,
//! unknown or duplicate keys, other value shapes), and the serde path then reads the body
//! and words the error. On what it accepts it yields exactly the serde path's `Raw`: a
//! decimal of at most 15 significant digits is exact in f64 and so is its power of ten,
//! so serde_json's `significand / 10^k` and std's correctly rounded parse agree.
use std::borrow::Cow;

use crate::order::field::{Field, Raw, Text, WireEnum};

/// A cursor over the body, which was checked to be UTF-8 once.
struct Cursor<'a> {
    /// The body.
    text: &'a str,
    /// Index of the next unread byte.
    at: usize,
}

impl<'a> Cursor<'a> {
    fn bytes(&self) -> &'a [u8] {
        self.text.as_bytes()
    }

    fn skip_space(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.bytes().get(self.at) {
            self.at += 1;
        }
    }

    /// Skips whitespace, then consumes `byte` if it is next.
    fn eat(&mut self, byte: u8) -> bool {
        self.skip_space();
        if self.bytes().get(self.at) == Some(&byte) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    /// A key, `"name":`, of a known field.
    fn key(&mut self) -> Option<Field> {
        const KEYS: [(&[u8], Field); 10] = [
            (b"\"buy_sell\"", Field::BuySell),
            (b"\"symbol\"", Field::Symbol),
            (b"\"price\"", Field::Price),
            (b"\"quantity\"", Field::Quantity),
            (b"\"market_type\"", Field::MarketType),
            (b"\"price_type\"", Field::PriceType),
            (b"\"time_in_force\"", Field::TimeInForce),
            (b"\"order_type\"", Field::OrderType),
            (b"\"user_def\"", Field::UserDef),
            (b"\"client_timestamp\"", Field::ClientTimestamp),
        ];
        self.skip_space();
        let rest = &self.bytes()[self.at..];
        let (key, field) = KEYS.iter().find(|(key, _)| rest.starts_with(key))?;
        self.at += key.len();
        self.eat(b':').then_some(*field)
    }

    /// A value of a string enum, written without escapes.
    fn choice<T: WireEnum>(&mut self) -> Option<T> {
        if !self.eat(b'"') {
            return None;
        }
        let rest = &self.bytes()[self.at..];
        let (name, value) = T::VALUES.iter().find(|(name, _)| {
            rest.starts_with(name.as_bytes()) && rest.get(name.len()) == Some(&b'"')
        })?;
        self.at += name.len() + 1;
        Some(*value)
    }

    /// A string of printable ASCII without escapes.
    fn plain_str(&mut self) -> Option<&'a str> {
        if !self.eat(b'"') {
            return None;
        }
        let start = self.at;
        let len = self.bytes()[start..]
            .iter()
            .position(|&b| !(b' '..=b'~').contains(&b) || b == b'"' || b == b'\\')?;
        if self.bytes()[start + len] != b'"' {
            return None;
        }
        self.at = start + len + 1;
        self.text.get(start..start + len)
    }

    /// An unsigned JSON number without exponent and at most 15 digits: its text,
    /// and its value when it has no fraction.
    fn number(&mut self) -> Option<(&'a str, Option<u64>)> {
        self.skip_space();
        let start = self.at;
        let bytes = self.bytes();
        let mut value = 0u64;
        while let Some(&b @ b'0'..=b'9') = bytes.get(self.at) {
            value = value * 10 + u64::from(b - b'0');
            self.at += 1;
            if self.at - start > 15 {
                return None;
            }
        }
        // No leading zero (not JSON) and no "0" (rare; the serde path reads it).
        if self.at == start || bytes[start] == b'0' {
            return None;
        }
        let mut integer = Some(value);
        if bytes.get(self.at) == Some(&b'.') {
            integer = None;
            self.at += 1;
            let from = self.at;
            while bytes.get(self.at).is_some_and(u8::is_ascii_digit) {
                self.at += 1;
            }
            if self.at == from || self.at - start > 16 {
                return None;
            }
        }
        if matches!(bytes.get(self.at), Some(b'e' | b'E')) {
            return None;
        }
        Some((self.text.get(start..self.at)?, integer))
    }
}

/// Stores `value` unless the field was already read (a duplicate: the serde path).
fn set<T>(slot: &mut Option<T>, value: Option<T>) -> Option<()> {
    match slot {
        Some(_) => None,
        None => {
            *slot = Some(value?);
            Some(())
        }
    }
}

pub(super) fn read(body: &[u8]) -> Option<Raw<'_>> {
    let mut c = Cursor {
        text: std::str::from_utf8(body).ok()?,
        at: 0,
    };
    let mut raw = Raw::default();
    if !c.eat(b'{') {
        return None;
    }
    loop {
        match c.key()? {
            Field::BuySell => set(&mut raw.buy_sell, c.choice())?,
            Field::Symbol => set(
                &mut raw.symbol,
                c.number().and_then(|(_, n)| u32::try_from(n?).ok()),
            )?,
            Field::Price => set(
                &mut raw.price,
                c.number().and_then(|(text, _)| text.parse().ok()),
            )?,
            Field::Quantity => set(
                &mut raw.quantity,
                c.number().and_then(|(_, n)| i64::try_from(n?).ok()),
            )?,
            Field::MarketType => set(&mut raw.market_type, c.choice())?,
            Field::PriceType => set(&mut raw.price_type, c.choice())?,
            Field::TimeInForce => set(&mut raw.time_in_force, c.choice())?,
            Field::OrderType => set(&mut raw.order_type, c.choice())?,
            Field::UserDef => set(
                &mut raw.user_def,
                c.plain_str().map(|s| Text(Cow::Borrowed(s))),
            )?,
            Field::ClientTimestamp => set(
                &mut raw.client_timestamp,
                c.plain_str().map(|s| Text(Cow::Borrowed(s))),
            )?,
        }
        if c.eat(b'}') {
            break;
        }
        if !c.eat(b',') {
            return None;
        }
    }
    c.skip_space();
    (c.at == body.len()).then_some(raw)
}
