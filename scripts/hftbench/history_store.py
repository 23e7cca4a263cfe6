"""The history store (docs/history-store.md): runs by suite and month, an index, change points.

    <store>/index.json                      suites, shards, series, branches, runners
    <store>/shards/<suite>/<YYYY-MM>.json   the runs of one suite and month, in date order
    <store>/changepoints.json               written by `history changepoints`

Every write is atomic (temp file in the same folder, fsync, rename), shard before index, so
a crash leaves at worst a run in its shard that the index does not count yet (the next add
recounts from the shards). A store that does not parse, or whose schema_version is newer
than STORE_SCHEMA_VERSION, is refused with StoreError and never written.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from . import results

STORE_SCHEMA_VERSION = 1
METRIC_KEYS = ("p50_us", "p90_us", "p99_us", "p999_us", "max_us", "throughput_rps", "errors")


class StoreError(Exception):
    """A store that cannot be read or written safely; the message names the file and the fix."""


def now_rfc3339() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


# --- the runner fingerprint -----------------------------------------------------------------

STABLE_FIELDS = ("cpu_model", "cores", "kernel", "governor", "isolcpus", "smt")


def stable_fields(fingerprint: dict[str, Any]) -> dict[str, Any]:
    """The host fields that make runs comparable (not load, not hostname).

    Read from the top level, else from fingerprint.py's `tuning.knobs.<name>.value`.
    """
    knobs = (fingerprint.get("tuning") or {}).get("knobs") or {}
    out: dict[str, Any] = {}
    for name in STABLE_FIELDS:
        value = fingerprint.get(name)
        if value is None and isinstance(knobs.get(name), dict):
            value = knobs[name].get("value")
        if value is None and name == "isolcpus":
            value = fingerprint.get("isolated_cpus")
        out[name] = value
    # Pinned runs compare only with runs pinned alike; unpinned ones keep their old id.
    if fingerprint.get("placement"):
        out["placement"] = fingerprint["placement"]
    return out


def runner_id(fingerprint: dict[str, Any]) -> str:
    """A short hash of the stable host fields: runs on the same runner share it.

    A fingerprint that is only {"id": …} (a run materialized from the store) keeps its id.
    """
    if isinstance(fingerprint.get("id"), str):
        return fingerprint["id"]
    blob = json.dumps(stable_fields(fingerprint), sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:12]


def _tuned(fingerprint: dict[str, Any]) -> bool | None:
    knobs = (fingerprint.get("tuning") or {}).get("knobs") or {}
    statuses = [k.get("status") for k in knobs.values() if isinstance(k, dict)]
    judged = [s for s in statuses if s in ("tuned", "not tuned")]
    return all(s == "tuned" for s in judged) if judged else None


# --- reading and writing, refusing what we do not understand ---------------------------------


def read_doc(path: Path) -> dict[str, Any]:
    """A store JSON file, or StoreError when it does not parse or is from a newer hftbench."""
    try:
        doc = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise StoreError(
            f"{path}: corrupt store file (line {exc.lineno}: {exc.msg}); restore it from the gh-pages "
            "history (git) — hftbench never overwrites a store it cannot read"
        ) from exc
    if not isinstance(doc, dict):
        raise StoreError(f"{path}: corrupt store file (not a JSON object); restore it from git")
    version = doc.get("schema_version")
    if not isinstance(version, int):
        raise StoreError(f"{path}: no integer schema_version; restore it from git")
    if version > STORE_SCHEMA_VERSION:
        raise StoreError(
            f"{path}: store schema_version {version} is newer than this hftbench's "
            f"{STORE_SCHEMA_VERSION}; upgrade hftbench (pip install -e scripts/) instead of writing to it"
        )
    return doc


def write_atomic(path: Path, text: str) -> None:
    """Write a file so a reader never sees half of it (temp file in the same folder, fsync, rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_doc(path: Path, doc: dict[str, Any]) -> None:
    write_atomic(path, json.dumps(doc, indent=1, sort_keys=False) + "\n")


def shard_path(store: Path, suite: str, month: str) -> Path:
    return store / "shards" / suite / f"{month}.json"


def load_index(store: Path) -> dict[str, Any]:
    """index.json, a fresh one for an empty or new folder; refuses shards without an index."""
    path = store / "index.json"
    if path.exists():
        return read_doc(path)
    if (store / "shards").exists():
        raise StoreError(f"{store}: shards/ but no index.json; restore index.json from git")
    return {
        "schema_version": STORE_SCHEMA_VERSION,
        "updated_at": None,
        "suites": {},
        "branches": [],
        "runners": {},
    }


def load_shard(store: Path, suite: str, month: str) -> dict[str, Any]:
    path = shard_path(store, suite, month)
    if path.exists():
        return read_doc(path)
    return {"schema_version": STORE_SCHEMA_VERSION, "suite": suite, "month": month, "runs": []}


def iter_runs(store: Path, suite: str) -> list[dict[str, Any]]:
    """Every stored run of a suite, oldest first (shards in month order, runs in date order)."""
    index = load_index(store)
    months = (index.get("suites", {}).get(suite) or {}).get("shards", [])
    return [run for month in sorted(months) for run in load_shard(store, suite, month)["runs"]]


# --- adding a run ------------------------------------------------------------------------------


def run_entry(run: results.Run, verdict: dict[str, Any] | None = None) -> dict[str, Any]:
    """A run folder as one store entry (one result per scenario × client; repeats merged)."""
    from .stats import decode

    cells: dict[tuple[str, str], list[results.ClientResult]] = {}
    for cell in run.cells:
        if cell.ok and cell.result is not None:
            cells.setdefault((cell.scenario, cell.client), []).append(cell.result)
    out = []
    for (scenario, client), res in cells.items():
        hist = None
        for r in res:  # repeats of one run are one sample of the series: merge their histograms
            if r.histogram_data:
                h = decode(r.histogram_data)
                hist = h if hist is None else (hist.add(h) or hist)

        def q(pct: float, hist=hist) -> float | None:
            return round(hist.get_value_at_percentile(pct) / 1000.0, 3) if hist else None

        ok, errors = sum(r.ok for r in res), sum(r.errors for r in res)
        duration = sum(r.duration_s for r in res)
        out.append(
            {
                "scenario": scenario,
                "client": client,
                "orders": sum(r.orders for r in res),
                "ok": ok,
                "errors": errors,
                "p50_us": q(50),
                "p90_us": q(90),
                "p99_us": q(99),
                "p999_us": q(99.9),
                "max_us": round(hist.get_max_value() / 1000.0, 3) if hist else None,
                "throughput_rps": round(ok / duration, 1) if duration > 0 else 0.0,
                "histogram": hist.encode().decode() if hist else None,
            }
        )
    git = run.git or {}
    sha = git.get("commit")
    return {
        "run_id": run.run_id,
        "date": run.started_at,
        "commit": sha,
        "branch": git.get("branch"),
        "message": (git.get("message") or "").splitlines()[0] if git.get("message") else "",
        "author": git.get("author"),
        "url": git.get("url") or _commit_url(sha),
        "runner": runner_id(run.fingerprint),
        "dirty": bool(git.get("dirty")),
        "results": out,
        "verdict": store_verdict(verdict) if verdict else None,
    }


def _commit_url(sha: str | None) -> str | None:
    server, repo = os.environ.get("GITHUB_SERVER_URL"), os.environ.get("GITHUB_REPOSITORY")
    return f"{server}/{repo}/commit/{sha}" if sha and server and repo else None


def store_verdict(verdict: dict[str, Any]) -> dict[str, Any]:
    """verdict.json (compare) reduced to the store's verdict object."""
    base = verdict.get("base") or {}
    return {
        "status": verdict["status"],
        "base": base.get("commit") or (base.get("runs") or [base.get("label")])[-1],
        "flags": [
            {k: f.get(k) for k in ("scenario", "client", "metric", "ratio", "verdict")}
            for f in verdict.get("flags", [])
        ],
    }


def add_run(store: Path, run: results.Run, verdict: dict[str, Any] | None = None) -> dict[str, Any]:
    """Append (or replace, by run_id) a run; shard first, then the index. Returns the entry."""
    store.mkdir(parents=True, exist_ok=True)
    index = load_index(store)  # refuses a corrupt / newer store before anything is written
    entry = run_entry(run, verdict)
    suite = run.suite or "adhoc"
    month = (entry["date"] or now_rfc3339())[:7]
    shard = load_shard(store, suite, month)
    runs = [r for r in shard["runs"] if r["run_id"] != entry["run_id"]]
    runs.append(entry)
    runs.sort(key=lambda r: (r.get("date") or "", r["run_id"]))
    shard["runs"] = runs
    write_doc(shard_path(store, suite, month), shard)
    _update_index(store, index, suite, month, run)
    return entry


def _update_index(store: Path, index: dict[str, Any], suite: str, month: str, run: results.Run) -> None:
    suites = index.setdefault("suites", {})
    info = suites.setdefault(suite, {"shards": [], "runs": 0, "series": [], "latest_run": None})
    info["shards"] = sorted(set(info["shards"]) | {month})
    all_runs = [r for m in info["shards"] for r in load_shard(store, suite, m)["runs"]]
    info["runs"] = len(all_runs)
    series = {(s["scenario"], s["client"]) for s in info.get("series", [])}
    series |= {(res["scenario"], res["client"]) for r in all_runs for res in r["results"]}
    info["series"] = [{"scenario": s, "client": c} for s, c in sorted(series)]
    latest = max(all_runs, key=lambda r: (r.get("date") or "", r["run_id"]))
    info["latest_run"] = latest["run_id"]
    branch = (run.git or {}).get("branch")
    index["branches"] = sorted(set(index.get("branches", [])) | ({branch} if branch else set()))
    runner = {**stable_fields(run.fingerprint), "tuned": _tuned(run.fingerprint)}
    index.setdefault("runners", {})[runner_id(run.fingerprint)] = runner
    index["schema_version"] = STORE_SCHEMA_VERSION
    index["updated_at"] = now_rfc3339()
    write_doc(store / "index.json", index)


# --- baselines ----------------------------------------------------------------------------------


def baseline_runs(
    store: Path, *, suite: str, branch: str | None = "main", runner: str | None = None, last: int = 10
) -> list[dict[str, Any]]:
    """The last `last` runs of `suite` on `branch` and `runner` (None = any), oldest first.

    Dirty runs (uncommitted changes) are never a baseline.
    """
    picked = [
        r
        for r in iter_runs(store, suite)
        if (branch is None or r.get("branch") == branch)
        and (runner is None or r.get("runner") == runner)
        and not r.get("dirty")
    ]
    return picked[-last:] if last > 0 else picked


def why_no_baseline(store: Path, *, suite: str, branch: str | None, runner: str | None) -> str:
    """Which filter left no baseline, in words, with what the store does have."""
    runs = iter_runs(store, suite)
    if not runs:
        return f"the store has no run of suite {suite!r}"
    on_branch = [r for r in runs if branch is None or r.get("branch") == branch]
    if not on_branch:
        have = sorted({str(r.get("branch")) for r in runs})
        return f"no run of suite {suite!r} on branch {branch!r} (branches: {', '.join(have)}); pass --branch"
    on_runner = [r for r in on_branch if runner is None or r.get("runner") == runner]
    if not on_runner:
        have = sorted({str(r.get("runner")) for r in on_branch})
        return f"no run on runner {runner!r} (runners: {', '.join(have)}); pass --runner"
    return f"all {len(on_runner)} matching runs are dirty (uncommitted changes), never a baseline"


def materialize(entries: list[dict[str, Any]], out: Path, suite: str) -> list[Path]:
    """Write stored runs as run folders (results.json with one cell per series) under `out`.

    The cells carry what the gate reads (counts, throughput, histogram), not a full client
    result: these folders are for `compare`, not for the schema validator.
    """
    paths = []
    for entry in entries:
        cells = []
        for res in entry["results"]:
            doc = {
                "client": res["client"],
                "scenario": res["scenario"],
                "orders": res.get("orders", 0),
                "ok": res.get("ok", 0),
                "errors": res.get("errors", 0),
                "throughput_rps": res.get("throughput_rps") or 0.0,
                "latency_us": {
                    k[:-3]: res.get(k) for k in ("p50_us", "p90_us", "p99_us", "p999_us", "max_us")
                },
                "histogram": {"format": "hdr-v2-deflate-base64", "unit": "ns", "data": res.get("histogram")},
            }
            cells.append(
                {"scenario": res["scenario"], "client": res["client"], "status": "ok", "result": doc}
            )
        run_doc = {
            "schema_version": results.RESULTS_SCHEMA_VERSION,
            "run_id": entry["run_id"],
            "suite": suite,
            "started_at": entry.get("date"),
            "finished_at": entry.get("date"),
            "complete": True,
            "fingerprint": {"id": entry.get("runner")},
            "git": {k: entry.get(k) for k in ("commit", "branch", "dirty", "message", "author")},
            "repeats": 1,
            "cells": cells,
        }
        path = out / entry["run_id"]
        write_atomic(path / "results.json", json.dumps(run_doc) + "\n")
        paths.append(path)
    return paths
