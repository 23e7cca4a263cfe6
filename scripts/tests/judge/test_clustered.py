"""The gate's round-level inference (judge/clustered.py) and the server's own CPU per order:
what a duet shares cannot hide a head that does more work (issue 35)."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest
from hftbench.answers import FASTER, IMPROVEMENT, NO_CHANGE, REGRESSION, SLOWER
from hftbench.design_names import DUET, PAIRED_ROUNDS
from hftbench.judge import clustered
from hftbench.judge.compare import compare_sides
from hftbench.judge.gates import load_gates
from hftbench.store.baseline import load_side
from support.gate_synth import latency_run, result_doc, write_run


def _aa_rounds(
    rng, k: int, *, round_sd: float, blocks: int, block_sd: float
) -> tuple[np.ndarray, np.ndarray]:
    """k rounds of A/A: each round draws its own process effect (round_sd), shared by its
    blocks; returns the rounds' log ratios and every block's log ratio."""
    effect = rng.normal(0.0, round_sd, size=k)
    per_block = effect[:, None] + rng.normal(0.0, block_sd, size=(k, blocks))
    return per_block.mean(axis=1), per_block.ravel()


def test_a_round_level_interval_covers_one_as_often_as_it_says_where_a_block_level_one_does_not():
    rng = np.random.default_rng(35)
    draws, k, confidence = 2000, 8, 0.99
    round_hits = block_hits = 0
    for _ in range(draws):
        rounds, blocks = _aa_rounds(rng, k, round_sd=0.004, blocks=40, block_sd=0.01)
        se, df = clustered.standard_error(rounds)
        lo, hi = clustered.t_interval(float(rounds.mean()), se, df, confidence)
        round_hits += lo <= 1.0 <= hi
        # blocks resampled as if independent: the round's draw left out (what the gate did)
        half = 2.576 * blocks.std(ddof=1) / np.sqrt(len(blocks))
        block_hits += abs(blocks.mean()) <= half
    assert round_hits / draws >= 0.98
    assert block_hits / draws < 0.80  # the old interval's failure, measured the same way


def test_the_t_test_keeps_its_level_and_finds_a_shift():
    rng = np.random.default_rng(7)
    ps = []
    for _ in range(2000):
        y = rng.normal(0.0, 0.01, size=8)
        se, df = clustered.standard_error(y)
        ps.append(clustered.t_p_value(float(y.mean()), se, df))
    assert np.mean(np.array(ps) < 0.01) <= 0.015
    y = rng.normal(np.log(1.05), 0.005, size=8)
    se, df = clustered.standard_error(y)
    assert clustered.t_p_value(float(y.mean()), se, df) < 1e-4


def test_one_round_cannot_be_tested_and_equal_rounds_are_exact():
    assert clustered.standard_error(np.array([0.1])) == (float("inf"), 0)
    assert clustered.t_p_value(0.1, float("inf"), 0) == 1.0
    assert clustered.t_p_value(0.0, 0.0, 3) == 1.0 and clustered.t_p_value(0.1, 0.0, 3) == 0.0
    assert all(np.isnan(clustered.t_interval(0.1, 0.01, 0, 0.99)))


def _rounds(
    tmp_path, rng, *, head_median: float, head_cpu: float, base_cpu: float = 10.0, k: int = 8
) -> None:
    """k duet rounds of latency-1c/hft (run folders named as ab names them), each cell with
    the server's CPU seconds for its orders."""
    for i in range(1, k + 1):
        for side, median, cpu in (("base", 40.0, base_cpu), ("head", head_median, head_cpu)):
            doc = result_doc("latency-1c", "hft", latency_run(rng, 3_000, median_us=median, run_noise=0.002))
            run = write_run(
                tmp_path / side,
                f"run_20261127T0300{i:02d}Z_{side}{i:02d}_abcdef",
                {("latency-1c", "hft"): [doc]},
            )
            results = json.loads((run / "results.json").read_text())
            for cell in results["cells"]:
                jitter = float(np.exp(rng.normal(0.0, 0.01)))
                cell["server_cpu_s"] = cpu * jitter * cell["server_orders"] / 1e6
            (run / "results.json").write_text(json.dumps(results))


