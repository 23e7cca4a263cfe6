//! The matching engine: one `Book` per symbol, each behind its own mutex, so orders for
//! different symbols never wait for each other.
//!
//! Books are created on first use, up to `max_symbols`; that cap and the per-book cap on
//! resting orders bound memory however long the server runs.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};

use parking_lot::{Mutex, RwLock};

use crate::book::{Book, Incoming, OrderId, Outcome, Side, Status, Ticks, TimeInForce};

/// Why an order was refused without trading.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RejectReason {
    /// The symbol's book holds `--max-resting-per-symbol` orders.
    BookFull { cap: usize },
    /// A new symbol would exceed `--max-symbols` books.
    TooManySymbols { cap: usize },
    /// The order traded with `--max-fills-per-order` resting orders and crossing ones were
    /// left: the rest of its quantity was cancelled.
    FillsCapped { cap: usize },
    /// A FOK order would need more than `--max-fills-per-order` fills: nothing traded.
    FokOverFillCap { cap: usize },
}

impl RejectReason {
    /// The `reason` text of the reply.
    pub fn describe(self, symbol: u32) -> String {
        match self {
            RejectReason::BookFull { cap } => format!(
                "book for symbol {symbol} holds {cap} resting orders, the --max-resting-per-symbol cap"
            ),
            RejectReason::TooManySymbols { cap } => format!(
                "symbol {symbol} would be book number {}, over the --max-symbols cap of {cap}",
                cap + 1
            ),
            RejectReason::FillsCapped { cap } => format!(
                "order traded with {cap} resting orders, the --max-fills-per-order cap; the rest of its quantity was cancelled"
            ),
            RejectReason::FokOverFillCap { cap } => format!(
                "fill-or-kill order would trade with more than {cap} resting orders, the --max-fills-per-order cap; nothing was traded"
            ),
        }
    }
}

/// The engine's answer to one order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Execution {
    /// The id assigned to the order (also to rejected ones).
    pub order_id: OrderId,
    /// Status, fills and the resting quantity.
    pub outcome: Outcome,
    /// Set when the order (or its remainder) was refused by a cap.
    pub reject: Option<RejectReason>,
}

/// All books plus the order-id sequence.
pub struct Engine {
    /// Symbol → book. Read-locked per order; write-locked only to add a symbol or reset.
    books: RwLock<HashMap<u32, Mutex<Book>>>,
    /// Last id handed out; ids start at 1 and only grow, across resets too.
    last_id: AtomicU64,
    /// Cap on resting orders per book (`--max-resting-per-symbol`).
    max_resting_per_symbol: usize,
    /// Cap on the number of books (`--max-symbols`).
    max_symbols: usize,
    /// Cap on the fills of one order (`--max-fills-per-order`), handed to every book.
    max_fills: usize,
}

impl Engine {
    pub fn new(max_resting_per_symbol: usize, max_symbols: usize, max_fills: usize) -> Self {
        Engine {
            books: RwLock::new(HashMap::new()),
            last_id: AtomicU64::new(0),
            max_resting_per_symbol,
            max_symbols,
            max_fills,
        }
    }

    /// Assigns an id and matches the order in its symbol's book.
    pub fn submit(
        &self,
        symbol: u32,
        side: Side,
        limit: Option<Ticks>,
        quantity: u64,
        tif: TimeInForce,
    ) -> Execution {
        let id = self.last_id.fetch_add(1, Ordering::Relaxed) + 1;
        let order = Incoming {
            id,
            side,
            limit,
            quantity,
            tif,
        };
        let outcome = {
            let books = self.books.read();
            match books.get(&symbol) {
                Some(book) => book.lock().submit(order),
                None => {
                    drop(books);
                    match self.submit_new_symbol(symbol, order) {
                        Some(outcome) => outcome,
                        None => {
                            return Execution {
                                order_id: id,
                                outcome: refused(),
                                reject: Some(RejectReason::TooManySymbols {
                                    cap: self.max_symbols,
                                }),
                            }
                        }
                    }
                }
            }
        };
        let reject = match (outcome.book_full, outcome.fills_capped, tif) {
            (true, _, _) => Some(RejectReason::BookFull {
                cap: self.max_resting_per_symbol,
            }),
            (_, true, TimeInForce::Fok) => Some(RejectReason::FokOverFillCap {
                cap: self.max_fills,
            }),
            (_, true, _) => Some(RejectReason::FillsCapped {
                cap: self.max_fills,
            }),
            _ => None,
        };
        Execution {
            order_id: id,
            outcome,
            reject,
        }
    }

