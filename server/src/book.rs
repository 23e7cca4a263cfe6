//! One limit order book: price-time priority, limit and market orders, ROD / IOC / FOK.
//!
//! Pure and synchronous: no clock, no I/O, no locking. The engine (`engine.rs`) owns one
//! `Book` per symbol behind a mutex. Prices are integer ticks (cents) so that price levels
//! compare exactly.
//!
//! Cost per order: `O(log L)` to find the best level (L = price levels on a side) plus
//! `O(1)` per fill; a resting order is appended to its level's queue in `O(log L)`. The
//! FOK check reads one running total per level, so it costs `O(levels it would take)`.
//! One order makes at most `max_fills` fills (`--max-fills-per-order`), which bounds the
//! time it holds the book and the size of its reply; the FOK check then also counts the
//! orders of the last level it would reach, at most `max_fills` of them.

use std::collections::{BTreeMap, VecDeque};

/// Price in ticks of 0.01 (cents): 100.05 is 10005.
pub type Ticks = u64;
/// Server-assigned order id, unique and increasing over the server's lifetime.
pub type OrderId = u64;

/// Which side of the book an order is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    Buy,
    Sell,
}

/// How long an order's unfilled remainder lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeInForce {
    /// Rest of day: a limit order's remainder rests on the book.
    Rod,
    /// Immediate or cancel: fill what crosses now, cancel the rest.
    Ioc,
    /// Fill or kill: fill the whole quantity now or nothing at all.
    Fok,
}

/// An order arriving at the book, already validated by the HTTP layer.
#[derive(Clone, Copy, Debug)]
pub struct Incoming {
    /// Id to record in fills and on the book if it rests.
    pub id: OrderId,
    /// Buy orders match asks, sell orders match bids.
    pub side: Side,
    /// Worst acceptable price; `None` is a market order (any price, never rests).
    pub limit: Option<Ticks>,
    /// Shares wanted, > 0.
    pub quantity: u64,
    /// What happens to the remainder after matching.
    pub tif: TimeInForce,
}

/// One execution against a resting order, at the resting order's price.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fill {
    /// Trade price in ticks (the maker's price).
    pub price: Ticks,
    /// Shares traded in this fill.
    pub quantity: u64,
    /// The resting order this fill executed against.
    pub counter_order_id: OrderId,
}

/// What became of an incoming order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Rested on the book, nothing filled.
    New,
    /// Some filled, the remainder rests (ROD limit orders only).
    PartiallyFilled,
    /// The whole quantity filled.
    Filled,
    /// Nothing filled and nothing rests (IOC / market with no liquidity, FOK not fillable,
    /// or only with more than `max_fills` fills).
    Cancelled,
    /// Some filled, the remainder was cancelled (IOC / market, ROD on a full book, or any
    /// order stopped by `max_fills`).
    PartiallyFilledCancelled,
    /// Nothing filled, and the ROD remainder could not rest: the book holds its cap.
    Rejected,
}

impl Status {
    /// The wire name of the status (see server/README.md).
    pub fn as_str(self) -> &'static str {
        match self {
            Status::New => "NEW",
            Status::PartiallyFilled => "PARTIALLY_FILLED",
            Status::Filled => "FILLED",
            Status::Cancelled => "CANCELLED",
            Status::PartiallyFilledCancelled => "PARTIALLY_FILLED_CANCELLED",
            Status::Rejected => "REJECTED",
        }
    }
}

/// The result of submitting one order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// Final state of the order.
    pub status: Status,
    /// Shares executed, the sum of `fills`.
    pub filled: u64,
    /// Shares now resting on the book (ROD only).
    pub resting: u64,
    /// Executions in the order they happened (best price first, then time).
    pub fills: Vec<Fill>,
    /// True when a ROD remainder was refused because the book held `max_resting` orders.
    pub book_full: bool,
    /// True when crossing liquidity was left untouched because the order reached
    /// `max_fills`: its remainder was cancelled (a FOK: all of it, nothing traded).
    pub fills_capped: bool,
}

/// A resting order; its price is the key of the level it sits in.
#[derive(Clone, Copy, Debug)]
struct Resting {
    /// Reported as `counter_order_id` to whoever trades against it.
    id: OrderId,
    /// Shares still open.
    quantity: u64,
}

