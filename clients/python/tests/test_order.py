"""The order stream against bench-config/testdata/order-stream.json, shared by every client."""

import json
import re
from pathlib import Path

import pytest
from hft_client.order import UtcStamp, encode_order, order_fields, stream_x

VECTORS = json.loads(
    (Path(__file__).resolve().parents[3] / "bench-config" / "testdata" / "order-stream.json").read_text()
)
CASES = [(int(c["seed"]), o) for c in VECTORS["cases"] for o in c["orders"]]


def test_there_are_vectors_for_several_seeds():
    assert len({seed for seed, _ in CASES}) >= 3
    assert len(CASES) >= 30


@pytest.mark.parametrize(("seed", "vec"), CASES, ids=lambda v: str(v["k"]) if isinstance(v, dict) else str(v))
def test_fields_match_the_vectors(seed, vec):
    assert f"{stream_x(seed, vec['k']):016x}" == vec["x"]
    got = order_fields(seed, vec["k"])
    for key in ("buy_sell", "symbol", "price", "quantity", "price_type", "time_in_force"):
        assert got[key] == vec[key], key


def test_body_is_compact_json_in_the_contract_key_order():
    body = encode_order(0, 0, "2026-11-22T10:00:00.123456Z")
    assert body == (
        b'{"buy_sell":"sell","symbol":1301,"price":100.05,"quantity":200,"market_type":"common",'
        b'"price_type":"limit","time_in_force":"rod","order_type":"stock","user_def":"hftbench",'
        b'"client_timestamp":"2026-11-22T10:00:00.123456Z"}'
    )


@pytest.mark.parametrize(("seed", "vec"), CASES[:14])
def test_body_parses_to_the_vector_fields(seed, vec):
    doc = json.loads(encode_order(seed, vec["k"], "2026-01-01T00:00:00.000000Z"))
    assert doc["symbol"] == vec["symbol"] and doc["quantity"] == vec["quantity"]
    assert f"{doc['price']:.2f}" == vec["price"]


def test_price_text_always_has_two_decimals_and_stays_in_band():
    prices = {order_fields(7, k)["price"] for k in range(2000)}
    assert all(re.fullmatch(r"\d+\.\d\d", p) for p in prices)
    assert min(prices, key=float) == "99.50" and max(prices, key=float) == "100.50"
    assert len(prices) == 21


def test_utc_stamp_formats_microseconds_and_caches_per_second():
    stamp = UtcStamp()
    # 2026-11-22T10:00:00Z = 1795341600 s since the epoch
    assert stamp.format_ns(1_795_341_600_123_456_789) == "2026-11-22T10:00:00.123456Z"
    assert stamp.format_ns(1_795_341_600_000_001_000) == "2026-11-22T10:00:00.000001Z"
    assert stamp.format_ns(1_795_341_601_999_999_999) == "2026-11-22T10:00:01.999999Z"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", stamp.now())
