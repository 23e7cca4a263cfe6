//! Fuzzing the order parser (server/README.md, "Fuzzing"): arbitrary bytes, token soup,
//! and structured edits of valid orders, starting from the seed corpus in
//! server/fuzz/corpus/order. Every body must hold `check`:
//!
//! - no panic (proptest turns one into a failure);
//! - the fast path reads exactly what the serde path reads, or declines;
//! - `order::parse` agrees with `reference::judge`: accepted with the same values, or
//!   refused with the same status, naming a field the reference finds wrong;
//! - an error names a field (in `field` and in its message) or the body.

use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::select;
use proptest::test_runner::{Config, TestCaseError, TestRunner};

use super::fuzz_gen::{self, Members};
use super::reference::{self, Expected, Price, Verdict};
use super::{fast, read_serde};
use crate::book::{Side, TimeInForce};
use crate::error::ApiError;
use crate::order::{self, MarketType, Order, OrderType, PriceType};

#[path = "../../../fuzz/harness.rs"]
mod harness;

use harness::{corpus, fuzz, Bytes};

/// Cases per fuzz test in a plain `cargo test`: well under a second each.
const CASES: u32 = 3_000;

fn check(body: &[u8]) -> Result<(), TestCaseError> {
    if let Some(raw) = fast::read(body) {
        let serde = read_serde(body);
        prop_assert!(
            serde.as_ref() == Ok(&raw),
            "the fast path read {raw:?}, the serde path {serde:?}"
        );
    }
    let parsed = order::parse(body);
    let verdict = reference::judge(body);
    match (&parsed, &verdict) {
        (Ok(order), Verdict::Accept(want)) => same_order(order, want)?,
        (Err(err), Verdict::Accept(want)) => prop_assert!(
            matches!(want.price, Price::Either(_)) && err.field == Some("price"),
            "refused a valid order: {err:?}, expected {want:?}"
        ),
        (Ok(order), verdict) => {
            return Err(TestCaseError::fail(format!(
                "accepted {order:?}; the reference: {verdict:?}"
            )))
        }
        (Err(err), Verdict::Reject(status, fields)) => {
            prop_assert_eq!(err.status.as_u16(), *status, "{:?} vs {:?}", err, verdict);
            match err.field {
                None => prop_assert!(fields.is_empty(), "{err:?} names no field of {fields:?}"),
                Some(field) => prop_assert!(
                    fields.contains(&field),
                    "{err:?} names {field}; wrong fields: {fields:?}"
                ),
            }
        }
        (Err(err), Verdict::RejectAnyField) => {
            prop_assert_eq!(err.status.as_u16(), 422, "{:?}", err)
        }
    }
    if let Err(err) = &parsed {
        names_a_field_or_the_body(err)?;
    }
    Ok(())
}

fn names_a_field_or_the_body(err: &ApiError) -> Result<(), TestCaseError> {
    match err.field {
        Some(field) => prop_assert!(err.message.contains(field), "{err:?}"),
        None => prop_assert!(
            err.message.contains("body") || err.message.contains("JSON"),
            "{err:?}"
        ),
    }
    Ok(())
}

fn same_order(order: &Order<'_>, want: &Expected) -> Result<(), TestCaseError> {
    // Spelled out here, not taken from the parser's table: the oracle must not share it.
    let side = match order.side {
        Side::Buy => "buy",
        Side::Sell => "sell",
    };
    let market_type = match order.market_type {
        MarketType::Common => "common",
        MarketType::Odd => "odd",
        MarketType::Fixed => "fixed",
    };
    let price_type = match order.price_type {
        PriceType::Limit => "limit",
        PriceType::Market => "market",
    };
    let time_in_force = match order.time_in_force {
        TimeInForce::Rod => "rod",
        TimeInForce::Ioc => "ioc",
        TimeInForce::Fok => "fok",
    };
    let order_type = match order.order_type {
        OrderType::Stock => "stock",
        OrderType::Margin => "margin",
        OrderType::Short => "short",
    };
    let ticks = match want.price {
        Price::Ticks(t) | Price::Either(t) => t,
        Price::Invalid => unreachable!("an accepted order has a price"),
    };
    let got = (
        side,
        order.symbol,
        order.price,
        order.quantity,
        (market_type, price_type, time_in_force, order_type),
        &*order.client_timestamp,
    );
    let expected = (
        want.buy_sell.as_str(),
        want.symbol,
        ticks,
        want.quantity,
        (
            want.market_type.as_str(),
            want.price_type.as_str(),
            want.time_in_force.as_str(),
            want.order_type.as_str(),
        ),
        want.client_timestamp.as_str(),
    );
    prop_assert_eq!(got, expected);
    let time = chrono::DateTime::parse_from_rfc3339(&want.client_timestamp);
    prop_assert_eq!(Ok(order.client_time), time);
    Ok(())
}

