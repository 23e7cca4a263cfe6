//! The one pass over an order body. Plain bodies (the clients' format) take `fast`; any
//! other goes to a hand-written serde visitor that remembers which
//! key it is reading, so a type error names its field. Nothing is allocated on the success
//! path: strings are borrowed from the body when they carry no escapes. Validation of the
//! values read here is in `order.rs`.

use std::borrow::Cow;
use std::cell::Cell;
use std::fmt;

use axum::http::StatusCode;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde::Deserialize;

use crate::error::ApiError;
use crate::order::{MarketType, OrderType, PriceType};

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

/// `buy_sell` on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BuySell {
    Buy,
    Sell,
}

/// `time_in_force` on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Tif {
    Rod,
    Ioc,
    Fok,
}

/// Deserializes a string enum through `deserialize_str`, so that a value of the wrong JSON
/// type is a type error naming the field (serde's enum path reports it as bad syntax).
macro_rules! string_enum {
    ($ty:ident { $($text:literal => $variant:ident),+ $(,)? }) => {
        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                struct V;
                impl Visitor<'_> for V {
                    type Value = $ty;
                    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                        f.write_str(concat!("one of" $(, " \"", $text, "\"")+))
                    }
                    fn visit_str<E: de::Error>(self, s: &str) -> Result<$ty, E> {
                        match s {
                            $($text => Ok($ty::$variant),)+
                            _ => Err(E::unknown_variant(s, &[$($text),+])),
                        }
                    }
                }
                deserializer.deserialize_str(V)
            }
        }
    };
}

string_enum!(BuySell { "buy" => Buy, "sell" => Sell });
string_enum!(MarketType { "common" => Common, "odd" => Odd, "fixed" => Fixed });
string_enum!(PriceType { "limit" => Limit, "market" => Market });
string_enum!(Tif { "rod" => Rod, "ioc" => Ioc, "fok" => Fok });
string_enum!(OrderType { "stock" => Stock, "margin" => Margin, "short" => Short });

/// The fields of an order, in the documented order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Field {
    BuySell,
    Symbol,
    Price,
    Quantity,
    MarketType,
    PriceType,
    TimeInForce,
    OrderType,
    UserDef,
    ClientTimestamp,
}

impl Field {
    /// Every field, for tests that walk them all.
    #[cfg(test)]
    pub(crate) const ALL: [Field; 10] = [
        Field::BuySell,
        Field::Symbol,
        Field::Price,
        Field::Quantity,
        Field::MarketType,
        Field::PriceType,
        Field::TimeInForce,
        Field::OrderType,
        Field::UserDef,
        Field::ClientTimestamp,
    ];

    pub(crate) fn name(self) -> &'static str {
        match self {
            Field::BuySell => "buy_sell",
            Field::Symbol => "symbol",
            Field::Price => "price",
            Field::Quantity => "quantity",
            Field::MarketType => "market_type",
            Field::PriceType => "price_type",
            Field::TimeInForce => "time_in_force",
            Field::OrderType => "order_type",
            Field::UserDef => "user_def",
            Field::ClientTimestamp => "client_timestamp",
        }
    }

    /// What a valid value looks like, for error messages.
    pub(crate) fn expected(self) -> &'static str {
        match self {
            Field::BuySell => "\"buy\" or \"sell\"",
            Field::Symbol => "an integer from 1 to 4294967295",
            Field::Price => "a number > 0 with at most two decimals, e.g. 100.05",
            Field::Quantity => "an integer from 1 to 1000000000",
            Field::MarketType => "\"common\", \"odd\" or \"fixed\"",
            Field::PriceType => "\"limit\" or \"market\"",
            Field::TimeInForce => "\"rod\", \"ioc\" or \"fok\"",
            Field::OrderType => "\"stock\", \"margin\" or \"short\"",
            Field::UserDef => "a string of at most 32 bytes",
            Field::ClientTimestamp => {
                "an RFC 3339 time with Z or an offset, e.g. \"2026-11-22T10:00:00.123456Z\""
            }
        }
    }

    pub(crate) fn from_key(key: &str) -> Option<Field> {
        // A match compiles to a length switch and one comparison: this runs for every key.
        Some(match key {
            "buy_sell" => Field::BuySell,
            "symbol" => Field::Symbol,
            "price" => Field::Price,
            "quantity" => Field::Quantity,
            "market_type" => Field::MarketType,
            "price_type" => Field::PriceType,
            "time_in_force" => Field::TimeInForce,
            "order_type" => Field::OrderType,
            "user_def" => Field::UserDef,
            "client_timestamp" => Field::ClientTimestamp,
            _ => return None,
        })
    }
}

/// The order as read from JSON, before validation. Each field mirrors one JSON key;
/// `None` means the key was absent (a 422 once validation asks for it).
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Raw<'a> {
    pub(crate) buy_sell: Option<BuySell>,
    pub(crate) symbol: Option<u32>,
    pub(crate) price: Option<f64>,
    pub(crate) quantity: Option<i64>,
    pub(crate) market_type: Option<MarketType>,
    pub(crate) price_type: Option<PriceType>,
    pub(crate) time_in_force: Option<Tif>,
    pub(crate) order_type: Option<OrderType>,
    pub(crate) user_def: Option<Text<'a>>,
    pub(crate) client_timestamp: Option<Text<'a>>,
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

/// A JSON string borrowed from the body, or owned when it had escapes.
#[derive(Debug, PartialEq)]
pub(crate) struct Text<'a>(pub(crate) Cow<'a, str>);

impl<'de> Deserialize<'de> for Text<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct TextVisitor;
        impl<'de> Visitor<'de> for TextVisitor {
            type Value = Text<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Text<'de>, E> {
                Ok(Text(Cow::Borrowed(s)))
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Text<'de>, E> {
                Ok(Text(Cow::Owned(s.to_owned())))
            }
        }
        deserializer.deserialize_str(TextVisitor)
    }
}

mod fast;

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

/// A 422 naming `field`, what was wrong and what is expected.
pub(crate) fn invalid(field: Field, problem: impl fmt::Display) -> ApiError {
    let problem = problem.to_string();
    // serde's own messages often already say what was expected.
    let message = if problem.contains("expected") {
        format!("invalid {}: {problem}", field.name())
    } else {
        format!(
            "invalid {}: {problem}; expected {}",
            field.name(),
            field.expected()
        )
    };
    ApiError::new(
        StatusCode::UNPROCESSABLE_ENTITY,
        message,
        Some(field.name()),
    )
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod reference;

#[cfg(test)]
mod fuzz_gen;

#[cfg(test)]
mod fuzz_tests;
