"""scripts/ci/dispatch-bench --check: bench.yml's first step of a run by hand refuses bad
inputs, and a suite the runner's job user cannot run (network: root only), before the build."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.ci

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "ci" / "dispatch-bench"


def check(tmp_path: Path, uid: int, **inputs: str) -> subprocess.CompletedProcess:
    """dispatch-bench --check as a user of this uid (a fake `id` first on PATH)."""
    fake = tmp_path / "bin"
    fake.mkdir(exist_ok=True)
    (fake / "id").write_text(f'#!/bin/sh\n[ "$1" = -un ] && echo ghrunner || echo {uid}\n')
    (fake / "id").chmod(0o755)
    env = {**os.environ, "PATH": f"{fake}:{os.environ['PATH']}", **inputs}
    env.pop("OUT", None)  # --check needs no output folder and no hftbench
    return subprocess.run([str(SCRIPT), "--check"], env=env, capture_output=True, text=True)


def test_the_network_suite_is_refused_for_the_runner_user_with_what_to_do(tmp_path):
    r = check(tmp_path, 1001, SUITE="network")
    assert r.returncode == 2
    assert "suite network needs root" in r.stderr and "ghrunner" in r.stderr
    assert "sudo .venv/bin/hftbench run --suite network" in r.stderr


def test_the_network_suite_passes_as_root_and_other_suites_as_the_runner_user(tmp_path):
    assert check(tmp_path, 0, SUITE="network").returncode == 0
    r = check(tmp_path, 1001, SUITE="stress", ORDERS="5000")
    assert r.returncode == 0 and "--suite stress --quiet --orders 5000" in r.stderr


def test_a_bad_input_is_refused_before_the_build(tmp_path):
    r = check(tmp_path, 1001, SUITE="stress", ORDERS="12x")
    assert r.returncode == 2 and "input orders must be a whole number" in r.stderr
