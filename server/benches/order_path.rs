//! Criterion benches of the order path: parse + validate, the book at several depths, and
//! the whole handler through tower without a socket.
//!
//! `cargo bench -p hft-server` (add `-- --warm-up-time 1 --measurement-time 2` for a
//! quick run).

use std::hint::black_box;
use std::sync::Arc;

use axum::body::Body;
use axum::http::Request;
use chrono::Utc;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use hft_server::book::{Book, Fill, Incoming, Outcome, Side, Status, TimeInForce};
use hft_server::engine::Execution;
use hft_server::{order, reply, router, Config, OrderService};
use http_body_util::BodyExt;
use tower::ServiceExt;

const ORDER: &str = r#"{"buy_sell":"sell","symbol":1301,"price":100.05,"quantity":200,"market_type":"common","price_type":"limit","time_in_force":"rod","order_type":"stock","user_def":"hftbench","client_timestamp":"2026-11-22T10:00:00.123456Z"}"#;

/// Mid price in ticks; the book holds `depth` bids below it and `depth` asks above it,
/// one order per level, two ticks apart (so a new level fits between any two).
const MID: u64 = 1_000_000;

fn book_with_depth(depth: u64) -> Book {
    let mut book = Book::new(usize::MAX);
    for i in 0..depth {
        for (side, price) in [
            (Side::Buy, MID - 2 * (i + 1)),
            (Side::Sell, MID + 2 * (i + 1)),
        ] {
            book.submit(Incoming {
                id: i,
                side,
                limit: Some(price),
                quantity: 100,
                tif: TimeInForce::Rod,
            });
        }
    }
    book
}

fn limit(id: u64, side: Side, price: u64, quantity: u64, tif: TimeInForce) -> Incoming {
    Incoming {
        id,
        side,
        limit: Some(price),
        quantity,
        tif,
    }
}

fn parse(c: &mut Criterion) {
    let mut group = c.benchmark_group("order");
    group.throughput(Throughput::Elements(1));
    group.bench_function("parse_validate", |b| {
        b.iter(|| order::parse(black_box(ORDER.as_bytes())).unwrap())
    });
    // The reply of an order that filled against one resting order.
    let parsed = order::parse(ORDER.as_bytes()).unwrap();
    let execution = Execution {
        order_id: 42,
        outcome: Outcome {
            status: Status::Filled,
            filled: 200,
            resting: 0,
            fills: vec![Fill {
                price: 10_005,
                quantity: 200,
                counter_order_id: 17,
            }],
            book_full: false,
            fills_capped: false,
        },
        reject: None,
    };
    let now = Utc::now();
    group.bench_function("reply", |b| {
        b.iter(|| reply::order_reply(black_box(&parsed), black_box(&execution), now))
    });
    // Parse, match and reply without HTTP: a resting sell and the buy that takes it.
    let state = OrderService::new(&Config::default());
    let take = ORDER
        .replace("\"sell\"", "\"buy\"")
        .replace("\"rod\"", "\"ioc\"");
    group.throughput(Throughput::Elements(2));
    group.bench_function("place_pair", |b| {
        b.iter(|| {
            black_box(state.place_order(ORDER.as_bytes()).unwrap());
            black_box(state.place_order(take.as_bytes()).unwrap())
        })
    });
    group.finish();
}

fn book(c: &mut Criterion) {
    let mut group = c.benchmark_group("book");
    group.throughput(Throughput::Elements(1));
    for depth in [10u64, 100, 1_000, 10_000] {
        // Insert: a buy rests on a new level mid-way down the bids, then an IOC sell
        // takes it at exactly that price; the book is back to its starting state.
        let mut b1 = book_with_depth(depth);
        let level = MID - 2 * (depth / 2) - 1;
        group.bench_with_input(
            BenchmarkId::new("insert_then_take", depth),
            &depth,
            |b, _| {
                b.iter(|| {
                    b1.submit(black_box(limit(1, Side::Buy, level, 100, TimeInForce::Rod)));
                    b1.submit(black_box(limit(
                        2,
                        Side::Sell,
                        level,
                        100,
                        TimeInForce::Ioc,
                    )))
                })
            },
        );
        // Match: an IOC buy fills the whole best ask, which a ROD sell then replenishes.
        let mut b2 = book_with_depth(depth);
        group.bench_with_input(
            BenchmarkId::new("match_then_refill", depth),
            &depth,
            |b, _| {
                b.iter(|| {
                    b2.submit(black_box(limit(
                        3,
                        Side::Buy,
                        MID + 2,
                        100,
                        TimeInForce::Ioc,
                    )));
                    b2.submit(black_box(limit(
                        4,
                        Side::Sell,
                        MID + 2,
                        100,
                        TimeInForce::Rod,
                    )))
                })
            },
        );
        // FOK sweep: checks then takes 5 levels, which are put back.
        let mut b3 = book_with_depth(depth.max(5));
        group.bench_with_input(
            BenchmarkId::new("fok_sweep_5_levels", depth),
            &depth,
            |b, _| {
                b.iter(|| {
                    let out = b3.submit(black_box(limit(
                        5,
                        Side::Buy,
                        MID + 10,
                        500,
                        TimeInForce::Fok,
                    )));
                    for fill in &out.fills {
                        b3.submit(limit(
                            6,
                            Side::Sell,
                            fill.price,
                            fill.quantity,
                            TimeInForce::Rod,
                        ));
                    }
                    out
                })
            },
        );
    }
    group.finish();
}

fn handler(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let app = router(Arc::new(OrderService::new(&Config::default())), None);
    let mut group = c.benchmark_group("handler");
    group.throughput(Throughput::Elements(1));
    // Two orders per iteration, a resting sell and the buy that takes it, so the book
    // stays the same size however long criterion runs. Time is per pair.
    let take = ORDER
        .replace("\"sell\"", "\"buy\"")
        .replace("\"rod\"", "\"ioc\"");
    group.throughput(Throughput::Elements(2));
    group.bench_function("post_order_pair_oneshot", |b| {
        b.iter(|| {
            runtime.block_on(async {
                for body in [ORDER, take.as_str()] {
                    let request = Request::post("/order")
                        .header("content-type", "application/json")
                        .body(Body::from(body.to_owned()))
                        .unwrap();
                    let response = app.clone().oneshot(request).await.unwrap();
                    assert_eq!(response.status(), 200);
                    black_box(response.into_body().collect().await.unwrap().to_bytes());
                }
            })
        })
    });
    group.throughput(Throughput::Elements(1));
    group.bench_function("health_oneshot", |b| {
        b.iter(|| {
            runtime.block_on(async {
                let request = Request::get("/health").body(Body::empty()).unwrap();
                let response = app.clone().oneshot(request).await.unwrap();
                response.into_body().collect().await.unwrap().to_bytes()
            })
        })
    });
    group.finish();
}

criterion_group!(benches, parse, book, handler);
criterion_main!(benches);
