"""`hftbench combine` over real legs: two "runners" on this host, the second with its server
on the other CPU and every order 10 µs slower on both sides (a slower machine, 30 % or more
above the first in absolute latency), judged together; and `hftbench pool`, the matrix."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from hftbench import cli, pool
from hftbench.answers import NO_CHANGE, REGRESSION
from hftbench.errors import UsageError
from hftbench.judge import pooled
from hftbench.judge.sides import Side
from hftbench.publish import pool_text
from hftbench.verdict import MetricResult, Verdict
from support.combine_world import (
    B_PLACEMENT,
    ROOT,
    ROUNDS,
    TWO,
    make_leg,
    needs_binaries,
    pool_file,
    record,
    verdict,
)
from support.combine_world import combine as _combine


@pytest.fixture(scope="module")
def pools(pool_legs, tmp_path_factory):
    """{"aa", "slow", "one": legs folder}, each with legs a and b, and the pool file: "aa" and
    "slow" are the session's (conftest.py, shared with test_combine_forged.py). "one": a A/A,
    b with 30 µs more per order on its head only (the same refs: one pool)."""
    found = dict(pool_legs)
    found["one"] = tmp_path_factory.mktemp("pool-one") / "one"  # its a is the A/A pool's a
    shutil.copytree(found["aa"] / "pr-bench-a", found["one"] / "pr-bench-a", symlinks=True)
    make_leg(
        found["repo"],
        found["one"],
        "b",
        "HEAD~1",
        env=B_PLACEMENT,
        flags=("--head-server-flags", "--inject-delay-us 30", "--no-profile"),  # none is read here
    )
    return found


def _p50(doc: dict) -> dict:
    return next(r for r in doc["results"] if r["metric"] == "p50_us")


@needs_binaries
def test_a_a_on_two_runners_30_percent_apart_passes(pools, tmp_path):
    # How far apart the two levels land is the host's business (docs/measurements.md: +35 % on
    # a quiet VM); what is tested is that the pool's A/A holds whatever they are.
    code, doc = _combine(pools["aa"], pools["pool"], tmp_path / "out")
    assert code == 0 and doc["status"] != "regression" and doc["partial"] is False
    assert [(r["name"], r["state"]) for r in doc["pool"]["runners"]] == [("a", "complete"), ("b", "complete")]
    p50 = _p50(doc)
    assert p50["gated"] and abs(p50["ratio"] - 1) < 0.05
    weights = [
        row["weight"] for r in doc["pool"]["runners"] for row in r["rows"] if row["metric"] == "p50_us"
    ]
    assert len(weights) == 2 and abs(sum(weights) - 1) < 1e-3 and min(weights) > 0
    summary = (tmp_path / "out" / "summary.md").read_text()
    assert "Runners (2)" in summary and "| latency-1c/hft | P50 |" in summary


@needs_binaries
def test_a_slower_head_on_both_runners_is_one_regression(pools, tmp_path):
    code, doc = _combine(pools["slow"], pools["pool"], tmp_path / "out")
    assert code == 1 and doc["status"] == "regression"
    assert any(f["metric"] == "p50_us" and f["verdict"] == "regression" for f in doc["flags"])
    # the profile of the leg that took one (a; b ran with --no-profile), named by its runner
    own = json.loads((pools["slow"] / "pr-bench-a" / "verdict.json").read_text())["profile"]
    assert doc["profile"] == {**own, "runner": "a"}


@needs_binaries
def test_a_pool_of_one_is_that_runner_s_own_verdict(pools, tmp_path):
    (tmp_path / "one.yaml").write_text(ROUNDS + "runners:\n  - {name: a, labels: [self-hosted]}\n")
    code, doc = _combine(pools["slow"], tmp_path / "one.yaml", tmp_path / "out")
    own = json.loads((pools["slow"] / "pr-bench-a" / "verdict.json").read_text())
    assert code == 1 and doc["status"] == own["status"]
    keep = ("metric", "verdict", "ratio", "ci", "p_value", "p_adjusted", "mde", "gated")
    assert [{k: r[k] for k in keep} for r in doc["results"]] == [
        {k: r[k] for k in keep} for r in own["results"]
    ]


@needs_binaries
def test_a_leg_without_a_verdict_or_an_artifact_makes_a_partial_verdict_that_names_it(pools, tmp_path):
    legs = tmp_path / "legs"
    shutil.copytree(pools["slow"], legs, symlinks=True)
    (legs / "pr-bench-b" / "verdict.json").unlink()  # b died before its first look
    (tmp_path / "three.yaml").write_text(TWO + "  - {name: c, labels: [self-hosted, pool-c]}\n")
    code, doc = _combine(legs, tmp_path / "three.yaml", tmp_path / "out")
    assert code == 1 and doc["status"] == "regression"  # a alone still sees it
    assert doc["partial"] is True and doc["pool"]["missing"] == ["b", "c"]
    states = {r["name"]: r["state"] for r in doc["pool"]["runners"]}
    assert states == {"a": pooled.COMPLETE, "b": pooled.FAILED, "c": pooled.MISSING}
    summary = (tmp_path / "out" / "summary.md").read_text()
    assert "(partial: b failed, c did not report)" in summary.splitlines()[0]


def test_no_leg_measured_is_a_usage_error(tmp_path):
    (tmp_path / "pool.yaml").write_text(TWO)
    (tmp_path / "legs").mkdir()
    code = cli.main(
        [
            "combine",
            "--legs",
            str(tmp_path / "legs"),
            "--suite",
            "pr",
            "--pool",
            str(tmp_path / "pool.yaml"),
            "--out",
            str(tmp_path / "out"),
        ]
    )
    assert code == 2 and not (tmp_path / "out" / "verdict.json").exists()


def test_the_product_pool_and_the_matrix_it_gives(tmp_path, monkeypatch, capsys):
    assert [leg.name for leg in pool.load_pool(ROOT / "bench-config" / "pool.yaml").legs("pr")] == ["tuned"]
    (tmp_path / "pool.yaml").write_text(
        TWO.replace(
            'client_cpus: "1"}',
            'client_cpus: "1", suites: [standard], scenarios: [large], timeout_minutes: 30}',
        )
        + "max_parallel: 1\n"
    )
    out = tmp_path / "github_output"
    monkeypatch.setenv("GITHUB_OUTPUT", str(out))
    for suite, names in (("pr", ["a"]), ("standard", ["a", "b"])):
        out.write_text("")
        assert (
            cli.main(["pool", "--suite", suite, "--pool", str(tmp_path / "pool.yaml"), "--github-output"])
            == 0
        )
        lines = dict(line.split("=", 1) for line in out.read_text().splitlines())
        legs = json.loads(lines["legs"])
        assert [leg["name"] for leg in legs] == names and lines["max_parallel"] == "1"
    assert legs[1] == {
        "name": "b",
        "labels": ["self-hosted", "pool-b"],
        "scenarios": "large",
        "server_cpus": "0",
        "client_cpus": "1",
        "timeout_minutes": 30,
        "rounds": "--repeats 8 --max-repeats 8",
    }


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("runners: []\n", "non-empty `runners:`"),
        ("runners:\n  - {name: A, labels: [x]}\n", "`name` must match"),
        ("runners:\n  - {name: a, labels: [x]}\n  - {name: a, labels: [y]}\n", "listed twice"),
        ("runners:\n  - {name: a, labels: [x]}\n  - {name: b, labels: [x, y]}\n", "also select runner b"),
        ("runners:\n  - {name: a, labels: [x], cpus: 3}\n", "unknown key 'cpus'"),
        ("runners:\n  - {name: a, labels: [x], server_cpus: two}\n", "CPU list"),
        ("runners:\n  - {name: a, labels: [x], timeout_minutes: 0}\n", "1..360"),
        ("runners:\n  - {name: a, labels: [x]}\nmax_parallel: 0\n", "max_parallel"),
        ("runners:\n  - {name: a, labels: [x], suites: [standard]}\n", "no runner takes suite 'pr'"),
        ("runners:\n  - {name: a, labels: [x], optional: yes please}\n", "`optional` must be true or false"),
        ("runners:\n  - {name: a, labels: [x], calibration_sha256: abc}\n", "64 lowercase hex digits"),
        ("rounds: {repeats: 8, looks: 1}\nrunners:\n  - {name: a, labels: [x]}\n", "`rounds` is a mapping"),
        ("rounds: {repeats: 9, max_repeats: 8}\nrunners:\n  - {name: a, labels: [x]}\n", "2 <= repeats"),
    ],
)
def test_a_bad_pool_file_is_refused_with_the_fix(tmp_path, text, says):
    (tmp_path / "pool.yaml").write_text(text)
    with pytest.raises(UsageError) as err:
        pool.load_pool(tmp_path / "pool.yaml").legs("pr")
    assert says in str(err.value) and str(tmp_path / "pool.yaml") in str(err.value)


P50 = "latency-1c/hft p50_us"


def _guard(key: str, why: str | None = None, mde: float | None = None) -> dict:
    """One row of a calibration record's `guards`."""
    series, metric = key.split()
    return {"series": series, "metric": metric, "guarded": why is None, "why_not": why, "mde": mde}


