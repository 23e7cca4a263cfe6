//! The one pass over an order body. Plain bodies (the clients' format) take `fast`; any
//! other goes to a hand-written serde visitor that remembers which
//! key it is reading, so a type error names its field. Nothing is allocated on the success
//! path: strings are borrowed from the body when they carry no escapes. The fields and
//! their types are in `order/field.rs`; validation of the values read here is in
//! `order/mod.rs`.

use std::cell::Cell;
use std::fmt;

use axum::http::StatusCode;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde::Deserialize;

use super::field::{invalid, Field, Raw};
use crate::error::ApiError;

mod fast;

/// Reads the order object; a 400 when the body is not JSON, a 422 when a value has the
/// wrong type or an unknown enum value.
pub(crate) fn read(body: &[u8]) -> Result<Raw<'_>, ApiError> {
    match fast::read(body) {
        Some(raw) => Ok(raw),
        None => read_serde(body),
    }
}

/// The general reader: any JSON, errors naming the field.
fn read_serde(body: &[u8]) -> Result<Raw<'_>, ApiError> {
    // JSON is UTF-8 (RFC 8259): serde_json checks the strings it decodes, not those it
    // skips (extra keys), so check the whole body once (the fast path checks the bodies
    // it reads itself).
    if let Err(err) = std::str::from_utf8(body) {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            format!(
                "malformed JSON: the body is not UTF-8 (invalid byte at offset {})",
                err.valid_up_to()
            ),
            None,
        ));
    }
    let current = Cell::new(None);
    let mut de = serde_json::Deserializer::from_slice(body);
    OrderVisitor { current: &current }
        .deserialize(&mut de)
        .and_then(|raw| de.end().map(|()| raw))
        .map_err(|err| json_error(&err, current.get(), body))
}

/// An object key: a known field, or `None` for an extra key (ignored).
struct Key(Option<Field>);

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl Visitor<'_> for KeyVisitor {
            type Value = Key;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a field name")
            }
            fn visit_str<E: de::Error>(self, key: &str) -> Result<Key, E> {
                Ok(Key(Field::from_key(key)))
            }
        }
        deserializer.deserialize_identifier(KeyVisitor)
    }
}

/// Reads the order object, recording in `current` the field whose value is being read.
struct OrderVisitor<'c> {
    current: &'c Cell<Option<Field>>,
}

impl<'de> DeserializeSeed<'de> for OrderVisitor<'_> {
    type Value = Raw<'de>;
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Raw<'de>, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for OrderVisitor<'_> {
    type Value = Raw<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an order object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Raw<'de>, A::Error> {
        let mut raw = Raw::default();
        while let Some(Key(field)) = map.next_key()? {
            let Some(field) = field else {
                map.next_value::<IgnoredAny>()?;
                continue;
            };
            self.current.set(Some(field));
            macro_rules! read {
                ($slot:expr) => {{
                    if $slot.is_some() {
                        return Err(de::Error::custom(format_args!(
                            "duplicate field `{}`",
                            field.name()
                        )));
                    }
                    $slot = Some(map.next_value()?);
                }};
            }
            match field {
                Field::BuySell => read!(raw.buy_sell),
                Field::Symbol => read!(raw.symbol),
                Field::Price => read!(raw.price),
                Field::Quantity => read!(raw.quantity),
                Field::MarketType => read!(raw.market_type),
                Field::PriceType => read!(raw.price_type),
                Field::TimeInForce => read!(raw.time_in_force),
                Field::OrderType => read!(raw.order_type),
                Field::UserDef => read!(raw.user_def),
                Field::ClientTimestamp => read!(raw.client_timestamp),
            }
            self.current.set(None);
        }
        Ok(raw)
    }
}

/// Maps a serde_json error to 400 (the body is not JSON) or 422 (JSON, but not a valid
/// order). serde stops at the first problem in body order, which may be a value of the
/// wrong type before a syntax error further on; and a number too large for a double
/// (`1e999`) is a syntax error to serde_json though JSON's grammar allows it. So whether
/// the body is JSON is settled by a second pass that only checks the grammar (serde_json
/// skipping the whole body): errors only, the accepted path never runs it.
fn json_error(err: &serde_json::Error, field: Option<Field>, body: &[u8]) -> ApiError {
    if let Err(syntax) = serde_json::from_slice::<IgnoredAny>(body) {
        return ApiError::new(
            StatusCode::BAD_REQUEST,
            format!("malformed JSON: {}", detail(&syntax)),
            None,
        );
    }
    let detail = detail(err);
    match field {
        Some(Field::Price) if detail.starts_with("number out of range") => {
            invalid(Field::Price, "not finite")
        }
        Some(field) => invalid(field, format_args!("{detail}")),
        None => ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            format!("the body must be a JSON object with the order fields: {detail}"),
            None,
        ),
    }
}

/// serde_json's message without " at line 1 column 42": the position means little in a
/// one-line body.
fn detail(err: &serde_json::Error) -> String {
    let mut text = err.to_string();
    if let Some(at) = text.rfind(" at line ") {
        text.truncate(at);
    }
    text
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod reference;

#[cfg(test)]
mod fuzz_gen;

#[cfg(test)]
mod fuzz_tests;
