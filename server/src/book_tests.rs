use super::*;

fn order(
    id: OrderId,
    side: Side,
    limit: Option<Ticks>,
    quantity: u64,
    tif: TimeInForce,
) -> Incoming {
    Incoming {
        id,
        side,
        limit,
        quantity,
        tif,
    }
}

fn rod(id: OrderId, side: Side, price: Ticks, quantity: u64) -> Incoming {
    order(id, side, Some(price), quantity, TimeInForce::Rod)
}

fn fill(price: Ticks, quantity: u64, counter_order_id: OrderId) -> Fill {
    Fill {
        price,
        quantity,
        counter_order_id,
    }
}

#[test]
fn non_crossing_rod_orders_rest_as_new() {
    let mut book = Book::new(100);
    let bid = book.submit(rod(1, Side::Buy, 9_990, 100));
    let ask = book.submit(rod(2, Side::Sell, 10_010, 200));
    assert_eq!(bid.status, Status::New);
    assert_eq!((bid.filled, bid.resting), (0, 100));
    assert_eq!(ask.status, Status::New);
    assert_eq!(book.resting_orders(), 2);
    assert_eq!(book.best_bid_ask(), (Some(9_990), Some(10_010)));
}

#[test]
fn better_price_matches_first_then_earlier_order_at_same_price() {
    let mut book = Book::new(100);
    book.submit(rod(1, Side::Sell, 10_010, 100));
    book.submit(rod(2, Side::Sell, 10_000, 100)); // better price, later
    book.submit(rod(3, Side::Sell, 10_000, 100)); // same price, even later
    let out = book.submit(rod(4, Side::Buy, 10_010, 250));
    assert_eq!(out.status, Status::Filled);
    assert_eq!(
        out.fills,
        vec![
            fill(10_000, 100, 2),
            fill(10_000, 100, 3),
            fill(10_010, 50, 1)
        ]
    );
    assert_eq!(book.resting_orders(), 1);
    assert_eq!(book.best_bid_ask(), (None, Some(10_010)));
}

#[test]
fn sell_matches_highest_bid_first_at_the_makers_price() {
    let mut book = Book::new(100);
    book.submit(rod(1, Side::Buy, 9_990, 100));
    book.submit(rod(2, Side::Buy, 10_000, 100));
    let out = book.submit(rod(3, Side::Sell, 9_950, 150));
    assert_eq!(out.fills, vec![fill(10_000, 100, 2), fill(9_990, 50, 1)]);
    assert_eq!(out.status, Status::Filled);
}

#[test]
fn limit_price_stops_matching_and_rod_remainder_rests() {
    let mut book = Book::new(100);
    book.submit(rod(1, Side::Sell, 10_000, 100));
    book.submit(rod(2, Side::Sell, 10_020, 100));
    let out = book.submit(rod(3, Side::Buy, 10_010, 300));
    assert_eq!(out.status, Status::PartiallyFilled);
    assert_eq!((out.filled, out.resting), (100, 200));
    assert_eq!(out.fills, vec![fill(10_000, 100, 1)]);
    assert_eq!(book.best_bid_ask(), (Some(10_010), Some(10_020)));
}

#[test]
fn partial_fill_of_a_resting_order_keeps_its_place() {
    let mut book = Book::new(100);
    book.submit(rod(1, Side::Sell, 10_000, 300));
    book.submit(rod(2, Side::Sell, 10_000, 100));
    book.submit(rod(3, Side::Buy, 10_000, 100));
    let out = book.submit(rod(4, Side::Buy, 10_000, 300));
    assert_eq!(out.fills, vec![fill(10_000, 200, 1), fill(10_000, 100, 2)]);
    assert_eq!(book.resting_orders(), 0);
}

#[test]
fn ioc_fills_what_crosses_and_cancels_the_rest() {
    let mut book = Book::new(100);
    book.submit(rod(1, Side::Sell, 10_000, 100));
    let out = book.submit(order(2, Side::Buy, Some(10_000), 300, TimeInForce::Ioc));
    assert_eq!(out.status, Status::PartiallyFilledCancelled);
    assert_eq!((out.filled, out.resting), (100, 0));
    assert_eq!(book.resting_orders(), 0);

    let none = book.submit(order(3, Side::Buy, Some(10_000), 100, TimeInForce::Ioc));
    assert_eq!(none.status, Status::Cancelled);
    assert_eq!(book.resting_orders(), 0);
}

#[test]
fn fok_fills_completely_across_levels() {
    let mut book = Book::new(100);
    book.submit(rod(1, Side::Sell, 10_000, 100));
    book.submit(rod(2, Side::Sell, 10_005, 100));
    book.submit(rod(3, Side::Sell, 10_010, 100));
    let out = book.submit(order(4, Side::Buy, Some(10_010), 250, TimeInForce::Fok));
    assert_eq!(out.status, Status::Filled);
    assert_eq!(
        out.fills,
        vec![
            fill(10_000, 100, 1),
            fill(10_005, 100, 2),
            fill(10_010, 50, 3)
        ]
    );
}

