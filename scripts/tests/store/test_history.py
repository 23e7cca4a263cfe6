"""The history store: format, sharding, atomic writes, refusal of corrupt / newer stores,
baselines by branch and runner, `compare` against the store, change points."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hftbench import cli
from hftbench.commands.compare import run_compare
from hftbench.judge.gates import load_gates
from hftbench.measure import fingerprint
from hftbench.publish import verdict_cells, verdict_text
from hftbench.publish.store_text import stored_verdict
from hftbench.results import load_run
from hftbench.store import history as hs
from hftbench.store.entry import run_entry
from hftbench.verdict import MetricResult, Verdict
from support.gate_synth import latency_run, result_doc, write_run

RUNNER_B = {
    "cpu_model": "Other CPU",
    "cores": 8,
    "kernel": "6.1.0-test",
    "governor": "performance",
    "isolated_cpus": "2-7",
    "smt": "off",
}


def _run(
    tmp_path,
    rng,
    run_id,
    *,
    date,
    branch="main",
    commit="a" * 40,
    scale=1.0,
    fingerprint=None,
    repeats=1,
    series=("large", "rust"),
    suite="pr",
    folder="runs",
    median_us=100.0,
):
    samples = [latency_run(rng, 10_000, median_us=median_us, tail_scale=scale) for _ in range(repeats)]
    docs = [result_doc(*series, x) for x in samples]
    return write_run(
        tmp_path / folder,
        run_id,
        {series: docs},
        suite=suite,
        commit=commit,
        branch=branch,
        date=date,
        fingerprint=fingerprint,
    )


def test_add_writes_the_documented_format(tmp_path):
    rng = np.random.default_rng(1)
    store = tmp_path / "store"
    run = _run(tmp_path, rng, "run_20261122T030000Z", date="2026-11-22T03:00:00Z", repeats=2)
    verdict = {
        "status": "regression",
        "base": {"commit": "b" * 40},
        "flags": [
            {"scenario": "large", "client": "rust", "metric": "p99_us", "ratio": 1.2, "verdict": "regression"}
        ],
    }
    (tmp_path / "verdict.json").write_text(json.dumps(verdict))
    assert (
        cli.main(
            ["history", "add", str(run), "--store", str(store), "--verdict", str(tmp_path / "verdict.json")]
        )
        == 0
    )
    _run(tmp_path, rng, "run_20261028T030000Z", date="2026-10-28T03:00:00Z")
    hs.add_run(store, load_run(tmp_path / "runs" / "run_20261028T030000Z"))

    index = json.loads((store / "index.json").read_text())
    assert index["schema_version"] == 1 and index["updated_at"].endswith("Z")
    suite = index["suites"]["pr"]
    assert suite["shards"] == ["2026-10", "2026-11"] and suite["runs"] == 2
    assert suite["series"] == [{"scenario": "large", "client": "rust"}]
    assert suite["latest_run"] == "run_20261122T030000Z"
    assert index["branches"] == ["main"]
    ((rid, runner),) = index["runners"].items()
    assert len(rid) == 12 and runner["cpu_model"] == "Test CPU" and runner["cores"] == 2

    shard = json.loads((store / "shards" / "pr" / "2026-11.json").read_text())
    assert shard["schema_version"] == 1 and shard["suite"] == "pr" and shard["month"] == "2026-11"
    (entry,) = shard["runs"]
    assert entry["run_id"] == "run_20261122T030000Z" and entry["commit"] == "a" * 40
    assert entry["runner"] == rid and entry["dirty"] is False and entry["message"] == "test commit"
    (res,) = entry["results"]
    assert res["ok"] == 20_000  # two repeats merged into one stored sample of the series
    assert res["histogram"].startswith("HISTF") and res["p99_us"] > res["p50_us"] > 0
    columns = dict(zip(verdict_cells.COLUMNS, verdict_cells.table_head_cells(0.95), strict=True))
    assert entry["verdict"] == {
        "status": "regression",
        "base": "b" * 40,
        "partial": False,
        "confidence": None,
        "looks": None,
        "flags": verdict["flags"],
        "gated": [],
        "headline": "❌ Regression",
        "columns": columns,
        "rows": [],
    }
    assert entry["rounds"] == 1 and "spread" not in res  # one run: no spread to draw
    assert not list(store.rglob(".*"))  # no temp file left behind


GOLDEN_VERDICT = Path(__file__).parents[1] / "fixtures" / "golden" / "expected" / "verdict.json"


def _table_cells(markdown: str) -> list[list[str]]:
    """Every row of the markdown's verdict tables (gated, then reported only), as cell texts."""
    lines = [ln for ln in markdown.splitlines() if ln.startswith("| ") and not ln.startswith("| | series")]
    return [[c.strip() for c in ln[1:-1].split(" | ")] for ln in lines]