def test_a_head_that_works_after_the_reply_fails_the_gate_even_when_its_latency_reads_faster(tmp_path):
    # The shape of issue 35's second change: both servers share a CPU, so base pays for
    # head's work after each reply and head's latency *ratio* reads 9 % faster; head's own
    # CPU per order doubled. Judged as ab judges a duet.
    rng = np.random.default_rng(2)
    _rounds(tmp_path, rng, head_median=36.4, head_cpu=20.0)
    gates = load_gates().for_looks(4)
    c = compare_sides(load_side(tmp_path / "base"), load_side(tmp_path / "head"), gates, DUET)
    rows = {r.metric: r for r in c.results}
    assert rows["p50_us"].verdict in (IMPROVEMENT, FASTER)
    # the shown values are in the metric's unit (µs), as a run folder's are, not the grid's ns
    assert rows["p50_us"].base_value == pytest.approx(40.0, rel=0.05)
    assert rows["p50_us"].head_value == pytest.approx(36.4, rel=0.05)
    cpu = rows["cpu_us_per_order"]
    assert cpu.gated and cpu.verdict == REGRESSION and cpu.ratio == pytest.approx(2.0, rel=0.02)
    assert c.status == REGRESSION and c.exit_code == 1
    assert any("cpu_us_per_order" in f for f in c.failures())


def test_the_same_work_per_order_is_no_change_and_a_small_certain_slowdown_is_named(tmp_path):
    rng = np.random.default_rng(3)
    _rounds(tmp_path / "aa", rng, head_median=40.0, head_cpu=10.0)
    gates = load_gates().for_looks(4)
    aa = compare_sides(load_side(tmp_path / "aa/base"), load_side(tmp_path / "aa/head"), gates, DUET)
    assert {r.metric: r.verdict for r in aa.results if r.gated}["cpu_us_per_order"] == NO_CHANGE
    assert aa.status == NO_CHANGE and aa.exit_code == 0
    # +5 % on every order, known to well under a percent: passes the gate, never as "no change"
    # (P50 and CPU judged: the rounds' 3,000 orders leave P99 too wide for a decision in 8)
    _rounds(tmp_path / "five", rng, head_median=42.0, head_cpu=10.0)
    p50_only = replace(gates, series=("latency-1c/hft p50_us",))
    five = compare_sides(load_side(tmp_path / "five/base"), load_side(tmp_path / "five/head"), p50_only, DUET)
    p50 = next(r for r in five.results if r.metric == "p50_us")
    assert p50.verdict == SLOWER and five.status == SLOWER and five.exit_code == 0


def test_runs_without_the_server_s_cpu_show_no_cpu_row(tmp_path):
    rng = np.random.default_rng(4)
    for side in ("base", "head"):
        for i in range(1, 9):
            doc = result_doc("latency-1c", "hft", latency_run(rng, 2_000, median_us=40.0))
            write_run(
                tmp_path / side,
                f"run_20261127T0300{i:02d}Z_{side}{i:02d}_abcdef",
                {("latency-1c", "hft"): [doc]},
            )
    c = compare_sides(load_side(tmp_path / "base"), load_side(tmp_path / "head"), load_gates(), DUET)
    assert "cpu_us_per_order" not in {r.metric for r in c.results}
    p50 = next(r for r in c.results if r.metric == "p50_us")
    assert p50.ci is not None and p50.mde is not None  # Student's interval over 8 rounds


def test_in_a_duet_a_schedule_that_slipped_for_both_sides_keeps_the_load_series_gated(tmp_path):
    # One generator feeds both servers of a duet, each order's side drawn at random: a slipping
    # schedule delays both alike, so it dilutes the ratio and never ungates the series.
    rng = np.random.default_rng(9)
    for i in range(1, 9):
        for side in ("base", "head"):
            doc = result_doc("load", "hft", latency_run(rng, 3_000, median_us=40.0, run_noise=0.002))
            late = dict(doc["latency_us"], p99=500.0)
            doc.update(
                mode="open",
                target_rate_rps=10_000.0,
                connections=8,
                send_lateness_us=late,
                send_lateness_histogram=doc["histogram"],
            )
            write_run(
                tmp_path / side, f"run_20261127T0300{i:02d}Z_{side}{i:02d}_abcdef", {("load", "hft"): [doc]}
            )
    gates = load_gates()
    base, head = load_side(tmp_path / "base"), load_side(tmp_path / "head")
    duet = {r.metric: r for r in compare_sides(base, head, gates, DUET).results}
    assert duet["p50_us"].gated and duet["p50_us"].verdict == NO_CHANGE
    assert not duet["p99_us"].gated  # gates.yaml gates the load series on its P50 only
    rounds = {r.metric: r for r in compare_sides(base, head, gates, PAIRED_ROUNDS).results}
    assert not rounds["p50_us"].gated and rounds["p50_us"].why_not_gated.startswith(
        "the load generator fell behind"
    )