#[test]
fn fok_that_cannot_fill_completely_leaves_the_book_untouched() {
    let mut book = Book::new(100);
    book.submit(rod(1, Side::Sell, 10_000, 100));
    book.submit(rod(2, Side::Sell, 10_005, 100));
    book.submit(rod(3, Side::Sell, 10_020, 500)); // beyond the limit: does not count
    let out = book.submit(order(4, Side::Buy, Some(10_010), 250, TimeInForce::Fok));
    assert_eq!(out.status, Status::Cancelled);
    assert!(out.fills.is_empty());
    assert_eq!(book.resting_orders(), 3);
    // The untouched liquidity is still there, in the same order.
    let next = book.submit(order(5, Side::Buy, Some(10_005), 200, TimeInForce::Fok));
    assert_eq!(next.fills, vec![fill(10_000, 100, 1), fill(10_005, 100, 2)]);
}

#[test]
fn market_order_ignores_price_and_never_rests() {
    let mut book = Book::new(100);
    book.submit(rod(1, Side::Buy, 9_000, 100));
    book.submit(rod(2, Side::Buy, 8_000, 100));
    let out = book.submit(order(3, Side::Sell, None, 300, TimeInForce::Rod));
    assert_eq!(out.status, Status::PartiallyFilledCancelled);
    assert_eq!(out.fills, vec![fill(9_000, 100, 1), fill(8_000, 100, 2)]);
    assert_eq!(out.resting, 0);
    assert_eq!(book.resting_orders(), 0);

    let empty = book.submit(order(4, Side::Buy, None, 100, TimeInForce::Ioc));
    assert_eq!(empty.status, Status::Cancelled);
}

#[test]
fn market_fok_is_all_or_nothing() {
    let mut book = Book::new(100);
    book.submit(rod(1, Side::Sell, 10_000, 100));
    let killed = book.submit(order(2, Side::Buy, None, 200, TimeInForce::Fok));
    assert_eq!(killed.status, Status::Cancelled);
    let filled = book.submit(order(3, Side::Buy, None, 100, TimeInForce::Fok));
    assert_eq!(filled.status, Status::Filled);
}

#[test]
fn full_book_rejects_a_rod_order_that_would_rest() {
    let mut book = Book::new(2);
    book.submit(rod(1, Side::Buy, 9_990, 100));
    book.submit(rod(2, Side::Sell, 10_010, 100));
    let out = book.submit(rod(3, Side::Buy, 9_980, 100));
    assert_eq!(out.status, Status::Rejected);
    assert!(out.book_full);
    assert_eq!(book.resting_orders(), 2);
    // Orders that do not need to rest still trade on a full book.
    let ioc = book.submit(order(4, Side::Buy, Some(10_010), 100, TimeInForce::Ioc));
    assert_eq!(ioc.status, Status::Filled);
    assert!(!ioc.book_full);
}

#[test]
fn fills_free_room_so_a_partly_filled_rod_order_rests_on_a_full_book() {
    // A remainder is left only after every crossing order was consumed, so a fill always
    // frees a slot: the cap refuses only orders that fill nothing.
    let mut book = Book::new(2);
    book.submit(rod(1, Side::Sell, 10_000, 100));
    book.submit(rod(2, Side::Sell, 10_050, 100));
    let out = book.submit(rod(3, Side::Buy, 10_000, 150));
    assert_eq!(out.status, Status::PartiallyFilled);
    assert_eq!((out.filled, out.resting), (100, 50));
    assert_eq!(book.resting_orders(), 2);
    let refused = book.submit(rod(4, Side::Sell, 10_060, 100));
    assert_eq!(refused.status, Status::Rejected);
}

#[test]
fn a_book_with_no_room_rejects_every_rod_order() {
    let mut book = Book::new(0);
    let out = book.submit(rod(1, Side::Sell, 10_000, 100));
    assert_eq!(out.status, Status::Rejected);
    assert!(out.book_full);
    assert_eq!(book.resting_orders(), 0);
}

#[test]
fn resting_count_follows_fills_and_clear() {
    let mut book = Book::new(100);
    for id in 0..10 {
        book.submit(rod(id, Side::Sell, 10_000 + id, 100));
    }
    assert_eq!(book.resting_orders(), 10);
    book.submit(order(10, Side::Buy, None, 450, TimeInForce::Ioc));
    assert_eq!(book.resting_orders(), 6);
    book.clear();
    assert_eq!(book.resting_orders(), 0);
    assert_eq!(book.best_bid_ask(), (None, None));
}

