"""The history store under abuse (issue 17): a truncated or corrupt file is refused by name and
never overwritten; two `hftbench history add` processes on one store at once keep both runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from hftbench import cli
from hftbench.results import load_run
from hftbench.store import history as hs
from support.gate_synth import latency_run, result_doc, write_run
from support.hftbench_fakes import REPO

HFTBENCH = [sys.executable, "-m", "hftbench"]


def _run(tmp_path: Path, rng, run_id: str, date: str) -> Path:
    docs = [result_doc("large", "rust", latency_run(rng, 2_000))]
    return write_run(tmp_path / "runs", run_id, {("large", "rust"): docs}, suite="pr", date=date)


def _snapshot(store: Path) -> dict[str, bytes]:
    return {str(p.relative_to(store)): p.read_bytes() for p in sorted(store.rglob("*")) if p.is_file()}


@pytest.fixture
def store(tmp_path):
    """A store with runs in October and November of suite pr."""
    rng = np.random.default_rng(17)
    path = tmp_path / "store"
    hs.add_run(path, load_run(_run(tmp_path, rng, "run_oct", "2026-10-30T03:00:00Z")))
    hs.add_run(path, load_run(_run(tmp_path, rng, "run_nov", "2026-11-20T03:00:00Z")))
    return path


def _truncate(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


DAMAGE = {
    # what a crash of a non-atomic writer (or a half-finished copy) leaves
    "index truncated": ("index.json", _truncate, "cut short: truncated?"),
    "index empty": ("index.json", lambda p: p.write_bytes(b""), "(empty)"),
    "shard truncated": ("shards/pr/2026-11.json", _truncate, "cut short: truncated?"),
    # a shard this add does not write to: still read, so refused before anything is written
    "other month's shard truncated": ("shards/pr/2026-10.json", _truncate, "cut short: truncated?"),
    "shard not UTF-8": (
        "shards/pr/2026-11.json",
        lambda p: p.write_bytes(b"\xff\xfe{" + p.read_bytes()),
        "UTF-8",
    ),
    "shard without runs": ("shards/pr/2026-11.json", lambda p: p.write_text('{"schema_version": 1}'), "runs"),
}


@pytest.mark.parametrize("damage", DAMAGE)
def test_a_damaged_store_file_is_refused_by_name_and_never_written(store, tmp_path, damage, capsys):
    name, spoil, why = DAMAGE[damage]
    spoil(store / name)
    before = _snapshot(store)
    new = _run(tmp_path, np.random.default_rng(1), "run_new", "2026-11-22T03:00:00Z")
    assert cli.main(["history", "add", str(new), "--store", str(store)]) == 2
    err = capsys.readouterr().err
    assert f"{store / name}: corrupt store file" in err and why in err, err
    assert "restore it from the gh-pages history" in err, err
    assert _snapshot(store) == before  # nothing written, no temp file left
    assert cli.main(["history", "changepoints", "--store", str(store)]) == 2
    assert f"{store / name}: corrupt store file" in capsys.readouterr().err
    assert _snapshot(store) == before


def _blocked_on(store: Path) -> set[int]:
    """PIDs waiting in flock(2) for the store folder's lock (/proc/locks '->' lines)."""
    inode = os.stat(store).st_ino
    waiting = set()
    for line in Path("/proc/locks").read_text().splitlines():
        fields = line.split()
        blocked = len(fields) > 6 and fields[1] == "->" and fields[2] == "FLOCK"
        if blocked and int(fields[6].rsplit(":", 1)[1]) == inode:
            waiting.add(int(fields[5]))
    return waiting


def test_two_adds_at_once_keep_both_runs(store, tmp_path):
    rng = np.random.default_rng(2)
    runs = [_run(tmp_path, rng, f"run_{i}", f"2026-11-2{i}T04:00:00Z") for i in (1, 2)]
    # The barrier: while the test holds the store's lock, both real processes start and
    # block in flock; released together, they race for it, so the race is certain every time.
    with hs.locked(store):
        procs = [
            subprocess.Popen(
                [*HFTBENCH, "history", "add", str(run), "--store", str(store)],
                cwd=REPO,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for run in runs
        ]
        try:
            deadline = time.monotonic() + 60
            pids = {p.pid for p in procs}
            while _blocked_on(store) != pids:
                finished = [p for p in procs if p.poll() is not None]
                assert not finished, f"an add did not wait for the store's lock: {finished[0].communicate()}"
                assert time.monotonic() < deadline, "the adds never blocked on the store's lock"
                time.sleep(0.02)
        except BaseException:
            for p in procs:
                p.kill()
            raise
    for p in procs:
        out, err = p.communicate(timeout=60)
        assert p.returncode == 0, err
    runs_in_shard = [r["run_id"] for r in hs.load_shard(store, "pr", "2026-11")["runs"]]
    assert runs_in_shard == ["run_nov", "run_1", "run_2"]
    index = hs.load_index(store)
    assert index["suites"]["pr"]["runs"] == 4 and index["suites"]["pr"]["latest_run"] == "run_2"
    assert not [p for p in store.rglob(".*")]


@pytest.mark.parametrize("commit", ["--output=/tmp/pwned", "main~3", "abc12", "A" * 40, "a" * 41])
def test_a_stored_baseline_commit_that_is_not_a_sha_never_reaches_git(tmp_path, capsys, commit):
    """main-bench passes `history baseline --commit`'s answer to git: the store is data."""
    rng = np.random.default_rng(21)
    store = tmp_path / "store"
    hs.add_run(store, load_run(_run(tmp_path, rng, "run_01", "2026-11-22T01:00:00Z")))
    shard = store / "shards" / "pr" / "2026-11.json"
    shard.write_text(shard.read_text().replace('"' + "a" * 40 + '"', json.dumps(commit)))
    args = ["history", "baseline", "--store", str(store), "--suite", "pr", "--commit"]
    assert cli.main(args) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and str(store) in captured.err
    assert "not a 7 to 40 digit lowercase hex sha" in captured.err and "restore it" in captured.err


def test_a_stored_baseline_sha_is_printed(tmp_path, capsys):
    rng = np.random.default_rng(22)
    store = tmp_path / "store"
    hs.add_run(store, load_run(_run(tmp_path, rng, "run_01", "2026-11-22T01:00:00Z")))
    assert cli.main(["history", "baseline", "--store", str(store), "--suite", "pr", "--commit"]) == 0
    assert capsys.readouterr().out.strip() == "a" * 40
