//! The fields of an order body and their value types: the field names and what each
//! expects (for error messages), the string enums, and `Raw`, the fields as read from JSON
//! before validation.
//!
//! One rule for the five string enums: each is read straight into the type the order
//! holds (`book::Side`, `book::TimeInForce`, `MarketType`, `PriceType`, `OrderType`) from
//! one table of wire names, `WireEnum::VALUES`, which both JSON readers use.

use std::borrow::Cow;
use std::fmt;

use axum::http::StatusCode;
use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;

use crate::book::{Side, TimeInForce};
use crate::error::ApiError;

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

/// A string enum of the order body: its values by wire name.
pub(crate) trait WireEnum: Copy + 'static {
    /// Every value with its wire name (without quotes).
    const VALUES: &'static [(&'static str, Self)];
    /// The valid values for an error message: `"rod", "ioc" or "fok"`.
    const EXPECTED: &'static str;
    /// The wire name, as the reply echoes it (a match, not a search of `VALUES`).
    fn wire_name(self) -> &'static str;
}

/// `"a"`, `"a" or "b"`, `"a", "b" or "c"`: a list of wire names as a sentence.
macro_rules! one_of {
    ($only:literal) => { concat!("\"", $only, "\"") };
    ($first:literal, $last:literal) => { concat!("\"", $first, "\" or \"", $last, "\"") };
    ($first:literal, $($rest:literal),+) => { concat!("\"", $first, "\", ", one_of!($($rest),+)) };
}

/// Implements `WireEnum` and a `Deserialize` through `deserialize_str`, so that a value of
/// the wrong JSON type is a type error naming the field (serde's enum path reports it as
/// bad syntax).
macro_rules! wire_enum {
    ($ty:ident { $($text:literal => $variant:ident),+ $(,)? }) => {
        impl WireEnum for $ty {
            const VALUES: &'static [(&'static str, $ty)] = &[$(($text, $ty::$variant)),+];
            const EXPECTED: &'static str = one_of!($($text),+);

            fn wire_name(self) -> &'static str {
                match self {
                    $($ty::$variant => $text,)+
                }
            }
        }

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

wire_enum!(Side { "buy" => Buy, "sell" => Sell });
wire_enum!(MarketType { "common" => Common, "odd" => Odd, "fixed" => Fixed });
wire_enum!(PriceType { "limit" => Limit, "market" => Market });
wire_enum!(TimeInForce { "rod" => Rod, "ioc" => Ioc, "fok" => Fok });
wire_enum!(OrderType { "stock" => Stock, "margin" => Margin, "short" => Short });

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
            Field::BuySell => Side::EXPECTED,
            Field::Symbol => "an integer from 1 to 4294967295",
            Field::Price => "a number > 0 with at most two decimals, e.g. 100.05",
            Field::Quantity => "an integer from 1 to 1000000000",
            Field::MarketType => MarketType::EXPECTED,
            Field::PriceType => PriceType::EXPECTED,
            Field::TimeInForce => TimeInForce::EXPECTED,
            Field::OrderType => OrderType::EXPECTED,
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
    pub(crate) buy_sell: Option<Side>,
    pub(crate) symbol: Option<u32>,
    pub(crate) price: Option<f64>,
    pub(crate) quantity: Option<i64>,
    pub(crate) market_type: Option<MarketType>,
    pub(crate) price_type: Option<PriceType>,
    pub(crate) time_in_force: Option<TimeInForce>,
    pub(crate) order_type: Option<OrderType>,
    pub(crate) user_def: Option<Text<'a>>,
    pub(crate) client_timestamp: Option<Text<'a>>,
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