#[test]
fn status_names_are_the_documented_wire_values() {
    let names: Vec<_> = [
        Status::New,
        Status::PartiallyFilled,
        Status::Filled,
        Status::Cancelled,
        Status::PartiallyFilledCancelled,
        Status::Rejected,
    ]
    .iter()
    .map(|s| s.as_str())
    .collect();
    assert_eq!(
        names,
        [
            "NEW",
            "PARTIALLY_FILLED",
            "FILLED",
            "CANCELLED",
            "PARTIALLY_FILLED_CANCELLED",
            "REJECTED"
        ]
    );
}

#[test]
fn fok_sees_level_totals_after_partial_fills() {
    let mut book = Book::new(100);
    book.submit(rod(1, Side::Buy, 10_000, 300));
    book.submit(rod(2, Side::Buy, 10_000, 200));
    book.submit(order(3, Side::Sell, None, 350, TimeInForce::Ioc)); // 150 left at 10_000
    let too_much = book.submit(order(4, Side::Sell, Some(10_000), 151, TimeInForce::Fok));
    assert_eq!(too_much.status, Status::Cancelled);
    let exact = book.submit(order(5, Side::Sell, Some(10_000), 150, TimeInForce::Fok));
    assert_eq!(exact.status, Status::Filled);
    assert_eq!(exact.fills, vec![fill(10_000, 150, 2)]);
    assert_eq!(book.best_bid_ask(), (None, None));
    // The emptied level is reused with a fresh total.
    book.submit(rod(6, Side::Buy, 10_000, 100));
    let again = book.submit(order(7, Side::Sell, Some(10_000), 101, TimeInForce::Fok));
    assert_eq!(again.status, Status::Cancelled);
}

#[test]
fn fill_cap_cancels_the_remainder_whatever_the_time_in_force() {
    for tif in [TimeInForce::Rod, TimeInForce::Ioc] {
        let mut book = Book::with_max_fills(100, 3);
        for id in 1..=5 {
            book.submit(rod(id, Side::Sell, 10_000 + id, 10));
        }
        let out = book.submit(order(9, Side::Buy, Some(10_010), 45, tif));
        assert_eq!(out.fills.len(), 3, "{tif:?}");
        assert_eq!(out.status, Status::PartiallyFilledCancelled, "{tif:?}");
        assert_eq!((out.filled, out.resting), (30, 0));
        assert!(out.fills_capped);
        // A ROD remainder does not rest: at 100.10 it would cross the asks left.
        assert_eq!(book.best_bid_ask(), (None, Some(10_004)));
        assert_eq!(book.resting_orders(), 2);
    }
}

#[test]
fn fill_cap_is_not_reported_when_the_cap_is_reached_exactly() {
    let mut book = Book::with_max_fills(100, 2);
    book.submit(rod(1, Side::Sell, 10_000, 10));
    book.submit(rod(2, Side::Sell, 10_001, 10));
    book.submit(rod(3, Side::Sell, 10_050, 10));
    // Two fills, then the next ask does not cross: the limit stopped it, not the cap.
    let out = book.submit(rod(4, Side::Buy, 10_001, 30));
    assert_eq!(out.status, Status::PartiallyFilled);
    assert!(!out.fills_capped);
    assert_eq!((out.filled, out.resting), (20, 10));
    let market = book.submit(order(5, Side::Buy, None, 10, TimeInForce::Ioc));
    assert_eq!(market.status, Status::Filled);
    assert!(!market.fills_capped);
}

#[test]
fn fok_over_the_fill_cap_trades_nothing() {
    let mut book = Book::with_max_fills(100, 3);
    for id in 1..=2 {
        book.submit(rod(id, Side::Buy, 10_000, 10));
    }
    for id in 3..=5 {
        book.submit(rod(id, Side::Buy, 9_990, 10));
    }
    // 4 orders needed (two whole at 100.00, two of 99.90): over the cap of 3.
    let out = book.submit(order(6, Side::Sell, Some(9_990), 35, TimeInForce::Fok));
    assert_eq!(out.status, Status::Cancelled);
    assert!(out.fills_capped);
    assert_eq!(book.resting_orders(), 5);
    // 3 orders suffice: it fills; short of liquidity it is an uncapped cancel.
    let ok = book.submit(order(7, Side::Sell, Some(9_990), 25, TimeInForce::Fok));
    assert_eq!(
        (ok.status, ok.fills.len(), ok.fills_capped),
        (Status::Filled, 3, false)
    );
    let short = book.submit(order(8, Side::Sell, Some(9_990), 26, TimeInForce::Fok));
    assert_eq!(
        (short.status, short.fills_capped),
        (Status::Cancelled, false)
    );
}
