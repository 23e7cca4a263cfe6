"""The history store (docs/history-store.md): runs by suite and month, an index, change points.

    <store>/index.json                      suites, shards, series, branches, runners
    <store>/shards/<suite>/<YYYY-MM>.json   the runs of one suite and month, in date order
    <store>/changepoints.json               written by `history changepoints`

Every write is atomic (fsio.write_atomic: temp file, fsync, rename), shard before index, so
a crash leaves at worst a run in its shard that the index does not count yet (the next add
recounts from the shards). A store that does not parse, or whose schema_version is newer
than STORE_SCHEMA_VERSION, is refused with StoreError and never written.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

from .. import metrics, results
from ..fsio import write_atomic
from ..measure.fingerprint import runner_id, stable_fields, tuned
from ..store_shapes import Index, RunEntry, Shard
from ..stored_verdict import StoredVerdict
from .entry import run_entry

STORE_SCHEMA_VERSION = 1
SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")  # a suite name or run_id safe as a path
MONTH = re.compile(r"^[0-9]{4}-(0[1-9]|1[0-2])$")  # a shard's month, from the run's started_at


class StoreError(Exception):
    """A store that cannot be read or written safely; the message names the file and the fix."""


def now_rfc3339() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


# --- reading and writing, refusing what we do not understand ---------------------------------


RESTORE = "restore it from the gh-pages history (git) — hftbench never overwrites a store it cannot read"


def read_doc(path: Path) -> dict[str, Any]:
    """A store JSON file, or StoreError when it does not parse or is from a newer hftbench."""
    try:
        text = path.read_text()
    except UnicodeDecodeError as exc:
        raise StoreError(f"{path}: corrupt store file (not UTF-8 at byte {exc.start}); {RESTORE}") from exc
    except OSError as exc:
        raise StoreError(f"{path}: cannot read it ({exc.strerror}); check its permissions") from exc
    if not text.strip():
        raise StoreError(f"{path}: corrupt store file (empty); {RESTORE}")
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        cut = (
            "" if text.rstrip().endswith("}") else " (cut short: truncated?)"
        )  # every store file is an object
        raise StoreError(
            f"{path}: corrupt store file (line {exc.lineno}: {exc.msg}{cut}); {RESTORE}"
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


def write_doc(path: Path, doc: Mapping[str, object]) -> None:
    write_atomic(path, json.dumps(doc, indent=1, sort_keys=False) + "\n")


def shard_path(store: Path, suite: str, month: str) -> Path:
    return store / "shards" / suite / f"{month}.json"


def load_index(store: Path) -> Index:
    """index.json, a fresh one for an empty or new folder; refuses shards without an index."""
    path = store / "index.json"
    if path.exists():
        doc = read_doc(path)
        if not isinstance(doc.get("suites", {}), dict):
            raise StoreError(f"{path}: corrupt store file (suites is not an object); {RESTORE}")
        return cast(Index, doc)
    if (store / "shards").exists():
        raise StoreError(f"{store}: shards/ but no index.json; restore index.json from git")
    return {
        "schema_version": STORE_SCHEMA_VERSION,
        "updated_at": None,
        "suites": {},
        "branches": [],
        "runners": {},
    }


def load_shard(store: Path, suite: str, month: str) -> Shard:
    path = shard_path(store, suite, month)
    if path.exists():
        doc = read_doc(path)
        runs = doc.get("runs")
        if not isinstance(runs, list) or not all(isinstance(r, dict) and "run_id" in r for r in runs):
            raise StoreError(f"{path}: corrupt store file (runs is not a list of runs); {RESTORE}")
        return cast(Shard, doc)
    return {"schema_version": STORE_SCHEMA_VERSION, "suite": suite, "month": month, "runs": []}


def iter_runs(store: Path, suite: str) -> list[RunEntry]:
    """Every stored run of a suite, oldest first (shards in month order, runs in date order)."""
    index = load_index(store)
    months = (index.get("suites", {}).get(suite) or {}).get("shards", [])
    return [run for month in sorted(months) for run in load_shard(store, suite, month)["runs"]]


# --- adding a run ------------------------------------------------------------------------------


def add_run(
    store: Path, run: results.Run | list[results.Run], verdict: StoredVerdict | None = None
) -> RunEntry:
    """Append (or replace, by run_id) a run, or one commit's rounds as one entry, with the
    verdict's stored copy (publish/store_text.stored_verdict); shard first, then the index,
    under the store's lock. Returns the entry."""
    last = run[-1] if isinstance(run, list) else run
    suite = last.suite or "adhoc"
    entry = run_entry(run, verdict)
    month = (entry["date"] or now_rfc3339())[:7]
    _check_path_names(suite, month, entry["run_id"])
    with locked(store):
        # Every file this add reads must parse before any is written: a corrupt one is refused.
        index = load_index(store)
        listed = (index.get("suites", {}).get(suite) or {}).get("shards", [])
        on_disk = [p.stem for p in (store / "shards" / suite).glob("*.json") if MONTH.match(p.stem)]
        shards = {m: load_shard(store, suite, m) for m in sorted({*listed, *on_disk, month})}
        shard = shards[month]
        runs = [r for r in shard["runs"] if r["run_id"] != entry["run_id"]]
        runs.append(entry)
        runs.sort(key=lambda r: (r.get("date") or "", r["run_id"]))
        shard["runs"] = runs
        write_doc(shard_path(store, suite, month), shard)
        _update_index(store, index, suite, shards, last)
    return entry