/// The corpus bodies, for proptest to start from and for the seed pass.
fn order_corpus() -> Vec<(String, Bytes)> {
    corpus("order")
        .into_iter()
        .map(|(name, bytes)| (name, Bytes(bytes)))
        .collect()
}

/// The corpus bodies that are JSON objects, as members to edit.
fn corpus_members() -> Vec<Members> {
    order_corpus()
        .into_iter()
        .filter_map(|(_, Bytes(body))| {
            let map: serde_json::Map<String, serde_json::Value> =
                serde_json::from_slice(&body).ok()?;
            let members = map
                .iter()
                .map(|(k, v)| (fuzz_gen::json_str(k), v.to_string()))
                .collect();
            Some(members)
        })
        .collect()
}

#[test]
fn the_corpus_files_are_what_their_names_say() {
    for (name, Bytes(body)) in order_corpus() {
        let parsed = order::parse(&body);
        if name.starts_with("valid-") {
            assert!(parsed.is_ok(), "{name}: {parsed:?}");
        } else {
            assert!(name.starts_with("bad-"), "{name}: name it valid-* or bad-*");
            assert!(parsed.is_err(), "{name} was accepted: {parsed:?}");
        }
    }
}

#[test]
fn fuzz_order_bytes() {
    let corpus = order_corpus();
    let files: Vec<Vec<u8>> = corpus.iter().map(|(_, b)| b.0.clone()).collect();
    let tokens = select(
        &[
            "{",
            "}",
            "[",
            "]",
            ":",
            ",",
            " ",
            "\"buy_sell\"",
            "\"symbol\"",
            "\"price\"",
            "\"quantity\"",
            "\"user_def\"",
            "\"client_timestamp\"",
            "\"buy\"",
            "\"market\"",
            "1301",
            "100.05",
            "-1",
            "1e999",
            "0",
            "null",
            "true",
            "\"\\u00e9\"",
            "\"\\ud800\"",
            "\"2026-11-22T10:00:00Z\"",
            "\"",
        ][..],
    );
    let strategy = prop_oneof![
        // Anything at all.
        vec(any::<u8>(), 0..300).prop_map(Bytes),
        // JSON-shaped token soup.
        vec(tokens, 0..40).prop_map(|t| Bytes(t.concat().into_bytes())),
        // A corpus file, edited byte by byte.
        (select(files), vec(fuzz_gen::byte_edit(), 1..6)).prop_map(|(mut body, edits)| {
            for edit in &edits {
                fuzz_gen::apply_bytes(&mut body, edit);
            }
            Bytes(body)
        }),
    ];
    fuzz("order_bytes", CASES, corpus, strategy, |Bytes(body)| {
        check(&body)
    });
}

#[test]
fn fuzz_order_edits() {
    let bases = prop_oneof![
        3 => fuzz_gen::valid_order(),
        1 => select(corpus_members()),
    ];
    let strategy = (
        bases,
        vec(fuzz_gen::edit(), 0..4),
        fuzz_gen::space(),
        prop::option::weighted(0.1, fuzz_gen::byte_edit()),
    )
        .prop_map(|(mut members, edits, space, byte_edit)| {
            for edit in &edits {
                fuzz_gen::apply(&mut members, edit);
            }
            let mut body = fuzz_gen::render(&members, space);
            if let Some(edit) = byte_edit {
                fuzz_gen::apply_bytes(&mut body, &edit);
            }
            Bytes(body)
        });
    fuzz("order_edits", CASES, vec![], strategy, |Bytes(body)| {
        check(&body)
    });
}

#[test]
fn generated_valid_orders_are_accepted() {
    // The generator's own check, a fixed number of cases (not a fuzz target): with no
    // edits and JSON's own whitespace, every order is valid to the reference and the
    // server alike (`check` then compares the values).
    let spaces = select(&["", " ", "\n", "\t", "\r\n  "][..]);
    let mut runner = TestRunner::new(Config {
        cases: 500,
        failure_persistence: None,
        ..Config::default()
    });
    let result = runner.run(&(fuzz_gen::valid_order(), spaces), |(members, space)| {
        let body = fuzz_gen::render(&members, space);
        let verdict = reference::judge(&body);
        prop_assert!(
            matches!(verdict, Verdict::Accept(_)),
            "{:?}: {verdict:?}",
            Bytes(body.clone())
        );
        prop_assert!(order::parse(&body).is_ok());
        check(&body)
    });
    if let Err(err) = result {
        panic!("{err}");
    }
}