def _calibrated_pool(legs: Path, path: Path, rows: dict[str, list[dict]]) -> Path:
    """Each runner's record uploaded by its leg, and the pool file naming their digests (the
    base's pool.yaml: what makes combine believe a record)."""
    return pool_file(path, {n: {"calibration_sha256": record(legs, n, r)} for n, r in rows.items()})


@needs_binaries
def test_each_series_is_judged_by_the_runners_whose_calibration_guards_it(pools, tmp_path):
    legs = tmp_path / "legs"
    shutil.copytree(pools["slow"], legs, symlinks=True)
    b_row = _guard(P50, "A/A false alarms 3.0 % > 1 % on this runner")
    calibrated = _calibrated_pool(legs, tmp_path / "pool.yaml", {"a": [_guard(P50)], "b": [b_row]})
    code, doc = _combine(legs, calibrated, tmp_path / "out")
    assert code == 1 and _p50(doc)["gated"] and _p50(doc)["verdict"] == "regression"
    rows = {r["name"]: next(x for x in r["rows"] if x["metric"] == "p50_us") for r in doc["pool"]["runners"]}
    assert (rows["a"]["gated"], rows["a"]["weight"]) == (True, 1.0)
    assert (rows["b"]["gated"], rows["b"]["weight"]) == (False, 0.0)
    assert "(not judged here)" in (tmp_path / "out" / "summary.md").read_text()
    # Guarded by neither: not gated, and the verdict says why on each runner.
    a_row = _guard(P50, "MDE +12.0 % > 10 % on this runner")
    calibrated = _calibrated_pool(legs, tmp_path / "pool2.yaml", {"a": [a_row], "b": [b_row]})
    code, doc = _combine(legs, calibrated, tmp_path / "out2")
    assert code == 0 and not _p50(doc)["gated"]
    assert _p50(doc)["why_not_gated"] == (
        "a: MDE +12.0 % > 10 % on this runner; b: A/A false alarms 3.0 % > 1 % on this runner"
    )