/// One price level: its orders in time order and their total, for the FOK check.
#[derive(Debug, Default)]
struct Level {
    /// Open shares of all orders in `orders`.
    total: u64,
    /// Orders at this price, oldest first (time priority).
    orders: VecDeque<Resting>,
}

/// Most empty levels kept for reuse; beyond this they are freed.
const SPARE_LEVELS: usize = 64;

/// A limit order book for one symbol.
#[derive(Debug)]
pub struct Book {
    /// Bid levels by price; the best bid is the highest key. Each queue is in time order.
    bids: BTreeMap<Ticks, Level>,
    /// Ask levels by price; the best ask is the lowest key.
    asks: BTreeMap<Ticks, Level>,
    /// Resting orders on both sides, compared against `max_resting`.
    resting: usize,
    /// The cap on resting orders (`--max-resting-per-symbol`) that bounds memory.
    max_resting: usize,
    /// The cap on fills per incoming order (`--max-fills-per-order`) that bounds the time
    /// one order holds the book (and the reply's size); at least 1.
    max_fills: usize,
    /// Emptied levels, reused so that a level appearing and vanishing does not allocate.
    spare: Vec<Level>,
}

impl Book {
    /// An empty book that holds at most `max_resting` resting orders, with no cap on the
    /// fills of one order.
    pub fn new(max_resting: usize) -> Self {
        Book::with_max_fills(max_resting, usize::MAX)
    }

    /// An empty book that holds at most `max_resting` resting orders and lets one order
    /// trade against at most `max_fills` of them (0 counts as 1).
    pub fn with_max_fills(max_resting: usize, max_fills: usize) -> Self {
        Book {
            bids: BTreeMap::new(),
            asks: BTreeMap::new(),
            resting: 0,
            max_resting,
            max_fills: max_fills.max(1),
            spare: Vec::new(),
        }
    }

    /// Resting orders on both sides.
    pub fn resting_orders(&self) -> usize {
        self.resting
    }

    /// Best bid and best ask prices, if any.
    pub fn best_bid_ask(&self) -> (Option<Ticks>, Option<Ticks>) {
        (
            self.bids.last_key_value().map(|(p, _)| *p),
            self.asks.first_key_value().map(|(p, _)| *p),
        )
    }

    /// Matches `order` against the opposite side, then rests, cancels or rejects the rest.
    ///
    /// An order stopped by `max_fills` with crossing liquidity left cancels its remainder
    /// whatever its time in force: a ROD remainder resting at its limit would cross the
    /// orders it did not reach. A FOK that would need more fills trades nothing.
    pub fn submit(&mut self, order: Incoming) -> Outcome {
        let mut fills = Vec::new();
        if order.tif == TimeInForce::Fok {
            let check = self.can_fill(order.side, order.limit, order.quantity);
            if check != Fillable::Yes {
                return Outcome {
                    status: Status::Cancelled,
                    filled: 0,
                    resting: 0,
                    fills,
                    book_full: false,
                    fills_capped: check == Fillable::OverFillCap,
                };
            }
        }
        let (remaining, fills_capped) =
            self.take(order.side, order.limit, order.quantity, &mut fills);
        let filled = order.quantity - remaining;
        let (status, resting, book_full) = match (remaining, order.limit, order.tif) {
            (0, _, _) => (Status::Filled, 0, false),
            // `fills_capped` implies a fill (max_fills >= 1), so never NEW or REJECTED.
            _ if fills_capped => (Status::PartiallyFilledCancelled, 0, false),
            (_, Some(price), TimeInForce::Rod) if self.resting < self.max_resting => {
                self.rest(order.side, price, order.id, remaining);
                let status = if filled == 0 {
                    Status::New
                } else {
                    Status::PartiallyFilled
                };
                (status, remaining, false)
            }
            (_, Some(_), TimeInForce::Rod) => {
                let status = if filled == 0 {
                    Status::Rejected
                } else {
                    Status::PartiallyFilledCancelled
                };
                (status, 0, true)
            }
            _ if filled == 0 => (Status::Cancelled, 0, false),
            _ => (Status::PartiallyFilledCancelled, 0, false),
        };
        Outcome {
            status,
            filled,
            resting,
            fills,
            book_full,
            fills_capped,
        }
    }

    /// Removes every resting order (used by `POST /stats/reset`).
    pub fn clear(&mut self) {
        self.bids.clear();
        self.asks.clear();
        self.resting = 0;
    }

