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
    let current = Cell::new(None);
    let mut de = serde_json::Deserializer::from_slice(body);
    OrderVisitor { current: &current }
        .deserialize(&mut de)
        .and_then(|raw| de.end().map(|()| raw))
        .map_err(|err| json_error(&err, current.get()))
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

/// Maps a serde_json error to 400 (not JSON) or 422 (JSON, but not a valid order).
fn json_error(err: &serde_json::Error, field: Option<Field>) -> ApiError {
    use serde_json::error::Category;
    let text = err.to_string();
    // "… at line 1 column 42": the position means little in a one-line body.
    let detail = text
        .rfind(" at line ")
        .map_or(text.as_str(), |i| &text[..i]);
    let out_of_range = detail.starts_with("number out of range");
    match (err.classify(), field) {
        (Category::Data, Some(field)) => invalid(field, format_args!("{detail}")),
        (_, Some(Field::Price)) if out_of_range => invalid(Field::Price, "not finite"),
        (Category::Data, None) => ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            format!("the body must be a JSON object with the order fields: {detail}"),
            None,
        ),
        _ => ApiError::new(
            StatusCode::BAD_REQUEST,
            format!("malformed JSON: {detail}"),
            None,
        ),
    }
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
mod tests {
    use super::*;

    /// Bodies the fast path must read exactly as serde does, or leave to it.
    #[test]
    fn the_fast_path_reads_what_serde_reads_or_declines() {
        let base = r#"{"buy_sell":"sell","symbol":1301,"price":100.05,"quantity":200,"market_type":"common","price_type":"limit","time_in_force":"rod","order_type":"stock","user_def":"hftbench","client_timestamp":"2026-11-22T10:00:00.123456Z"}"#;
        let mut bodies = vec![
            base.to_string(),
            format!(" \n{base}\r\t "),
            base.replace(',', " ,\n ").replace(':', " : "),
            base.replace(r#""symbol":1301,"#, "")
                .replace('{', r#"{"symbol":1301,"#),
            base.replace('}', r#","extra":[1,{"a":null}]}"#),
            base.replace(r#""hftbench""#, r#""""#),
            base.replace(r#""hftbench""#, r#""h\"f""#),
            base.replace(r#""hftbench""#, "\"caf\u{e9}\""),
            base.replace(r#""hftbench""#, "\"a\tb\""),
            base.replace(r#""hftbench""#, "\"a\t\""),
            base.replace(r#""hftbench""#, "\"a\u{7f}\""),
            base.replace(r#""sell""#, r#""sell ""#),
            base.replace(r#""price""#, r#""price_""#),
            base.replace(r#""price""#, r#""Price""#),
            base.replace(r#"{"#, r#"{"buy_sell_x":1,"#),
            base.replace("sell", "buy"),
            base.replace("sell", "BUY"),
            base.replace('}', r#","symbol":1}"#),
            base.replace('}', "}x"),
            base.replace('}', ""),
            base.replace(r#""symbol":1301"#, r#""symbol":"1301""#),
            base.replace("1301", "4294967295"),
            base.replace("1301", "4294967296"),
            base.replace("1301", "0"),
            base.replace("1301", "01301"),
            base.replace("1301", "1301.0"),
            base.replace(":200", ":-200"),
            base.replace(":200", ":999999999999999"),
            base.replace(":200", ":9999999999999999999999"),
            base.replace(":200", ":2e2"),
            base.replace(":200", ":null"),
            "{}".to_string(),
            "[]".to_string(),
            String::new(),
        ];
        for price in [
            "100",
            "99.5",
            "100.05",
            "0.01",
            "1000000000",
            "1000000000.01",
            "123456789012.345",
            "1234567890123456",
            "100.",
            "1e2",
            "-1",
            "0",
            "00.5",
            "100.050",
            "0.1",
            "0.3",
            "5e-324",
            "1e999",
        ] {
            bodies.push(base.replace("100.05", price));
        }
        let mut fast_reads = 0;
        for body in &bodies {
            if let Some(raw) = fast::read(body.as_bytes()) {
                fast_reads += 1;
                let serde = read_serde(body.as_bytes()).map_err(|e| e.message);
                assert_eq!(Ok(raw), serde, "{body}");
            }
        }
        assert!(fast::read(base.as_bytes()).is_some());
        assert!(
            fast_reads >= 12,
            "only {fast_reads} bodies took the fast path"
        );
    }
}