def _row(metric: str, ratio: float, verdict: str, *, gated: bool = True) -> MetricResult:
    return MetricResult(
        "latency-1c",
        "hft",
        metric,
        gated,
        8,
        8,
        20000,
        threshold=1.10,
        verdict=verdict,
        ratio=ratio,
        ci=(ratio - 0.02, ratio + 0.02),
    )


def _own_leg(name: str, state: str, rows: list[MetricResult]) -> pooled.Leg:
    """A leg whose own verdict.json holds `rows`; measured (its sides are not read here)."""
    doc = {"results": [dataclasses.asdict(r) for r in rows]}
    return pooled.Leg(name, state, None, doc, base=Side("base"), head=Side("head"))


def test_a_runner_s_own_regression_is_not_averaged_away_and_is_named():
    """Runner b alone: P99 x1.30, a regression of its own test; pooled with a at x1.00 the
    estimate reads x1.02, "no change". The pool's row is a regression, and says who saw it."""
    pool_rows = [_row("p50_us", 1.01, NO_CHANGE), _row("p99_us", 1.02, NO_CHANGE)]
    legs = [
        _own_leg("a", pooled.COMPLETE, [_row("p50_us", 1.0, NO_CHANGE), _row("p99_us", 1.0, NO_CHANGE)]),
        _own_leg("b", pooled.COMPLETE, [_row("p50_us", 1.02, NO_CHANGE), _row("p99_us", 1.30, REGRESSION)]),
    ]
    alone = pooled.own_regressions(legs, pool_rows)
    assert [(a.runner, a.metric, a.decided) for a in alone] == [("b", "p99_us", True)]
    p50, p99 = pool_rows
    assert p50.verdict == NO_CHANGE and p99.verdict == REGRESSION and p99.ratio == 1.02
    assert p99.reason == "runner b alone: P99 +30.0%; pooled over the runners +2.0%"
    doc = {
        "results": [dataclasses.asdict(r) for r in pool_rows],
        "pool": {"runners": [], "alone": [dataclasses.asdict(a) for a in alone]},
    }
    lines = "\n".join(pool_text.pool_lines(Verdict.from_json(doc)))
    assert "**Regression on runner `b` alone**: latency-1c/hft P99 +30.0% (interval +28.0% … +32.0%)" in lines
    assert "pooled over the runners +2.0%" in lines


