"""Issue 60 item 6, "the pool can flag": two runners' legs of `ab` (paired rounds, 16 a side,
round sd 2 %) judged together as `hftbench combine` judges them (pooled.compare_legs, then
combine.pool_verdict), in a family of 7 gated rows at 3 looks (Holm's first step 0.01 / 3 / 7
= 4.8e-4). Both runners at +30 % on one row: a regression of the pooled test itself (the legs'
own verdicts say nothing, so no runner's own regression decides it). With the t draws' Monte
Carlo floor of 1 / 2001 = 5.0e-4 it was not. A/A on both: no regression. Synthetic rounds, seeds
fixed, no binaries."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hftbench.answers import NO_CHANGE, REGRESSION
from hftbench.commands.combine import pool_verdict
from hftbench.design_names import PAIRED_ROUNDS
from hftbench.judge import pooled
from hftbench.judge.gates import parse_gates
from hftbench.judge.sides import Side
from hftbench.series import Repeat
from scipy.special import ndtri
from support.gate_synth import encode_ns

SCENARIOS = [f"latency-{i}c" for i in range(1, 8)]  # 7 gated series x 1 gated metric
ROUNDS, ORDERS, ROUND_SD, LOOKS = 16, 2000, 0.02, 3
GATES = parse_gates(
    {
        "schema_version": 1,
        "confidence": 0.95,
        "bootstrap": 2000,
        "permutations": 2000,
        "seed": 20261122,
        "series": [f"{s}/hft" for s in SCENARIOS],
        "metrics": {
            "p50_us": {"threshold": 1.10, "alpha": 0.01, "gated": True, "min_samples": 200, "min_repeats": 8}
        },
        "drift": {"metric": "p50_us"},
    },
    "test gates",
)
# One round's latencies before its scale: a lognormal body at exact quantiles, so a round's
# P50 moves only with the round's draw (its regime and its side's noise), not with sampling.
SHAPE = np.exp(0.35 * ndtri((np.arange(ORDERS) + 0.5) / ORDERS))


def _side(label: str, rng, level_us: float, regimes: np.ndarray, effect: float, slowed: str) -> Side:
    side = Side(label)
    for i, regime in enumerate(regimes, 1):
        for scenario in SCENARIOS:
            own = np.exp(rng.normal(0.0, ROUND_SD / np.sqrt(2)))  # each side's: the ratio's sd is 2 %
            scale = level_us * regime * own * (effect if scenario == slowed else 1.0)
            hist = encode_ns(SHAPE * scale * 1000.0)
            run_id = f"run_20261126T03{i:02d}00Z_{label}{i:02d}_{i:06x}"
            side.add((scenario, "hft"), Repeat(run_id, hist, ORDERS, 0, 1.0))
        side.runs.append(f"run_20261126T03{i:02d}00Z_{label}{i:02d}_{i:06x}")
    return side


def _leg(name: str, seed: int, level_us: float, effect: float, slowed: str = "latency-1c") -> pooled.Leg:
    """One runner's leg: 16 paired rounds of 7 series, head x `effect` on `slowed` only. Its
    own verdict.json holds no row, so only the pooled test can decide."""
    rng = np.random.default_rng(seed)
    regimes = np.exp(rng.normal(0.0, 0.1, ROUNDS))  # the host's, shared by a round's two sides
    base = _side("base", rng, level_us, regimes, 1.0, slowed)
    head = _side("head", rng, level_us, regimes, effect, slowed)
    return pooled.Leg(name, pooled.COMPLETE, None, {"results": []}, base, head, trusted_design=PAIRED_ROUNDS)


def _judge(legs: list[pooled.Leg]):
    comparison, seen, alone = pooled.compare_legs(legs, GATES, LOOKS)
    return pool_verdict(legs, comparison, seen, alone, []), comparison, alone


def test_two_runners_both_at_plus_30_percent_flag_the_pool():
    legs = [_leg("a", 1, 25.0, 1.30), _leg("b", 2, 32.5, 1.30)]  # b 30 % slower in absolute terms
    v, comparison, alone = _judge(legs)
    assert v.status == REGRESSION and v.exit_code == 1 and not alone
    rows = {r.scenario: r for r in comparison.results}
    slowed = rows["latency-1c"]
    assert len([r for r in comparison.results if r.gated]) == 7
    assert slowed.verdict == REGRESSION and slowed.ratio == pytest.approx(1.30, rel=0.02)
    # Holm's first step of this family, and the old floor that stood above it.
    first_step = 0.01 / LOOKS / 7
    assert 1 / (1 + GATES.bootstrap) > first_step
    assert slowed.p_value < 1e-12 and slowed.p_adjusted < first_step
    # The interval is Student's about the same estimate and standard error as the p.
    assert slowed.ci[0] > 1.25 and slowed.ci[1] < 1.36 and slowed.ci[0] < slowed.ratio < slowed.ci[1]
    # The shown values are the runners' weighted geometric means: their ratio is the estimate.
    assert slowed.head_value / slowed.base_value == pytest.approx(slowed.ratio, rel=1e-9)
    weights = [row.weight for r in v.pool.runners for row in r.rows if row.series == "latency-1c/hft"]
    assert weights == [0.5, 0.5]
    assert all(rows[s].verdict != REGRESSION for s in SCENARIOS[1:])


def test_two_runners_at_a_a_do_not_flag_the_pool():
    legs = [_leg("a", 3, 25.0, 1.0), _leg("b", 4, 32.5, 1.0)]
    v, comparison, _ = _judge(legs)
    assert v.status != REGRESSION and v.exit_code == 0
    assert all(r.verdict != REGRESSION and 0.95 < r.ratio < 1.05 for r in comparison.results)
    assert min(r.p_adjusted for r in comparison.results) > 0.01 / LOOKS


def test_a_runner_s_failed_orders_make_the_pool_s_failure_row_a_regression_that_names_it():
    """The failure row (failures.py) is a count, not a test: the pool's is its worst runner's."""
    gates = dataclasses.replace(
        GATES,
        metrics=[
            *GATES.metrics,
            dataclasses.replace(
                GATES.metrics[0], name="errors", kind="errors", quantile=None, threshold=0.001, min_samples=1
            ),
        ],
    )
    legs = [_leg("a", 5, 25.0, 1.0), _leg("b", 6, 32.5, 1.0)]
    rounds = legs[1].head.series[("latency-3c", "hft")]
    rounds[0] = dataclasses.replace(rounds[0], ok=ORDERS - 7, errors=7, failure_kinds=(("http_5xx", 7),))
    comparison, _, _ = pooled.compare_legs(legs, gates, LOOKS)
    rows = {(r.scenario, r.metric): r for r in comparison.results}
    failed = rows[("latency-3c", "errors")]
    assert failed.verdict == REGRESSION and failed.p_value is None
    assert failed.reason.startswith("b: orders failed: 7 of 32,000 orders on head (http_5xx 7)")
    assert rows[("latency-1c", "errors")].verdict == NO_CHANGE and comparison.status == REGRESSION
