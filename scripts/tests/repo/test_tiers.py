"""The root conftest.py's lists of modules (measuring, act, slow, one worker) name real test
modules: a renamed module would otherwise drop out of its tier without a word. And a module of
ONE_WORKER_MODULES runs whole on one worker under `--dist loadgroup` (make test's parallel pass)."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
_spec = importlib.util.spec_from_file_location("root_conftest", ROOT / "conftest.py")
tiers = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(tiers)


def test_every_listed_module_exists():
    listed = {*tiers.MEASURING_MODULES, *tiers.ACT_MODULES, *tiers.SLOW_MODULES, *tiers.ONE_WORKER_MODULES}
    assert sorted(rel for rel in listed if not (ROOT / rel).is_file()) == []


# Two pytest workers and golden's compare run: about 10 CPU-seconds, which the inner loop need not
# pay. Without the scheduler, load scheduling spreads golden's 5 tests over both workers.
@pytest.mark.slow
def test_a_one_worker_module_runs_whole_on_one_worker_under_loadgroup():
    module = "scripts/tests/publish/test_golden.py"
    assert module in tiers.ONE_WORKER_MODULES
    pytest_args = ["-n", "2", "--dist", "loadgroup", "-v", "-p", "no:cacheprovider", module]
    # under pytest.ini's 600 s a test, so that a child starved beside make test's serial pass
    # is stopped with its output shown
    run = subprocess.run(
        [sys.executable, "-m", "pytest", *pytest_args], cwd=ROOT, capture_output=True, text=True, timeout=540
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    workers = re.findall(r"^\[(gw\d+)\] .*PASSED " + re.escape(module), run.stdout, re.M)
    assert len(workers) >= 5 and len(set(workers)) == 1, run.stdout[-3000:]