def test_add_stores_the_headline_and_rows_verdict_text_renders(tmp_path):
    """What the dashboard shows of a verdict is stored rendered: the same headline and table
    cells as verdict-text's summary of that verdict.json (a real compare's: both tables, its
    failure rows said in a line), so the page formats nothing itself."""
    rng = np.random.default_rng(14)
    run = _run(tmp_path, rng, "run_20261126T010000Z", date="2026-11-26T01:00:00Z")
    store = tmp_path / "store"
    assert (
        cli.main(["history", "add", str(run), "--store", str(store), "--verdict", str(GOLDEN_VERDICT)]) == 0
    )
    stored = json.loads((store / "shards" / "pr" / "2026-11.json").read_text())["runs"][0]["verdict"]
    markdown = verdict_text.markdown(Verdict.from_json(json.loads(GOLDEN_VERDICT.read_text())))
    assert markdown.startswith(f"## {stored['headline']}\n")
    assert stored["headline"] == "❌ Regression: latency-1c/hft P99 +16.1%"
    head = next(ln for ln in markdown.splitlines() if ln.startswith("| | series"))
    assert [c.strip() for c in head[1:-1].split("|")] == list(stored["columns"].values())
    assert list(stored["columns"]) == list(verdict_cells.COLUMNS)
    table = _table_cells(markdown)
    assert [list(r["cells"].values()) for r in stored["rows"]] == table and len(table) == 8
    # the failure rows are gated on every series and said in a line, not a table row
    assert not [r for r in stored["rows"] if r["metric"] == "errors"]
    assert "No order failed on either side: latency-1c/hft, small/rust." in markdown
    assert [(r["metric"], r["gated"], r["verdict"]) for r in stored["rows"][:2]] == [
        ("p99_us", True, "regression"),
        ("p50_us", True, "no_change"),
    ]


def test_stored_rows_name_outside_text_plainly_on_one_line():
    """The markdown cell escapes a name for GitHub; the store keeps it as plain one-line text,
    which the page puts in a text node."""
    row = {
        "scenario": "a|b_c\nd",
        "client": "rust",
        "metric": "p99_us",
        "gated": True,
        "verdict": "inconclusive",
        "ratio": 1.05,
        "ci": [0.98, 1.12],
        "mde": float("inf"),
        "settle_runs": 40,
    }
    stored = stored_verdict(Verdict.from_json({"status": "inconclusive", "results": [row]})).to_json()
    # the dashboard's JSON.parse reads no Infinity: a never-reachable MDE is stored as null
    assert json.loads(json.dumps(stored, allow_nan=False))["gated"][0]["mde"] is None
    (cells,) = [r["cells"] for r in stored["rows"]]
    assert cells["series"] == "a|b_c d/rust" and cells["could_detect"] == "none (too few runs)"
    assert verdict_cells.table_row(MetricResult.from_json(row)).startswith("| 🟡 | a\\|b\\_c d/rust | P99 |")
    assert stored["headline"] == (
        "🟡 Inconclusive: 1 of 1 gated series × metrics undecided; about 40 runs a side would settle it"
    )


def test_a_commits_rounds_are_one_entry_with_their_spread(tmp_path):
    rng = np.random.default_rng(11)
    store = tmp_path / "store"
    for i in range(6):
        _run(tmp_path, rng, f"run_2026112{i}_head{i:02d}", date=f"2026-11-22T03:0{i}:00Z", folder="rounds")
    assert cli.main(["history", "add", str(tmp_path / "rounds"), "--store", str(store)]) == 0
    (entry,) = json.loads((store / "shards" / "pr" / "2026-11.json").read_text())["runs"]
    assert entry["rounds"] == 6 and entry["run_id"] == "run_20261120_head00"
    (res,) = entry["results"]
    assert res["ok"] == 60_000 and res["rounds"] == 6
    for metric in ("p50_us", "p99_us"):
        lo, hi = res["spread"][metric]
        assert lo < res[metric] < hi < 1.3 * lo, (metric, lo, res[metric], hi)


