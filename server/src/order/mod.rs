//! The order of `POST /order`: its type, and validation of the values that `json` read
//! in one pass over the body.
//!
//! - `field`: the fields, their names and value types (the string enums), and `Raw`;
//! - `json`: the one pass over the body (`json/fast.rs` for plain bodies, serde for the
//!   rest), 400 / 422 naming the field;
//! - here: `Order`, and the checks of its values (422).

use std::borrow::Cow;

use axum::http::StatusCode;
use chrono::{DateTime, FixedOffset};

use crate::book::{Side, Ticks, TimeInForce};
use crate::error::ApiError;

mod field;
mod json;

pub(crate) use field::WireEnum;
use field::{invalid, Field, Raw};
pub use field::{MarketType, OrderType, PriceType};

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

/// Parses and validates an order body. Malformed JSON is a 400; anything else wrong is a
/// 422 naming the field.
pub fn parse(body: &[u8]) -> Result<Order<'_>, ApiError> {
    validate(json::read(body)?)
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
    let side = required(raw.buy_sell, Field::BuySell)?;
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
    let time_in_force = required(raw.time_in_force, Field::TimeInForce)?;
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
mod tests;
