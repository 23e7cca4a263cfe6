"""A failure is data: failed orders, broken rounds and missing series are counted and judged
(judge/failures.py, judge/compare.py), and the verdict's words match the decision
(rules.classify, rules.gate_detectable_effect, verdict_text.headline)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hftbench.answers import INCONCLUSIVE, INVALID, NO_CHANGE, REGRESSION, SLOWER
from hftbench.design_names import PAIRED_ROUNDS
from hftbench.judge import failures
from hftbench.judge.compare import compare_sides
from hftbench.judge.gates import EARLY_SHARE
from hftbench.judge.rounds import AB_ROUNDS
from hftbench.judge.rules import classify, detectable_effect, gate_detectable_effect
from hftbench.publish import verdict_text
from hftbench.results import orders_failed
from hftbench.series import Repeat
from hftbench.store.baseline import load_side
from support.gate_synth import latency_run, result_doc, write_run

SERIES = ("latency-1c", "hft")


def _rep(run_id: str, ok: int = 1000, errors: int = 0, kinds=(), broken=None) -> Repeat:
    return Repeat(run_id, "hist" if ok else None, ok, errors, 1.0, failure_kinds=tuple(kinds), broken=broken)


def test_a_head_that_fails_orders_base_does_not_is_a_regression_naming_count_and_kind():
    base = [_rep(f"run_x_base{i:02d}") for i in range(1, 5)]
    head = [_rep(f"run_x_head{i:02d}") for i in range(1, 4)]
    head.append(_rep("run_x_head04", ok=963, errors=37, kinds=[("http_5xx", 30), ("timeout", 7)]))
    j = failures.judge(base, head)
    assert j.verdict == REGRESSION
    assert j.reason == "orders failed: 37 of 4,000 orders on head (http_5xx 30, timeout 7); none on base"
    assert j.head.rate == pytest.approx(37 / 4000) and j.base.rate == 0.0


def test_a_base_that_failed_makes_the_comparison_invalid_whatever_head_did():
    base = [_rep("run_x_base01", ok=999, errors=1, kinds=[("timeout", 1)]), _rep("run_x_base02")]
    head = [_rep("run_x_head01"), _rep("run_x_head02", ok=0, broken="timeout: client ran past 40 s")]
    j = failures.judge(base, head)
    assert j.verdict == INVALID
    assert j.reason.startswith(
        "base failed: 1 of 2,000 orders on base (timeout 1); head too: head broke 1 of 2"
    )
    assert "round 02: timeout: client ran past 40 s" in j.reason and j.reason.endswith(
        "the comparison is invalid"
    )


def test_a_broken_head_round_is_a_regression_and_clean_sides_are_no_change():
    base = [_rep("run_x_base01"), _rep("run_x_base02")]
    head = [_rep("run_x_head01"), _rep("run_x_head02", ok=0, broken="hft-server exited with status 101")]
    assert failures.judge(base, head).verdict == REGRESSION
    clean = failures.judge(base, [_rep("run_x_head01"), _rep("run_x_head02")])
    assert clean.verdict == NO_CHANGE and clean.reason == "no order failed: 2,000 on base, 2,000 on head"
    missing = failures.judge(base, [])
    assert missing.verdict == REGRESSION and "missing on head" in missing.reason
    assert failures.judge([], base).verdict == INVALID


def _rounds(tmp_path, side: str, rng, rounds: int = 8, *, fail=None, median_us=30.0):
    """`rounds` run folders named as ab's rounds; `fail(i, cell)` may turn round i's cell into
    what measure/cell.py writes for a failure (its reason, a result or none)."""
    for i in range(1, rounds + 1):
        doc = result_doc(*SERIES, latency_run(rng, 10_000, median_us=median_us))
        path = write_run(tmp_path / side, f"run_20261122T03{i:02d}00Z_{side}{i:02d}_abc123", {SERIES: [doc]})
        if fail is not None:
            results = json.loads((path / "results.json").read_text())
            fail(i, results["cells"][0], path)
            (path / "results.json").write_text(json.dumps(results))
    return load_side(tmp_path / side)


def _failed_orders(i, cell, path):
    """Rounds 3 and 6: 25 orders answered 503 (the client's result holds them; the cell failed)."""
    if i in (3, 6):
        result = cell["result"]
        result.update(errors=25, orders=result["ok"] + 25)
        result["error_kinds"].update(http_5xx=25, timeout=0)
        cell.update(status="failed")
        from hftbench.results import ClientResult

        cell["reason"] = orders_failed(ClientResult.from_dict(result))


def _server_died(i, cell, path, dies_in=5):
    """Round 5: the server died mid-cell; the client wrote no result; server.log has its last words."""
    if i == dies_in:
        cell.update(status="failed", result=None, reason="hft-server exited with status 101 during the cell")
        (path / "server.log").write_text("listening\nthread 'tokio' panicked at src/book.rs:88: boom\n")


def test_failed_rounds_count_and_the_headline_names_them(tmp_path, gates):
    rng = np.random.default_rng(11)
    base = _rounds(tmp_path, "base", rng)
    head = _rounds(tmp_path, "head", rng, fail=_failed_orders)
    c = compare_sides(base, head, gates, design=PAIRED_ROUNDS)
    row = next(r for r in c.results if r.metric == "errors" and r.series == "latency-1c/hft")
    assert row.gated and row.verdict == REGRESSION and row.head_runs == 8  # no round dropped
    assert "50 of 80,050 orders on head (http_5xx 50)" in row.reason
    assert c.status == REGRESSION and c.exit_code == 1
    p99 = next(r for r in c.results if r.metric == "p99_us" and r.series == "latency-1c/hft")
    assert p99.head_runs == 8  # the rounds with failed orders still ran whole: their latency counts
    line = verdict_text.headline(c.verdict())
    assert line.startswith("❌ Regression: latency-1c/hft orders failed: 50 of 80,050 orders on head")


def test_a_head_server_that_dies_is_a_regression_with_its_last_words(tmp_path, gates):
    rng = np.random.default_rng(12)
    c = compare_sides(
        _rounds(tmp_path, "base", rng),
        _rounds(tmp_path, "head", rng, fail=_server_died),
        gates,
        PAIRED_ROUNDS,
    )
    assert c.status == REGRESSION and c.exit_code == 1
    line = verdict_text.headline(c.verdict())
    assert "head broke 1 of 8 rounds: round 05: hft-server exited with status 101" in line
    assert "panicked at src/book.rs:88: boom" in line
    p50 = next(r for r in c.results if r.metric == "p50_us" and r.series == "latency-1c/hft")
    assert p50.head_runs == 7  # the broken round is judged by its failure row, not its latency


def test_a_base_that_failed_is_invalid_never_green(tmp_path, gates):
    rng = np.random.default_rng(13)
    c = compare_sides(
        _rounds(tmp_path, "base", rng, fail=_failed_orders),
        _rounds(tmp_path, "head", rng),
        gates,
        PAIRED_ROUNDS,
    )
    assert c.status == INVALID and c.exit_code == 1
    line = verdict_text.headline(c.verdict())
    assert line.startswith(
        "⛔ Invalid: latency-1c/hft: base failed: 50 of 80,050 orders on base (http\\_5xx 50)"
    )
    assert "✅" not in line


def test_a_certain_regression_stops_the_session_though_other_rows_are_undecided(tmp_path, gates):
    rng = np.random.default_rng(14)
    dies_early = lambda i, cell, path: _server_died(i, cell, path, dies_in=2)  # noqa: E731
    base = _rounds(tmp_path, "base", rng, rounds=3)
    c = compare_sides(base, _rounds(tmp_path, "head", rng, rounds=3, fail=dies_early), gates, PAIRED_ROUNDS)
    assert any(r.gated and r.verdict == INCONCLUSIVE for r in c.results)  # 3 rounds < min_repeats
    assert c.status == REGRESSION and not c.needs_more_repeats()


def test_no_change_only_where_the_shown_interval_holds_1():
    # +2.5 % (+1.0 … +4.1 %), not significant after Holm: the interval shown excludes 1
    assert classify(1.025, (1.010, 1.041), 0.03, threshold=1.10, alpha=0.01) == SLOWER
    assert classify(1.005, (0.990, 1.021), 0.40, threshold=1.10, alpha=0.01) == NO_CHANGE


def test_could_detect_is_the_effect_the_gate_fails_with_80_percent_power():
    sd, level = 0.01, 0.01 / 3
    significance = detectable_effect(sd, level)
    # the bar of significance alone is far under the threshold; the gate needs both
    assert significance == pytest.approx(np.exp((2.935199 + 0.841621) * sd), rel=1e-5)
    assert gate_detectable_effect(sd, level, 1.10) == pytest.approx(1.10 * np.exp(0.841621 * sd), rel=1e-5)
    noisy = 0.05  # where significance is the higher bar, it decides
    assert gate_detectable_effect(noisy, level, 1.10) == pytest.approx(
        np.exp((2.935199 + 0.841621) * noisy), rel=1e-5
    )


def test_the_early_look_spends_a_thirty_first_of_alpha_and_stops_an_obvious_regression(tmp_path, gates):
    """ab's early look after 8 rounds: alpha x EARLY_SHARE there, the usual looks keep the rest
    (together alpha), and a head 1.5x slower is a regression at that small share already,
    while an A/A of the same 8 rounds is not."""
    looks = gates.for_looks(AB_ROUNDS.looks).spend(1 - EARLY_SHARE)
    early = gates.spend(EARLY_SHARE)
    alpha = gates.metric("p50_us").alpha
    spent = AB_ROUNDS.looks * looks.metric("p50_us").alpha + early.metric("p50_us").alpha
    assert spent == pytest.approx(alpha) and AB_ROUNDS.early == 8
    rng = np.random.default_rng(21)
    base = _rounds(tmp_path, "base", rng)
    slow = compare_sides(base, _rounds(tmp_path, "head", rng, median_us=45.0), early, PAIRED_ROUNDS)
    p50 = next(r for r in slow.results if r.metric == "p50_us")
    assert p50.verdict == REGRESSION and slow.status == REGRESSION, (p50.ratio, p50.ci, p50.p_adjusted)
    same = compare_sides(base, _rounds(tmp_path / "aa", "head", rng), early, PAIRED_ROUNDS)
    p50 = next(r for r in same.results if r.metric == "p50_us")
    assert p50.gated and p50.verdict != REGRESSION and same.status != REGRESSION