def test_a_suite_name_that_is_a_path_is_refused(tmp_path):
    rng = np.random.default_rng(12)
    run = _run(tmp_path, rng, "run_x", date="2026-11-22T03:00:00Z", suite="../../outside")
    assert cli.main(["history", "add", str(run), "--store", str(tmp_path / "store")]) == 2
    assert not (tmp_path / "outside").exists() and not list(tmp_path.rglob("outside*"))


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("run_id", "../../outside"),
        ("run_id", ".."),
        ("started_at", "../../outside"),
        ("started_at", "2026-13-01T00:00:00Z"),
    ],
)
def test_a_run_id_or_month_that_is_a_path_is_refused(tmp_path, field, value):
    """results.json comes from the runner: its run_id and its started_at (the shard's month)
    must not steer a write out of the store."""
    rng = np.random.default_rng(13)
    run = _run(tmp_path, rng, "run_x", date="2026-11-22T03:00:00Z")
    doc = json.loads((run / "results.json").read_text())
    doc[field] = value
    (run / "results.json").write_text(json.dumps(doc))
    store = tmp_path / "store"
    assert cli.main(["history", "add", str(run), "--store", str(store)]) == 2
    assert not list(tmp_path.rglob("outside*"))
    assert not (store / "shards").exists() and not (store / "index.json").exists()


def test_runs_in_a_shard_stay_in_date_order_and_readd_replaces(tmp_path):
    rng = np.random.default_rng(2)
    store = tmp_path / "store"
    for rid, date in (("run_b", "2026-11-22T05:00:00Z"), ("run_a", "2026-11-22T04:00:00Z")):
        hs.add_run(store, load_run(_run(tmp_path, rng, rid, date=date)))
    hs.add_run(store, load_run(tmp_path / "runs" / "run_a"))
    shard = json.loads((store / "shards" / "pr" / "2026-11.json").read_text())
    assert [r["run_id"] for r in shard["runs"]] == ["run_a", "run_b"]
    assert json.loads((store / "index.json").read_text())["suites"]["pr"]["runs"] == 2


@pytest.mark.parametrize("damage", ["corrupt", "newer"])
def test_corrupt_or_newer_store_is_refused_and_left_alone(tmp_path, damage):
    rng = np.random.default_rng(3)
    store = tmp_path / "store"
    hs.add_run(store, load_run(_run(tmp_path, rng, "run_1", date="2026-11-22T03:00:00Z")))
    index = store / "index.json"
    text = (
        '{"schema_version": 1, "suites": {' if damage == "corrupt" else '{"schema_version": 2, "suites": {}}'
    )
    index.write_text(text)
    run2 = _run(tmp_path, rng, "run_2", date="2026-11-22T04:00:00Z")
    shard_before = (store / "shards" / "pr" / "2026-11.json").read_text()
    with pytest.raises(hs.StoreError, match="corrupt" if damage == "corrupt" else "newer than this hftbench"):
        hs.add_run(store, load_run(run2))
    assert index.read_text() == text
    assert (store / "shards" / "pr" / "2026-11.json").read_text() == shard_before
    assert cli.main(["history", "add", str(run2), "--store", str(store)]) == 2


