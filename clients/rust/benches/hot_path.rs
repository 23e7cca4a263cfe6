//! The per-request work of the client that is ours, not reqwest's: deriving order k,
//! writing its JSON body into the reused buffer, and recording one latency.
use std::hint::black_box;
use std::time::SystemTime;

use bytes::BytesMut;
use criterion::{criterion_group, criterion_main, Criterion};
use hft_client_rust::order::{write_body, Order};
use hft_client_rust::stats::new_histogram;

fn order_body(c: &mut Criterion) {
    let mut buf = BytesMut::with_capacity(512);
    let mut k = 0u64;
    c.bench_function("order_body (nth + write_body + timestamp)", |b| {
        b.iter(|| {
            buf.clear();
            k = k.wrapping_add(1);
            write_body(&mut buf, &Order::nth(black_box(42), k), SystemTime::now());
            black_box(buf.len())
        })
    });
}

fn histogram_record(c: &mut Criterion) {
    let mut h = new_histogram();
    let mut v = 12_345u64;
    c.bench_function("histogram_record (1 ns..60 s, 3 digits)", |b| {
        b.iter(|| {
            // Spread values over µs..ms like real latencies.
            v = (v.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1) >> 40) + 1_000;
            h.saturating_record(black_box(v));
        })
    });
}

criterion_group!(benches, order_body, histogram_record);
criterion_main!(benches);