@contextlib.contextmanager
def locked(store: Path) -> Iterator[None]:
    """Hold the store's exclusive lock: flock(2) on the store folder itself, so no lock file
    lands in the published data. Two `history add` at once would otherwise both read the same
    shard and index and the later write would drop the other's run. Closing releases it."""
    store.mkdir(parents=True, exist_ok=True)
    fd = os.open(store, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _check_path_names(suite: str, month: str, run_id: str) -> None:
    """The suite, month and run_id come from a results.json the runner wrote: untrusted. Each
    becomes a path in the store (and the site), so each must be a plain name."""
    for what, value, pattern, shape in (
        ("suite name", suite, SAFE_NAME, "a plain name ([A-Za-z0-9._-])"),
        ("run_id", run_id, SAFE_NAME, "a plain name ([A-Za-z0-9._-])"),
        ("month of started_at", month, MONTH, "YYYY-MM (started_at must be RFC 3339)"),
    ):
        if not isinstance(value, str) or not pattern.match(value) or value in (".", ".."):
            raise StoreError(f"{what} {value!r} is not {shape}; refusing to use it as a path")


def _update_index(store: Path, index: Index, suite: str, shards: dict[str, Shard], run: results.Run) -> None:
    """Recount the suite from its shards (a crash between shard and index heals here)."""
    suites = index.setdefault("suites", {})
    info = suites.setdefault(suite, {"shards": [], "runs": 0, "series": [], "latest_run": None})
    info["shards"] = sorted(m for m, shard in shards.items() if shard["runs"])
    all_runs = [r for m in info["shards"] for r in shards[m]["runs"]]
    info["runs"] = len(all_runs)
    series = {(s["scenario"], s["client"]) for s in info.get("series", [])}
    series |= {(res["scenario"], res["client"]) for r in all_runs for res in r["results"]}
    info["series"] = [{"scenario": s, "client": c} for s, c in sorted(series)]
    latest = max(all_runs, key=lambda r: (r.get("date") or "", r["run_id"]))
    info["latest_run"] = latest["run_id"]
    branch = (run.git or {}).get("branch")
    index["branches"] = sorted(set(index.get("branches", [])) | ({branch} if branch else set()))
    runner = {**stable_fields(run.fingerprint), "tuned": tuned(run.fingerprint)}
    index.setdefault("runners", {})[runner_id(run.fingerprint)] = runner
    index["schema_version"] = STORE_SCHEMA_VERSION
    index["updated_at"] = now_rfc3339()
    write_doc(store / "index.json", index)


# --- baselines ----------------------------------------------------------------------------------


def baseline_runs(
    store: Path, *, suite: str, branch: str | None = "main", runner: str | None = None, last: int = 10
) -> list[RunEntry]:
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


def materialize(entries: list[RunEntry], out: Path, suite: str) -> list[Path]:
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
                "latency_us": {m.key: res.get(m.name) for m in (*metrics.STORE_PERCENTILES, metrics.MAX)},
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
        if not SAFE_NAME.match(str(entry["run_id"])):  # the store is data from gh-pages
            raise StoreError(f"stored run_id {entry['run_id']!r} is not a plain name; not used as a path")
        path = out / entry["run_id"]
        write_atomic(path / "results.json", json.dumps(run_doc) + "\n")
        paths.append(path)
    return paths