def test_baseline_same_branch_same_runner_not_dirty(tmp_path):
    rng = np.random.default_rng(4)
    store = tmp_path / "store"
    specs = [
        ("run_01", "main", None),
        ("run_02", "feature", None),
        ("run_03", "main", RUNNER_B),
        ("run_04", "main", None),
        ("run_05", "main", None),
    ]
    for i, (rid, branch, fp) in enumerate(specs):
        hs.add_run(
            store,
            load_run(_run(tmp_path, rng, rid, date=f"2026-11-22T0{i}:00:00Z", branch=branch, fingerprint=fp)),
        )
    ours = fingerprint.runner_id(load_run(tmp_path / "runs" / "run_01").fingerprint)
    picked = hs.baseline_runs(store, suite="pr", branch="main", runner=ours, last=2)
    assert [r["run_id"] for r in picked] == ["run_04", "run_05"]
    assert [r["run_id"] for r in hs.baseline_runs(store, suite="pr", branch="main", runner=ours)] == [
        "run_01",
        "run_04",
        "run_05",
    ]
    assert "branches: feature, main" in hs.why_no_baseline(store, suite="pr", branch="nope", runner=None)
    assert "runners:" in hs.why_no_baseline(store, suite="pr", branch="main", runner="000000000000")
    assert cli.main(["history", "baseline", "--store", str(store), "--suite", "pr", "--branch", "nope"]) == 2
    out = tmp_path / "baseline"
    assert cli.main(["history", "baseline", "--store", str(store), "--suite", "pr", "--out", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["run_01", "run_03", "run_04", "run_05"]


def test_compare_against_the_store(tmp_path):
    rng = np.random.default_rng(5)
    store = tmp_path / "store"
    gated = ("latency-1c", "hft")
    for i in range(8):
        run = _run(tmp_path, rng, f"run_0{i}", date=f"2026-11-22T0{i}:00:00Z", series=gated)
        hs.add_run(store, load_run(run))
    head = tmp_path / "head"
    for i in range(8):
        docs = [result_doc(*gated, latency_run(rng, 10_000, tail_scale=1.8))]
        write_run(head, f"run_1{i}", {gated: docs}, suite="pr", branch="feature")
    c = run_compare(store, head, load_gates())
    p99 = next(r for r in c.results if r.metric == "p99_us")
    assert c.base.runs == [f"run_0{i}" for i in range(8)]
    assert p99.verdict == "regression" and c.exit_code == 1


def test_changepoints_over_the_store(tmp_path):
    rng = np.random.default_rng(6)
    store = tmp_path / "store"
    for i in range(24):
        scale = 1.0 if i < 14 else 1.6  # the tail grows from run 14 on
        hs.add_run(
            store,
            load_run(
                _run(
                    tmp_path,
                    rng,
                    f"run_{i:02d}",
                    date=f"2026-11-{i + 1:02d}T03:00:00Z",
                    commit=f"{i:040x}",
                    scale=scale,
                )
            ),
        )
    assert cli.main(["history", "changepoints", "--store", str(store)]) == 0
    doc = json.loads((store / "changepoints.json").read_text())
    assert doc["schema_version"] == 1
    (cp,) = doc["series"]["pr/large/rust/p99_us"]
    assert cp["index"] == 14 and cp["run_id"] == "run_14" and cp["commit"] == f"{14:040x}"
    assert cp["change_pct"] > 10 and cp["after"] > cp["before"] and cp["p_value"] <= 0.01
    assert "pr/large/rust/p50_us" not in doc["series"]


def test_changepoints_are_found_per_runner(tmp_path):
    """Two runners of a pool take turns; B (a part 30 % faster) has a tail step from its 7th run.
    Searched apart, the level gap between them is no change point and B's step is found on B;
    searched mixed (as before), the step is lost in the gap and nothing is found."""
    rng = np.random.default_rng(7)
    store = tmp_path / "store"
    b_runs = 0
    for i in range(24):
        on_b = i % 2 == 1
        scale = 1.6 if on_b and b_runs >= 6 else 1.0
        b_runs += on_b
        part = {"fingerprint": RUNNER_B, "median_us": 70.0} if on_b else {}  # B: a part 30 % faster
        run = _run(
            tmp_path,
            rng,
            f"run_{i:02d}",
            date=f"2026-11-{i + 1:02d}T03:00:00Z",
            commit=f"{i:040x}",
            scale=scale,
            **part,
        )
        hs.add_run(store, load_run(run))
    runner_a = fingerprint.runner_id(load_run(tmp_path / "runs" / "run_00").fingerprint)
    runner_b = fingerprint.runner_id(RUNNER_B)
    shard = json.loads((store / "shards" / "pr" / "2026-11.json").read_text())
    p50 = {r["runner"]: r["results"][0]["p50_us"] for r in shard["runs"][:2]}
    assert 1.25 < p50[runner_a] / p50[runner_b] < 1.6  # the levels differ by about 30 %

    assert cli.main(["history", "changepoints", "--store", str(store)]) == 0
    doc = json.loads((store / "changepoints.json").read_text())
    entries = [cp for found in doc["series"].values() for cp in found]
    assert entries and {cp["runner"] for cp in entries} == {runner_b}, "nothing from the interleaving"
    assert "pr/large/rust/p50_us" not in doc["series"]
    (cp,) = doc["series"]["pr/large/rust/p99_us"]
    # B's 7th run is the store's 14th: index counts B's runs only.
    assert cp["runner"] == runner_b and cp["index"] == 6 and cp["run_id"] == "run_13"
    assert cp["commit"] == f"{13:040x}" and cp["change_pct"] > 10 and cp["p_value"] <= 0.01


def test_commit_and_job_links_come_from_the_ci_environment_only(tmp_path, monkeypatch):
    rng = np.random.default_rng(3)
    run = load_run(_run(tmp_path, rng, "run_20261122T030000Z", date="2026-11-22T03:00:00Z"))
    for key in ("GITHUB_SERVER_URL", "GITHUB_REPOSITORY", "GITHUB_RUN_ID"):
        monkeypatch.delenv(key, raising=False)
    local = run_entry(run)
    assert local["url"] is None and local["job_url"] is None
    monkeypatch.setenv("GITHUB_SERVER_URL", "https://github.com")
    monkeypatch.setenv("GITHUB_REPOSITORY", "acme/hft-bench")
    monkeypatch.setenv("GITHUB_RUN_ID", "4242")
    ci = run_entry(run)
    assert ci["url"] == "https://github.com/acme/hft-bench/commit/" + "a" * 40
    assert ci["job_url"] == "https://github.com/acme/hft-bench/actions/runs/4242"
