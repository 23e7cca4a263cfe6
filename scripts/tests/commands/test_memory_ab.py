"""`hftbench ab` with the real server and memory per order: a head that keeps 64 bytes of every
order (hft-server --inject-leak-bytes 64) fails the gate on that row, named in the headline, and
an A/A (conftest's pool_legs: leg a's plain `hftbench ab` of one commit against itself) reads
its memory row inside the threshold and passes."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hftbench import cli
from support.hftbench_fakes import ab_argv, server_repo

ROOT = Path(__file__).resolve().parents[3]
SERVER = ROOT / "bin" / "hft-server"
CLIENT = ROOT / "bin" / "client-hft"
BUILD = "mkdir -p bin && install -m 755 server.sh bin/hft-server"
MEMORY = "memory_bytes_per_order"

needs_binaries = pytest.mark.usefixtures("real_binaries")  # conftest.py: skips without bin/; measuring


def _repo(path: Path) -> Path:
    """Commits `fast` (the real server) then `leak` (64 bytes kept for every order)."""
    return server_repo(path, [("fast", ""), ("leak", "--inject-leak-bytes 64 ")])


def _memory_row(verdict: dict, scenario: str = "latency-1c") -> dict:
    (row,) = [r for r in verdict["results"] if r["metric"] == MEMORY and r["scenario"] == scenario]
    return row


@needs_binaries
def test_a_head_keeping_64_bytes_an_order_fails_on_memory_per_order(tmp_path):
    repo, out = _repo(tmp_path / "repo"), tmp_path / "ab"
    # 5,000 orders a cell (5,750 with the warm-up): the allocator's steps are a few bytes an
    # order here, the leak 64; 8 rounds, min_repeats.
    code = cli.main(
        ab_argv(
            repo,
            out,
            orders=5000,
            rounds=8,
            extra=("--build-cmd", BUILD, "--quiet"),
        )
    )
    verdict = json.loads((out / "verdict.json").read_text())
    row = _memory_row(verdict)
    assert row["gated"] and row["verdict"] == "regression", row
    assert row["ratio"] is None and row["ci"][0] > 32 and row["head_value"] - row["base_value"] > 32
    assert code == 1 and verdict["status"] == "regression"
    headline = (out / "summary.md").read_text().splitlines()[0]
    assert headline.startswith("## ❌ Regression") and "latency-1c/hft memory per order +" in headline
    # every measured cell read the server's memory at both ends, from its group or /proc
    for side in ("base", "head"):
        for run in sorted((out / side).glob("run_*")):
            (cell,) = json.loads((run / "results.json").read_text())["cells"]
            assert cell["server_memory_from"] in ("cgroup", "proc"), cell
            assert cell["server_memory_after_bytes"] >= cell["server_memory_before_bytes"] > 0


@needs_binaries
def test_an_aa_reads_memory_per_order_inside_the_threshold(pool_legs):
    verdict = json.loads((pool_legs["aa"] / "pr-bench-a" / "ab" / "verdict.json").read_text())
    row = _memory_row(verdict)
    assert row["gated"] and row["verdict"] in ("no_change", "slower", "faster"), row
    assert -32 < row["ci"][0] <= row["ci"][1] < 32
    # (the A/A's latency rows, 8 rounds on a shared host, are the host's business: not asserted)
    # The headline never names memory as a change; a no-change headline may state its band
    # ("within ±10% (memory per order: ±32 B/order)").
    headline = (pool_legs["aa"] / "pr-bench-a" / "ab" / "summary.md").read_text().splitlines()[0]
    assert not re.search(r"memory per order [+−-]\d", headline), headline