    /// Whether `quantity` shares cross `limit` on the opposite side within `max_fills`
    /// fills. Reads one running total per level, only for the levels the fill would reach.
    fn can_fill(&self, side: Side, limit: Option<Ticks>, quantity: u64) -> Fillable {
        match side {
            Side::Buy => enough(self.asks.iter(), side, limit, quantity, self.max_fills),
            Side::Sell => enough(
                self.bids.iter().rev(),
                side,
                limit,
                quantity,
                self.max_fills,
            ),
        }
    }

    /// Executes against the best opposite levels while they cross, at most `max_fills`
    /// times; returns the unfilled rest and whether `max_fills` stopped it before a
    /// crossing order.
    fn take(
        &mut self,
        side: Side,
        limit: Option<Ticks>,
        mut remaining: u64,
        fills: &mut Vec<Fill>,
    ) -> (u64, bool) {
        let max_fills = self.max_fills;
        let mut capped = false;
        while remaining > 0 && !capped {
            let best = match side {
                Side::Buy => self.asks.first_entry(),
                Side::Sell => self.bids.last_entry(),
            };
            let Some(mut level) = best else { break };
            let price = *level.key();
            if !crosses(side, limit, price) {
                break;
            }
            let queue = level.get_mut();
            while remaining > 0 {
                let Some(front) = queue.orders.front_mut() else {
                    break;
                };
                if fills.len() >= max_fills {
                    capped = true;
                    break;
                }
                let quantity = front.quantity.min(remaining);
                front.quantity -= quantity;
                queue.total -= quantity;
                remaining -= quantity;
                fills.push(Fill {
                    price,
                    quantity,
                    counter_order_id: front.id,
                });
                if front.quantity == 0 {
                    queue.orders.pop_front();
                    self.resting -= 1;
                }
            }
            if queue.orders.is_empty() {
                let emptied = level.remove();
                if self.spare.len() < SPARE_LEVELS {
                    self.spare.push(emptied);
                }
            }
        }
        (remaining, capped)
    }

    /// Appends an order to the back of its price level (time priority).
    fn rest(&mut self, side: Side, price: Ticks, id: OrderId, quantity: u64) {
        let levels = match side {
            Side::Buy => &mut self.bids,
            Side::Sell => &mut self.asks,
        };
        let spare = &mut self.spare;
        let level = levels
            .entry(price)
            .or_insert_with(|| spare.pop().unwrap_or_default());
        level.orders.push_back(Resting { id, quantity });
        level.total += quantity;
        self.resting += 1;
    }
}

/// The FOK check's answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fillable {
    /// The whole quantity fills within `max_fills` fills.
    Yes,
    /// The crossing liquidity is short of the quantity.
    No,
    /// Filling the quantity would take more than `max_fills` resting orders.
    OverFillCap,
}

/// Whether the crossing levels of `levels` (in priority order) hold `quantity` shares in
/// at most `max_fills` orders. Levels taken whole count their queue's length; the last
/// level's orders are counted one by one, at most `max_fills` of them.
fn enough<'a>(
    levels: impl Iterator<Item = (&'a Ticks, &'a Level)>,
    side: Side,
    limit: Option<Ticks>,
    quantity: u64,
    max_fills: usize,
) -> Fillable {
    let mut available = 0u64;
    let mut orders = 0usize;
    for (&price, level) in levels {
        if !crosses(side, limit, price) {
            return Fillable::No;
        }
        if available + level.total < quantity {
            available += level.total;
            orders += level.orders.len();
            if orders > max_fills {
                return Fillable::OverFillCap;
            }
            continue;
        }
        for resting in &level.orders {
            orders += 1;
            if orders > max_fills {
                return Fillable::OverFillCap;
            }
            available += resting.quantity;
            if available >= quantity {
                return Fillable::Yes;
            }
        }
    }
    Fillable::No
}

/// Whether an order on `side` with `limit` may trade at a resting `price`.
fn crosses(side: Side, limit: Option<Ticks>, price: Ticks) -> bool {
    match (side, limit) {
        (_, None) => true,
        (Side::Buy, Some(limit)) => price <= limit,
        (Side::Sell, Some(limit)) => price >= limit,
    }
}

#[cfg(test)]
#[path = "book_tests.rs"]
mod tests;
