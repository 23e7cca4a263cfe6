"""Real legs of a pool for `hftbench combine`'s tests (test_combine.py, test_combine_forged.py):
a repository of two commits whose server is bin/hft-server, the second one slowed, and each
leg as bench.yml's pr-bench leaves it (`hftbench ab` + its verdict.json beside ab/, with the
runner's name the matrix gave it)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest
from hftbench import cli

from support.hftbench_fakes import server_repo

ROOT = Path(__file__).resolve().parents[3]
SERVER = ROOT / "bin" / "hft-server"
BUILD = "mkdir -p bin && install -m 755 server.sh bin/hft-server"
needs_binaries = pytest.mark.usefixtures("real_binaries")  # conftest.py: skips without bin/; measuring
# The legs run 8 rounds a side and stop (--repeats 8 --max-repeats 8): one look, as the
# pool's `rounds` says, which is what combine holds them to.
ROUNDS = "rounds: {repeats: 8, max_repeats: 8}\n"
TWO = (
    ROUNDS
    + """runners:
  - {name: a, labels: [self-hosted, pool-a]}
  - {name: b, labels: [self-hosted, pool-b], server_cpus: "0", client_cpus: "1"}
"""
)
B_PLACEMENT = {"HFTBENCH_SERVER_CPUS": "0", "HFTBENCH_CLIENT_CPUS": "1"}


def make_repo(path: Path) -> Path:
    """Commits `fast` then `slow` (30 us more per order: a stall on every order)."""
    return server_repo(path, [("fast", ""), ("slow", "--inject-stall-us 30 --inject-stall-every 1 ")])


def make_leg(repo: Path, legs: Path, name: str, head: str, *, env: dict, flags: tuple = ()) -> None:
    """One leg as bench.yml's pr-bench leaves it: <legs>/pr-bench-<name>/{ab/, verdict.json}."""
    out = legs / f"pr-bench-{name}"
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        code = cli.main(
            [
                "ab",
                "--repo",
                str(repo),
                "--base",
                "HEAD~1",
                "--head",
                head,
                "--scenarios",
                "latency-1c",
                "--clients",
                "hft",
                "--orders",
                "2000",
                "--repeats",
                "8",
                "--max-repeats",
                "8",
                "--out",
                str(out / "ab"),
                "--build-cmd",
                BUILD,
                "--quiet",
                *flags,
            ]
        )
    finally:
        for k, v in saved.items():
            os.environ.pop(k) if v is None else os.environ.__setitem__(k, v)
    assert code in (0, 1)
    doc = json.loads((out / "ab" / "verdict.json").read_text())
    doc["pool_leg"] = name  # as hftbench pr-leg sets it, from the matrix
    (out / "verdict.json").write_text(json.dumps(doc, indent=2))


def combine(legs: Path, pool_file: Path, out: Path, *extra: str) -> tuple[int, dict]:
    code = cli.main(
        [
            "combine",
            "--legs",
            str(legs),
            "--prefix",
            "pr-bench-",
            "--suite",
            "pr",
            "--pool",
            str(pool_file),
            "--out",
            str(out),
            *extra,
        ]
    )
    path = out / "verdict.json"
    return code, json.loads(path.read_text()) if path.is_file() else {}


def verdict(legs: Path, name: str) -> dict:
    return json.loads((legs / f"pr-bench-{name}" / "verdict.json").read_text())


def record(legs: Path, name: str, rows: list[dict]) -> str:
    """The runner's calibration.json, as its leg uploads it beside verdict.json; its sha256,
    what pool.yaml's calibration_sha256 holds for the runner."""
    path = legs / f"pr-bench-{name}" / "calibration.json"
    path.write_text(json.dumps({"guards": rows}))
    return hashlib.sha256(path.read_bytes()).hexdigest()


def pool_file(path: Path, runners: dict[str, dict]) -> Path:
    """TWO with per-runner keys added (calibration_sha256, optional)."""
    lines = [ROUNDS + "runners:"]
    for name, labels, place in (("a", "pool-a", ""), ("b", "pool-b", ', server_cpus: "0", client_cpus: "1"')):
        more = "".join(f", {k}: {json.dumps(v)}" for k, v in runners.get(name, {}).items())
        lines.append(f"  - {{name: {name}, labels: [self-hosted, {labels}]{place}{more}}}")
    path.write_text("\n".join(lines) + "\n")
    return path


def copy_legs(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst, symlinks=True)
    return dst