def test_only_a_complete_leg_s_own_gated_regression_decides():
    """An interrupted leg, a leg that compared other refs, or a row the leg did not gate: each
    is shown in the leg's own verdict, none overrules the pool."""
    rows = [_row("p99_us", 1.02, NO_CHANGE)]
    legs = [
        _own_leg("a", pooled.INTERRUPTED, [_row("p99_us", 1.30, REGRESSION)]),
        _own_leg("b", pooled.OTHER_REFS, [_row("p99_us", 1.30, REGRESSION)]),
        _own_leg("c", pooled.COMPLETE, [_row("p99_us", 1.30, REGRESSION, gated=False)]),
    ]
    assert pooled.own_regressions(legs, rows) == [] and rows[0].verdict == NO_CHANGE
    # A pooled regression stays one; the runner is listed, not credited with deciding it.
    rows = [_row("p99_us", 1.25, REGRESSION)]
    alone = pooled.own_regressions([_own_leg("d", pooled.COMPLETE, [_row("p99_us", 1.3, REGRESSION)])], rows)
    assert [a.decided for a in alone] == [False] and rows[0].reason is None


def test_a_calibration_record_gives_the_figures_and_a_bad_one_none():
    record = {
        "guards": [
            {"series": "latency-1c/hft", "metric": "p50_us", "mde": 1.004, "guarded": True},
            {"series": "latency-1c/hft", "metric": "p99_us", "mde": None, "guarded": False},
            {"series": "load/hft", "metric": "p99_us", "mde": float("inf"), "guarded": False},
        ]
    }
    assert pooled.record_mdes(record) == {"latency-1c/hft p50_us": 1.004}
    assert pooled.record_mdes({"guards": "no"}) == {} and pooled.record_mdes([1]) == {}


def _own(legs: Path, name: str) -> dict:
    return verdict(legs, name)


