"""`hftbench combine` over real legs: two "runners" on this host, the second with its server
on the other CPU and every order 10 µs slower on both sides (a slower machine, 30 % or more
above the first in absolute latency), judged together; and `hftbench pool`, the matrix."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from hftbench import cli, pool
from hftbench.errors import UsageError
from hftbench.judge import pooled

ROOT = Path(__file__).resolve().parents[2]
SERVER = ROOT / "bin" / "hft-server"
BUILD = "mkdir -p bin && install -m 755 server.sh bin/hft-server"
needs_binaries = pytest.mark.skipif(
    not (os.access(SERVER, os.X_OK) and os.access(ROOT / "bin" / "client-hft", os.X_OK)),
    reason="needs bin/hft-server and bin/client-hft (make build)",
)
TWO = """runners:
  - {name: a, labels: [self-hosted, pool-a]}
  - {name: b, labels: [self-hosted, pool-b], server_cpus: "0", client_cpus: "1"}
"""


def _repo(path: Path) -> Path:
    path.mkdir()
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    for name, extra in (("fast", ""), ("slow", "--inject-stall-us 30 --inject-stall-every 1 ")):
        (path / "server.sh").write_text(f'#!/bin/sh\nexec {SERVER} {extra}"$@"\n')
        for args in (
            ("add", "server.sh"),
            ("-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", name),
        ):
            subprocess.run(["git", "-C", str(path), *args], check=True, capture_output=True)
    return path


def _leg(repo: Path, legs: Path, name: str, head: str, *, env: dict, flags: tuple = ()) -> None:
    """One leg as bench.yml's pr-bench leaves it: <legs>/pr-bench-<name>/{ab/, verdict.json}."""
    out = legs / f"pr-bench-{name}"
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        code = cli.main([
            "ab", "--repo", str(repo), "--base", "HEAD~1", "--head", head, "--scenarios", "latency-1c",
            "--clients", "hft", "--orders", "2000", "--repeats", "8", "--max-repeats", "8",
            "--out", str(out / "ab"), "--build-cmd", BUILD, "--quiet", *flags,
        ])  # fmt: skip
    finally:
        for k, v in saved.items():
            os.environ.pop(k) if v is None else os.environ.__setitem__(k, v)
    assert code in (0, 1)
    shutil.copy(out / "ab" / "verdict.json", out / "verdict.json")


@pytest.fixture(scope="module")
def pools(tmp_path_factory):
    """{"aa": legs folder, "slow": legs folder}, each with legs a and b, and the pool file."""
    tmp = tmp_path_factory.mktemp("pool")
    repo = _repo(tmp / "repo")
    (tmp / "pool.yaml").write_text(TWO)
    found = {"pool": tmp / "pool.yaml"}
    for case, head in (("aa", "HEAD~1"), ("slow", "HEAD")):
        found[case] = tmp / case
        _leg(repo, found[case], "a", head, env={})
        _leg(repo, found[case], "b", head, env={"HFTBENCH_SERVER_CPUS": "0", "HFTBENCH_CLIENT_CPUS": "1"},
             flags=("--server-flags", "--inject-delay-us 10"))  # fmt: skip
    return found


def _combine(legs: Path, pool_file: Path, out: Path) -> tuple[int, dict]:
    code = cli.main(["combine", "--legs", str(legs), "--prefix", "pr-bench-", "--suite", "pr",
                     "--pool", str(pool_file), "--out", str(out)])  # fmt: skip
    return code, json.loads((out / "verdict.json").read_text())


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


@needs_binaries
def test_a_pool_of_one_is_that_runner_s_own_verdict(pools, tmp_path):
    (tmp_path / "one.yaml").write_text("runners:\n  - {name: a, labels: [self-hosted]}\n")
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
    code = cli.main(["combine", "--legs", str(tmp_path / "legs"), "--suite", "pr", "--pool",
                     str(tmp_path / "pool.yaml"), "--out", str(tmp_path / "out")])  # fmt: skip
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
    assert legs[1] == {"name": "b", "labels": ["self-hosted", "pool-b"], "scenarios": "large",
                       "server_cpus": "0", "client_cpus": "1", "timeout_minutes": 30}  # fmt: skip


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
    ],
)
def test_a_bad_pool_file_is_refused_with_the_fix(tmp_path, text, says):
    (tmp_path / "pool.yaml").write_text(text)
    with pytest.raises(UsageError) as err:
        pool.load_pool(tmp_path / "pool.yaml").legs("pr")
    assert says in str(err.value) and str(tmp_path / "pool.yaml") in str(err.value)


def _calibrated(legs: Path, name: str, guarded: list[str], why_not: dict[str, str]) -> None:
    """Leg `name` as a runner with a calibration record: what its verdict.json says it guards."""
    path = legs / f"pr-bench-{name}" / "verdict.json"
    doc = json.loads(path.read_text())
    doc["calibration"] = f"/etc/hft-bench/{name}.json"
    doc["guarded"] = guarded
    doc["unguarded"] = [
        {"series": k.split()[0], "metric": k.split()[1], "why": w} for k, w in why_not.items()
    ]
    path.write_text(json.dumps(doc))


@needs_binaries
def test_each_series_is_judged_by_the_runners_whose_calibration_guards_it(pools, tmp_path):
    legs = tmp_path / "legs"
    shutil.copytree(pools["slow"], legs, symlinks=True)
    _calibrated(legs, "a", ["latency-1c/hft p50_us"], {})
    _calibrated(legs, "b", [], {"latency-1c/hft p50_us": "A/A false alarms 3.0 % > 1 % on this runner"})
    code, doc = _combine(legs, pools["pool"], tmp_path / "out")
    assert code == 1 and _p50(doc)["gated"] and _p50(doc)["verdict"] == "regression"
    rows = {r["name"]: next(x for x in r["rows"] if x["metric"] == "p50_us") for r in doc["pool"]["runners"]}
    assert (rows["a"]["gated"], rows["a"]["weight"]) == (True, 1.0)
    assert (rows["b"]["gated"], rows["b"]["weight"]) == (False, 0.0)
    assert "(not judged here)" in (tmp_path / "out" / "summary.md").read_text()
    # Guarded by neither: not gated, and the verdict says why on each runner.
    _calibrated(legs, "a", [], {"latency-1c/hft p50_us": "MDE +12.0 % > 10 % on this runner"})
    code, doc = _combine(legs, pools["pool"], tmp_path / "out2")
    assert code == 0 and not _p50(doc)["gated"]
    assert _p50(doc)["why_not_gated"] == (
        "a: MDE +12.0 % > 10 % on this runner; b: A/A false alarms 3.0 % > 1 % on this runner"
    )
