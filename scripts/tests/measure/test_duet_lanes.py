"""The closed-loop duet's lanes (client-hft --connections C with --duet-url): latency-8c, the
concurrency series, on the real binaries through ab's rig.

A cost that appears only while several connections are open (hft-server
--inject-contention-us, a busy-wait under one server-wide lock) is what one connection cannot
see and eight can: these duet rounds put it on head and read both series."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hftbench.config import Scenario
from hftbench.design_names import DUET
from hftbench.measure.plan import Plan
from hftbench.measure.rig import Rig
from hftbench.measure.served import Served

BIN = Path(__file__).resolve().parents[3] / "bin"


def p50(run_path: Path, scenario: str) -> float:
    doc = json.loads((run_path / scenario / "hft.json").read_text())
    assert doc["errors"] == 0 and doc["ok"] == 3000, doc["error_kinds"]
    return doc["latency_us"]["p50"]


@pytest.mark.usefixtures("real_binaries")
def test_a_cost_only_under_concurrency_moves_the_eight_lanes_and_not_the_one(tmp_path):
    scenarios = [
        Scenario(name="latency-1c", orders=3000, connections=1, warmup=300),
        Scenario(name="latency-8c", orders=3000, connections=8, warmup=300),
    ]
    plan = Plan(suite="pr", scenarios=scenarios, clients=["hft"], colocate=True)
    rig = Rig.of(plan, DUET, {"p50_us": 500}, np.random.default_rng(3))  # the runner's own placement
    # 100 µs under the lock on a ~20 µs order: far above any noise, and with one connection
    # a side the lock is never taken
    sides = {"base": Served(BIN), "head": Served(BIN, ("--inject-contention-us", "100"))}
    for pair in range(2):
        runs = rig.round(sides, tmp_path / f"r{pair}", pair)
        eight = p50(runs["head"].path, "latency-8c") / p50(runs["base"].path, "latency-8c")
        one = p50(runs["head"].path, "latency-1c") / p50(runs["base"].path, "latency-1c")
        assert eight > 2.0, f"round {pair}: latency-8c head / base P50 {eight:.2f}"
        assert one < 1.5, f"round {pair}: latency-1c head / base P50 {one:.2f}"