def _slot_rounds(rng, k: int, *, slot_effect: float, sd: float, shift: float = 0.0):
    """k duet rounds' log ratios with balanced slots: head in slot a of one round of each pair,
    in slot b of the other; slot b reads `slot_effect` (log) above slot a whichever build
    is there (the older process, the first connections)."""
    head_in_a = np.array([(i % 2 == 0) == bool(rng.random() < 0.5) for i in range(k)])
    head_in_a[1::2] = ~head_in_a[::2]
    # base's slot labels the round; head in a: head is favoured, the ratio reads low
    y = shift + np.where(head_in_a, -slot_effect / 2, slot_effect / 2) + rng.normal(0.0, sd, size=k)
    return y, tuple("b" if a else "a" for a in head_in_a)


def test_the_slot_leaves_the_estimate_and_its_spread_and_the_interval_keeps_its_level():
    # An A/A pool on this VM: one slot's load P99 20 % above the other's, 5.6 % within a slot.
    rng = np.random.default_rng(36)
    draws, k, confidence = 2000, 12, 0.99
    hits, se_plain, se_slot = 0, [], []
    for _ in range(draws):
        y, slots = _slot_rounds(rng, k, slot_effect=0.20, sd=0.056)
        est, se, df = clustered.round_estimate(y, slots)
        assert df == k - 2 and est == pytest.approx(y.mean())  # balanced: the plain mean
        lo, hi = clustered.t_interval(est, se, df, confidence)
        hits += lo <= 1.0 <= hi
        se_slot.append(se)
        se_plain.append(clustered.standard_error(y)[0])
    assert 0.98 <= hits / draws <= 0.997  # as often as it says: neither short nor padded
    assert np.median(se_slot) / np.median(se_plain) < 0.85  # the slot's share of the spread is gone
    # A +10 % regression under that slot effect is found at the gate's per-look level.
    y, slots = _slot_rounds(rng, k, slot_effect=0.20, sd=0.056, shift=np.log(1.10))
    est, se, df = clustered.round_estimate(y, slots)
    assert clustered.t_p_value(est, se, df) < 0.05 / 3


def test_rounds_without_both_slots_keep_the_plain_mean():
    y = np.array([0.01, -0.02, 0.03, 0.0])
    plain = (clustered.mean_log_ratio(y), *clustered.standard_error(y))
    assert clustered.round_estimate(y) == plain  # paired rounds: no slots
    assert clustered.round_estimate(y, ("a",) * 4) == plain  # every round in one slot
    assert clustered.round_estimate(y, ("a", "b", None, "a")) == plain  # a round without one
    assert clustered.round_estimate(y[:2], ("a", "b")) == (
        clustered.mean_log_ratio(y[:2]),
        *clustered.standard_error(y[:2]),
    )


def test_unbalanced_slots_weigh_each_slot_half_and_the_shown_means_give_the_estimate():
    base = np.array([100.0, 100.0, 100.0, 100.0])
    head = np.array([90.0, 92.0, 88.0, 120.0])  # three rounds in slot a, one in b
    slots = ("a", "a", "a", "b")
    est, se, df = clustered.round_estimate(np.log(head / base), slots)
    assert est == pytest.approx((np.log(head[:3] / 100).mean() + np.log(1.2)) / 2) and df == 2
    b, h = clustered.geometric_means(base, head, slots)
    assert h / b == pytest.approx(np.exp(est))


def test_a_duet_s_slots_reach_the_round_test_from_the_run_folders(tmp_path):
    # Eight A/A duet rounds whose slot b reads 20 % slower: the slot is taken out, so the
    # interval is as narrow as the within-slot spread, and the verdict stays "no change".
    rng = np.random.default_rng(11)
    for i in range(1, 9):
        head_in_a = i % 2 == 1
        for side in ("base", "head"):
            in_b = (side == "head") != head_in_a
            median = 40.0 * (1.2 if in_b else 1.0)
            doc = result_doc("latency-1c", "hft", latency_run(rng, 3_000, median_us=median, run_noise=0.002))
            run = write_run(
                tmp_path / side,
                f"run_20261127T0300{i:02d}Z_{side}{i:02d}_abcdef",
                {("latency-1c", "hft"): [doc]},
            )
            results = json.loads((run / "results.json").read_text())
            results["server"] = {"duet_slot": "b" if in_b else "a"}
            (run / "results.json").write_text(json.dumps(results))
    gates = load_gates().for_looks(4)
    c = compare_sides(load_side(tmp_path / "base"), load_side(tmp_path / "head"), gates, DUET)
    p50 = next(r for r in c.results if r.metric == "p50_us")
    assert p50.verdict == NO_CHANGE and p50.ratio == pytest.approx(1.0, abs=0.01)
    lo, hi = p50.ci
    assert hi / lo < 1.05  # the plain t over these rounds: about ×1.5 wide