@needs_binaries
def test_weights_come_from_the_legs_calibration_records_and_a_leg_s_regression_stands(pools, tmp_path):
    """Real legs: `a` A/A, `b` with 30 µs more per order on its head only. b's record says it
    is far noisier, so the pooled estimate is almost a's alone ("no change"); b's own
    regression still fails the pool, by name."""
    legs = tmp_path / "legs"
    shutil.copytree(pools["one"], legs, symlinks=True)
    guarded = {k for name in ("a", "b") for k in _own(legs, name)["guarded"]}  # every gated row
    assert "latency-1c/hft p50_us" in guarded
    rows = {
        "a": [_guard(k, mde=1.004) for k in sorted(guarded)],
        "b": [_guard(k, mde=1.09) for k in sorted(guarded)],
    }
    calibrated = _calibrated_pool(legs, tmp_path / "pool.yaml", rows)
    code, doc = _combine(legs, calibrated, tmp_path / "out")
    w_a = (1 / np.log(1.004) ** 2) / (1 / np.log(1.004) ** 2 + 1 / np.log(1.09) ** 2)
    rows = {r["name"]: next(x for x in r["rows"] if x["metric"] == "p50_us") for r in doc["pool"]["runners"]}
    assert (rows["a"]["weight"], rows["b"]["weight"]) == (round(w_a, 4), round(1 - w_a, 4))
    assert rows["a"]["weight_from"] == rows["b"]["weight_from"] == "calibration"
    assert _own(legs, "b")["status"] == "regression" and _own(legs, "a")["status"] != "regression"
    assert code == 1 and doc["status"] == "regression" and _p50(doc)["verdict"] == "regression"
    assert _p50(doc)["ratio"] < 1.10 and _p50(doc)["reason"].startswith("runner b alone: P50 +")
    assert any(a["runner"] == "b" and a["decided"] for a in doc["pool"]["alone"])
    summary = (tmp_path / "out" / "summary.md").read_text()
    assert "**Regression on runner `b` alone**" in summary
    assert "Weights are fixed before the data: from each runner's calibration record" in summary
    # Without the records (and their digests): equal weights, and the pooled estimate sees
    # b's regression too.
    for name in ("a", "b"):
        (legs / f"pr-bench-{name}" / "calibration.json").unlink()
    code, doc = _combine(legs, pools["pool"], tmp_path / "out2")
    weights = [x["weight"] for r in doc["pool"]["runners"] for x in r["rows"] if x["metric"] == "p50_us"]
    assert code == 1 and weights == [0.5, 0.5] and _p50(doc)["ratio"] >= 1.10
    assert [a["decided"] for a in doc["pool"]["alone"] if a["metric"] == "p50_us"] == [False]


def test_a_leg_whose_build_ran_past_its_limit_failed_in_combines_words(tmp_path):
    """ab's verdict when a side's build ran past --build-timeout has no rounds: combine counts
    the leg failed (a required runner's fails the check), says why in its own words (the side
    and the limit, never the leg's text), and refuses nothing it would otherwise have read."""
    from hftbench.commands.combine import read_leg

    folder = tmp_path / "pr-bench-a"
    folder.mkdir()
    doc = {
        "status": "regression",
        "results": [],
        "pool_leg": "a",
        "base": {"run_ids": []},
        "head": {"run_ids": []},
        "build_timeout": {"side": "head", "timeout_s": 900.0, "why": "[click me](https://evil.example)"},
    }
    (folder / "verdict.json").write_text(json.dumps(doc))
    leg = read_leg("a", folder, {"name": "a"}, None)
    assert leg.state == pooled.FAILED and not leg.measured
    assert (
        leg.why == "head's build did not finish in 900 s: no round measured (the leg's build.log says more)"
    )
    doc["build_timeout"] = {"side": "`x`", "timeout_s": True}
    (folder / "verdict.json").write_text(json.dumps(doc))
    assert read_leg("a", folder, {}, None).why.startswith("a side's build did not finish: ")
    del doc["build_timeout"]
    (folder / "verdict.json").write_text(json.dumps(doc))
    assert read_leg("a", folder, {}, None).state == pooled.REFUSED  # no rounds, no reason: not believed
