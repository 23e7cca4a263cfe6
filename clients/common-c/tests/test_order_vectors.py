"""The C order stream (hb_order) reproduces every vector of bench-config/testdata/order-stream.json."""

import json
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
VECTORS = json.loads((ROOT / "bench-config" / "testdata" / "order-stream.json").read_text())
FIELDS = ["buy_sell", "symbol", "quantity", "price_type", "time_in_force"]


@pytest.mark.parametrize("case", VECTORS["cases"], ids=lambda c: f"seed-{c['seed']}")
def test_every_vector_of_the_seed(hb_print, case):
    ks = [str(o["k"]) for o in case["orders"]]
    out = subprocess.run([hb_print, "orders", case["seed"], *ks], check=True, capture_output=True, text=True)
    lines = out.stdout.splitlines()
    assert len(lines) == len(case["orders"])
    for want, line in zip(case["orders"], lines, strict=True):
        x, body = line.split(" ", 1)
        got = json.loads(body)
        assert x == want["x"], f"k={want['k']}"
        assert {f: got[f] for f in FIELDS} == {f: want[f] for f in FIELDS}, f"k={want['k']}"
        # The price is compared as the exact text sent: two decimals, no float rounding.
        assert re.search(r'"price":([0-9.]+),', body).group(1) == want["price"], f"k={want['k']}"
        assert list(got) == [
            "buy_sell",
            "symbol",
            "price",
            "quantity",
            "market_type",
            "price_type",
            "time_in_force",
            "order_type",
            "user_def",
            "client_timestamp",
        ]
        assert (got["market_type"], got["order_type"], got["user_def"]) == ("common", "stock", "hftbench")