    /// Slow path: creates the book (another thread may have just done so), then submits.
    /// `None` when the symbol cap is reached.
    fn submit_new_symbol(&self, symbol: u32, order: Incoming) -> Option<Outcome> {
        let mut books = self.books.write();
        if !books.contains_key(&symbol) && books.len() >= self.max_symbols {
            return None;
        }
        let book = books.entry(symbol).or_insert_with(|| {
            Mutex::new(Book::with_max_fills(
                self.max_resting_per_symbol,
                self.max_fills,
            ))
        });
        Some(book.get_mut().submit(order))
    }

    /// Empties every book (ids keep growing).
    pub fn clear(&self) {
        self.books.write().clear();
    }

    /// Resting orders over all books.
    pub fn resting_orders(&self) -> usize {
        self.books
            .read()
            .values()
            .map(|b| b.lock().resting_orders())
            .sum()
    }

    /// Books in use.
    pub fn symbols(&self) -> usize {
        self.books.read().len()
    }
}

/// The outcome of an order refused before it reached a book.
fn refused() -> Outcome {
    Outcome {
        status: Status::Rejected,
        filled: 0,
        resting: 0,
        fills: Vec::new(),
        book_full: false,
        fills_capped: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_increase_and_books_are_per_symbol() {
        let engine = Engine::new(10, 10, 1_000);
        let a = engine.submit(1, Side::Buy, Some(100), 10, TimeInForce::Rod);
        let b = engine.submit(2, Side::Sell, Some(100), 10, TimeInForce::Rod);
        assert_eq!((a.order_id, b.order_id), (1, 2));
        // Different symbols: no cross.
        assert_eq!(b.outcome.status, Status::New);
        let c = engine.submit(1, Side::Sell, Some(100), 10, TimeInForce::Rod);
        assert_eq!(c.outcome.status, Status::Filled);
        assert_eq!(c.outcome.fills[0].counter_order_id, 1);
        assert_eq!(engine.symbols(), 2);
        assert_eq!(engine.resting_orders(), 1);
    }

    #[test]
    fn book_cap_is_reported_with_its_value() {
        let engine = Engine::new(1, 10, 1_000);
        engine.submit(7, Side::Buy, Some(100), 10, TimeInForce::Rod);
        let out = engine.submit(7, Side::Buy, Some(99), 10, TimeInForce::Rod);
        assert_eq!(out.outcome.status, Status::Rejected);
        assert_eq!(out.reject, Some(RejectReason::BookFull { cap: 1 }));
        assert!(out
            .reject
            .unwrap()
            .describe(7)
            .contains("--max-resting-per-symbol"));
    }

    #[test]
    fn symbol_cap_rejects_new_symbols_only() {
        let engine = Engine::new(10, 1, 1_000);
        engine.submit(1, Side::Buy, Some(100), 10, TimeInForce::Rod);
        let out = engine.submit(2, Side::Buy, Some(100), 10, TimeInForce::Rod);
        assert_eq!(out.reject, Some(RejectReason::TooManySymbols { cap: 1 }));
        assert_eq!(out.outcome.status, Status::Rejected);
        let same = engine.submit(1, Side::Buy, Some(99), 10, TimeInForce::Rod);
        assert_eq!(same.reject, None);
    }

    #[test]
    fn fill_cap_is_reported_by_time_in_force() {
        let engine = Engine::new(10, 10, 2);
        for price in [100, 101, 102] {
            engine.submit(3, Side::Sell, Some(price), 10, TimeInForce::Rod);
        }
        let fok = engine.submit(3, Side::Buy, None, 30, TimeInForce::Fok);
        assert_eq!(fok.reject, Some(RejectReason::FokOverFillCap { cap: 2 }));
        assert_eq!(fok.outcome.status, Status::Cancelled);
        let rod = engine.submit(3, Side::Buy, Some(102), 30, TimeInForce::Rod);
        assert_eq!(rod.reject, Some(RejectReason::FillsCapped { cap: 2 }));
        assert_eq!(rod.outcome.filled, 20);
        assert!(rod
            .reject
            .unwrap()
            .describe(3)
            .contains("--max-fills-per-order"));
    }

    #[test]
    fn clear_empties_books_but_ids_keep_growing() {
        let engine = Engine::new(10, 10, 1_000);
        engine.submit(1, Side::Buy, Some(100), 10, TimeInForce::Rod);
        engine.clear();
        assert_eq!(engine.resting_orders(), 0);
        let next = engine.submit(1, Side::Sell, Some(100), 10, TimeInForce::Rod);
        assert_eq!(next.order_id, 2);
        assert_eq!(next.outcome.status, Status::New);
    }
}
