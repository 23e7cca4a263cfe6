"""`hftbench compare` on synthetic run folders: verdicts, exit status, summary, verdict.json."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hftbench import cli
from hftbench.answers import INCONCLUSIVE, INVALID, NO_CHANGE, NOT_GATED, REGRESSION
from hftbench.commands.compare import run_compare
from hftbench.errors import UsageError
from hftbench.judge.compare import compare_sides
from hftbench.judge.gates import parse_gates
from hftbench.store.baseline import load_side
from support.gate_synth import latency_run, result_doc, write_run


def _side(tmp_path, name, rng, runs=8, n=10_000, errors=0, large=None, **shape):
    """A folder of `runs` run folders: latency-1c/hft (gated, shaped by `shape`, `errors`),
    large/rust (reported only, shaped by `large`) and the floor."""
    folder = tmp_path / name
    for i in range(runs):
        cells = {
            ("latency-1c", "hft"): [
                result_doc("latency-1c", "hft", latency_run(rng, n, median_us=30.0, **shape), errors)
            ],
            ("large", "rust"): [result_doc("large", "rust", latency_run(rng, n, **(large or {})))],
            ("floor", "floor"): [result_doc("floor", "floor", latency_run(rng, n, median_us=12.0, **shape))],
        }
        write_run(folder, f"run_20261122T03{i:02d}00Z", cells)
    return folder


def test_aa_is_not_a_regression(tmp_path, gates):
    rng = np.random.default_rng(1)
    c = run_compare(_side(tmp_path, "base", rng), _side(tmp_path, "head", rng), gates)
    assert c.exit_code == 0
    assert c.status in (NO_CHANGE, INCONCLUSIVE)
    p99 = {r.series: r for r in c.results if r.metric == "p99_us"}
    assert set(p99) == {"large/rust", "latency-1c/hft", "floor/floor"}
    # gates.yaml `series`: only latency-1c/hft is judged; the others are reported, and say why
    assert p99["latency-1c/hft"].gated and p99["latency-1c/hft"].mde is not None
    assert not p99["large/rust"].gated and "reported only" in p99["large/rust"].reason
    assert not p99["floor/floor"].gated
    # 10,000 samples per run: P99.9 is not gated (needs 100,000)
    p999 = [r for r in c.results if r.metric == "p999_us"]
    assert all(r.verdict == NOT_GATED and "n too small" in r.reason for r in p999)


def test_p99_regression_exits_1_with_summary_and_json(tmp_path, capsys):
    rng = np.random.default_rng(2)
    base = _side(tmp_path, "base", rng)
    head = _side(tmp_path, "head", rng, tail_scale=1.6)  # p99 ~ +30% on latency-1c/hft (and the floor)
    summary, verdict = tmp_path / "out" / "summary.md", tmp_path / "out" / "verdict.json"
    code = cli.main(["compare", str(base), str(head), "--summary", str(summary), "--json", str(verdict)])
    assert code == 1
    doc = json.loads(verdict.read_text())
    assert doc["status"] == "regression" and doc["exit_code"] == 1
    flagged = {
        (f["scenario"], f["client"], f["metric"]) for f in doc["flags"] if f["verdict"] == "regression"
    }
    assert flagged == {("latency-1c", "hft", "p99_us")}  # the floor moved too, and is never gated
    md = summary.read_text()
    assert md.startswith("## ❌ Regression: latency-1c/hft P99 +")
    first_row = next(line for line in md.splitlines() if line.startswith("| 🔴"))
    assert "latency-1c/hft" in first_row and "P99" in first_row and "▲" in first_row and "≥ +" in first_row
    assert str(tmp_path) not in md  # no local path in a text posted to GitHub
    assert "Not gated:" in md and "P99.9" in md
    assert "regression" in capsys.readouterr().out


def test_too_few_repeats_is_inconclusive_not_a_failure(tmp_path, gates):
    rng = np.random.default_rng(3)
    base = _side(tmp_path, "base", rng, runs=2)
    head = _side(tmp_path, "head", rng, runs=2, tail_scale=2.0)
    c = run_compare(base, head, gates)
    p99 = next(r for r in c.results if r.metric == "p99_us" and r.series == "latency-1c/hft")
    assert p99.verdict == INCONCLUSIVE and "min_repeats" in p99.reason
    # undecided, but its estimate (x2) already lies beyond the threshold: unknown is not green
    assert c.status == INCONCLUSIVE and c.needs_more_repeats()
    assert c.exit_code == 1 and p99 in c.beyond_threshold()


def test_errors_gate(tmp_path, gates):
    rng = np.random.default_rng(4)
    c = run_compare(_side(tmp_path, "base", rng), _side(tmp_path, "head", rng, errors=200), gates)
    err = next(r for r in c.results if r.metric == "errors" and r.series == "latency-1c/hft")
    assert err.verdict == REGRESSION and c.exit_code == 1


def test_a_reported_only_series_never_fails_the_gate(tmp_path, gates):
    rng = np.random.default_rng(7)
    c = run_compare(
        _side(tmp_path, "base", rng), _side(tmp_path, "head", rng, large={"tail_scale": 2.0}), gates
    )
    large = next(r for r in c.results if r.metric == "p99_us" and r.series == "large/rust")
    assert large.ratio > 1.3 and not large.gated
    assert c.exit_code == 0


def test_a_series_missing_on_head_fails_and_missing_on_base_is_invalid(tmp_path, gates):
    rng = np.random.default_rng(5)
    base = load_side(_side(tmp_path, "base", rng))
    head = load_side(_side(tmp_path, "head", rng))
    head.series.pop(("latency-1c", "hft"))
    c = compare_sides(base, head, gates)
    only = [r for r in c.results if r.series == "latency-1c/hft"]
    latency = [r for r in only if r.metric != "errors"]
    assert latency and all(r.verdict == NOT_GATED and r.reason == "only in base" for r in latency)
    failed = next(r for r in only if r.metric == "errors")
    assert failed.gated and failed.verdict == REGRESSION and "missing on head" in failed.reason
    assert c.status == REGRESSION and c.exit_code == 1
    assert any("missing on head" in msg for msg in c.failures())
    c = compare_sides(head, base, gates)  # the other way round: base lacks it
    assert c.status == INVALID and c.exit_code == 1


def test_repeats_inside_one_run_folder_are_repeats(tmp_path):
    rng = np.random.default_rng(6)
    cells = {("large", "rust"): [result_doc("large", "rust", latency_run(rng, 2000)) for _ in range(4)]}
    side = load_side(write_run(tmp_path, "run_20261122T030000Z", cells))
    assert len(side.series[("large", "rust")]) == 4
    assert side.series[("large", "rust")][1].run_id == "run_20261122T030000Z#r2"


def test_bad_inputs_name_the_fix(tmp_path):
    with pytest.raises(UsageError, match="neither a run folder"):
        load_side(tmp_path)
    with pytest.raises(UsageError, match="no such folder"):
        load_side(tmp_path / "nope")
    with pytest.raises(UsageError, match="threshold is a worse factor"):
        parse_gates(
            {"schema_version": 1, "metrics": {"p99_us": {"quantile": 0.99, "threshold": 0.9}}}, "g.yaml"
        )
    with pytest.raises(UsageError, match="unknown metric"):
        parse_gates({"schema_version": 1, "metrics": {"p42": {"threshold": 1.1}}}, "g.yaml")
    with pytest.raises(UsageError, match="schema_version"):
        parse_gates({"schema_version": 2, "metrics": {}}, "g.yaml")
    assert cli.main(["compare", str(tmp_path), str(tmp_path)]) == 2


def test_a_metric_s_quantile_comes_from_metrics_py_and_gates_yaml_cannot_change_it():
    doc = {"schema_version": 1, "metrics": {"p999_us": {"threshold": 1.1}}, "drift": {"metric": "p999_us"}}
    assert parse_gates(doc, "g.yaml").metric("p999_us").quantile == 0.999  # stated nowhere in the file
    with pytest.raises(UsageError, match="p99_us is the 0.99 quantile; set 0.99, or leave it out"):
        parse_gates(
            {"schema_version": 1, "metrics": {"p99_us": {"quantile": 0.95, "threshold": 1.1}}}, "g.yaml"
        )


def _open_loop_runs(tmp_path, lateness_us: dict[str, float], median_us: dict[str, float]) -> None:
    # open loop, 8 connections at 10,000/s: one connection is due every 800 µs; a send-lateness
    # P99 of 500 µs (> 80 µs) means the generator fell behind its schedule
    rng = np.random.default_rng(21)
    for side in ("base", "head"):
        for i in range(8):
            doc = result_doc("latency-1c", "hft", latency_run(rng, 20_000, median_us=median_us[side]), 0)
            late = dict(doc["latency_us"], p99=lateness_us[side])
            doc.update(
                mode="open",
                target_rate_rps=10_000.0,
                connections=8,
                send_lateness_us=late,
                send_lateness_histogram=doc["histogram"],
            )
            write_run(tmp_path / side, f"run_20261122T03{i:02d}00Z", {("latency-1c", "hft"): [doc]})


def test_a_series_whose_generator_fell_behind_on_base_says_so_and_is_not_gated(tmp_path, gates):
    _open_loop_runs(tmp_path, {"base": 500.0, "head": 5.0}, {"base": 30.0, "head": 30.0})
    c = compare_sides(load_side(tmp_path / "base"), load_side(tmp_path / "head"), gates)
    p99 = next(r for r in c.results if r.metric == "p99_us")
    assert not p99.gated and p99.reason.startswith("the load generator fell behind in 8 of 8 of base's runs")
    # calibrate records why a series is not guarded from this field: an ungated row's own
    # verdict ("inconclusive: about N runs …") may take `reason` (family.correct)
    for r in c.results:
        if r.metric in ("p50_us", "p99_us"):
            assert r.why_not_gated.startswith("the load generator fell behind"), r
    unguarded = {u["metric"]: u["why"] for u in c.to_json()["unguarded"]}
    assert unguarded["p50_us"].startswith("the load generator fell behind"), unguarded
    assert not [r for r in c.results if r.gated and r.metric != "errors"]
    # nothing of the gated series judged, and nothing failed: invalid, never green
    assert c.status == INVALID and c.exit_code == 1
    assert c.unjudged and c.unjudged[0].startswith("latency-1c/hft: no gated row was judged (")
    assert "the load generator fell behind in 8 of 8 of base's runs" in c.unjudged[0]


def test_a_head_that_makes_the_generator_fall_behind_cannot_ungate_its_own_series(tmp_path, gates):
    # the head's server is 40 % slower and its side of the schedule slips: that is the
    # regression itself, not a reason to look away (issue 35)
    _open_loop_runs(tmp_path, {"base": 5.0, "head": 500.0}, {"base": 30.0, "head": 42.0})
    c = compare_sides(load_side(tmp_path / "base"), load_side(tmp_path / "head"), gates)
    p50 = next(r for r in c.results if r.metric == "p50_us")
    assert p50.gated and p50.why_not_gated is None
    assert p50.verdict == REGRESSION and c.exit_code == 1


def test_a_series_pattern_may_gate_one_metric_of_a_series_with_its_errors_and_cpu():
    doc = {
        "schema_version": 1,
        "series": ["latency-1c/hft", "load/hft p50_us"],
        "metrics": {m: {"threshold": 1.1} for m in ("p50_us", "p99_us", "cpu_us_per_order")},
    }
    doc["metrics"]["errors"] = {"threshold": 0.001}
    g = parse_gates(doc, "g.yaml")
    assert g.why_not_judged("load", "hft", "p50_us") is None
    assert g.why_not_judged("load", "hft", "cpu_us_per_order") is None  # follows the latency
    assert g.why_not_judged("load", "hft", "errors") is None
    assert (
        g.why_not_judged("load", "hft", "p99_us")
        == "reported only: gates.yaml's series guards other metrics of it"
    )
    assert g.why_not_judged("latency-1c", "hft", "p99_us") is None
    assert g.why_not_judged("large", "hft", "p50_us") == "reported only: not in gates.yaml's series"
    reported = parse_gates(
        {**doc, "reported": {"latency-8c/*": "the duet magnifies it", "*": "the host"}}, "g"
    )
    assert g.why_not_judged("latency-8c", "hft", "p99_us") == "reported only: not in gates.yaml's series"
    assert reported.why_not_judged("latency-8c", "hft", "p99_us") == "reported only: the duet magnifies it"
    assert reported.why_not_judged("latency-8c", "hft", "cpu_us_per_order").endswith("the duet magnifies it")
    assert reported.why_not_judged("large", "hft", "p50_us") == "reported only: the host"
    with pytest.raises(UsageError, match="reported must map"):
        parse_gates({**doc, "reported": ["latency-8c/*"]}, "g.yaml")
    with pytest.raises(UsageError, match="names 'p42_us', not a metric"):
        parse_gates({**doc, "series": ["load/hft p42_us"]}, "g.yaml")
