//! The order JSON of `POST /order`: one pass over the body bytes, then validation.
//!
//! Parsing walks the JSON object once with a hand-written serde visitor that remembers which
//! key it is reading, so a type error names its field. Nothing is allocated on the success
//! path: strings are borrowed from the body when they carry no escapes.

use std::borrow::Cow;
use std::cell::Cell;
use std::fmt;

use axum::http::StatusCode;
use chrono::{DateTime, FixedOffset};
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde::Deserialize;

use crate::book::{Side, Ticks, TimeInForce};
use crate::error::ApiError;

/// Largest accepted quantity (shares); larger is a typo, not an order.
pub const MAX_QUANTITY: i64 = 1_000_000_000;
/// Largest accepted price; keeps `price × 100` exact in an f64 and in u64 ticks.
pub const MAX_PRICE: f64 = 1_000_000_000.0;
/// Longest accepted `user_def`, in UTF-8 bytes.
pub const MAX_USER_DEF_BYTES: usize = 32;

/// A validated order, borrowing from the request body.
#[derive(Clone, Debug, PartialEq)]
pub struct Order<'a> {
    /// Book side to match against.
    pub side: Side,
    /// Which book; > 0.
    pub symbol: u32,
    /// Price in ticks (cents); validated for market orders too, then ignored by them.
    pub price: Ticks,
    /// Shares, 1 ..= `MAX_QUANTITY`.
    pub quantity: u64,
    /// Board: validated and counted, one book per symbol serves all three.
    pub market_type: MarketType,
    /// Limit or market: decides whether `price` bounds matching.
    pub price_type: PriceType,
    /// What happens to the unfilled remainder.
    pub time_in_force: TimeInForce,
    /// Cash or credit account type: validated, not used by matching.
    pub order_type: OrderType,
    /// Echoed verbatim in the reply, so clients can match it byte for byte.
    pub client_timestamp: Cow<'a, str>,
    /// The parsed `client_timestamp`, for `latency_ms`.
    pub client_time: DateTime<FixedOffset>,
}

impl Order<'_> {
    /// The price limit handed to the book: `None` for market orders.
    pub fn limit(&self) -> Option<Ticks> {
        match self.price_type {
            PriceType::Limit => Some(self.price),
            PriceType::Market => None,
        }
    }
}

/// `market_type`: the trading board of the order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MarketType {
    /// Board lots during the regular session.
    Common,
    /// Odd lots (fewer than 1,000 shares).
    Odd,
    /// Fixed-price session after the close.
    Fixed,
}

/// `price_type`: whether the price limits matching.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PriceType {
    Limit,
    Market,
}

/// `order_type`: the account type; all three match the same way here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OrderType {
    /// Cash stock.
    Stock,
    /// Margin purchase.
    Margin,
    /// Short sale.
    Short,
}

/// `buy_sell` on the wire.
#[derive(Clone, Copy, Debug)]
enum BuySell {
    Buy,
    Sell,
}

/// `time_in_force` on the wire.
#[derive(Clone, Copy, Debug)]
enum Tif {
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

/// The wire name of a side, as echoed in the reply.
pub fn side_name(side: Side) -> &'static str {
    match side {
        Side::Buy => "buy",
        Side::Sell => "sell",
    }
}

/// Parses and validates an order body. Malformed JSON is a 400; anything else wrong is a
/// 422 naming the field.
pub fn parse(body: &[u8]) -> Result<Order<'_>, ApiError> {
    let current = Cell::new(None);
    let mut de = serde_json::Deserializer::from_slice(body);
    let raw = OrderVisitor { current: &current }
        .deserialize(&mut de)
        .and_then(|raw| de.end().map(|()| raw))
        .map_err(|err| json_error(&err, current.get()))?;
    validate(raw)
}

/// The fields of an order, in the documented order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Field {
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
    const ALL: [Field; 10] = [
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

    fn name(self) -> &'static str {
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
    fn expected(self) -> &'static str {
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

    fn from_key(key: &str) -> Option<Field> {
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
#[derive(Default)]
struct Raw<'a> {
    buy_sell: Option<BuySell>,
    symbol: Option<u32>,
    price: Option<f64>,
    quantity: Option<i64>,
    market_type: Option<MarketType>,
    price_type: Option<PriceType>,
    time_in_force: Option<Tif>,
    order_type: Option<OrderType>,
    user_def: Option<Text<'a>>,
    client_timestamp: Option<Text<'a>>,
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
struct Text<'a>(Cow<'a, str>);

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
fn invalid(field: Field, problem: impl fmt::Display) -> ApiError {
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

/// Takes a required field or reports it missing.
fn required<T>(value: Option<T>, field: Field) -> Result<T, ApiError> {
    value.ok_or_else(|| {
        ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            format!(
                "missing field {}; expected {}",
                field.name(),
                field.expected()
            ),
            Some(field.name()),
        )
    })
}

fn validate(raw: Raw<'_>) -> Result<Order<'_>, ApiError> {
    let side = match required(raw.buy_sell, Field::BuySell)? {
        BuySell::Buy => Side::Buy,
        BuySell::Sell => Side::Sell,
    };
    let symbol = required(raw.symbol, Field::Symbol)?;
    if symbol == 0 {
        return Err(invalid(Field::Symbol, "got 0"));
    }
    let price = price_ticks(required(raw.price, Field::Price)?)?;
    let quantity = required(raw.quantity, Field::Quantity)?;
    if !(1..=MAX_QUANTITY).contains(&quantity) {
        return Err(invalid(Field::Quantity, format_args!("got {quantity}")));
    }
    let market_type = required(raw.market_type, Field::MarketType)?;
    let price_type = required(raw.price_type, Field::PriceType)?;
    let time_in_force = match required(raw.time_in_force, Field::TimeInForce)? {
        Tif::Rod => TimeInForce::Rod,
        Tif::Ioc => TimeInForce::Ioc,
        Tif::Fok => TimeInForce::Fok,
    };
    let order_type = required(raw.order_type, Field::OrderType)?;
    let user_def = required(raw.user_def, Field::UserDef)?;
    if user_def.0.len() > MAX_USER_DEF_BYTES {
        return Err(invalid(
            Field::UserDef,
            format_args!("got {} bytes", user_def.0.len()),
        ));
    }
    let client_timestamp = required(raw.client_timestamp, Field::ClientTimestamp)?.0;
    let client_time = DateTime::parse_from_rfc3339(&client_timestamp).map_err(|err| {
        let shown: String = client_timestamp.chars().take(64).collect();
        invalid(Field::ClientTimestamp, format_args!("{err} in {shown:?}"))
    })?;
    Ok(Order {
        side,
        symbol,
        price,
        quantity: quantity as u64,
        market_type,
        price_type,
        time_in_force,
        order_type,
        client_timestamp,
        client_time,
    })
}

/// Converts a price to ticks of 0.01: finite, > 0, at most `MAX_PRICE`, a whole number of
/// cents (within float rounding: 100.05 × 100 is 10004.999999999998).
pub fn price_ticks(price: f64) -> Result<Ticks, ApiError> {
    if !price.is_finite() || price <= 0.0 || price > MAX_PRICE {
        return Err(invalid(Field::Price, format_args!("got {price}")));
    }
    let cents = price * 100.0;
    let ticks = cents.round();
    if ticks < 1.0 || (cents - ticks).abs() > 1e-6_f64.max(ticks * 1e-13) {
        return Err(invalid(
            Field::Price,
            format_args!("got {price}, not a multiple of 0.01"),
        ));
    }
    Ok(ticks as Ticks)
}

#[cfg(test)]
#[path = "order_tests.rs"]
mod tests;
