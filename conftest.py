"""The test tiers (README, "Tests"): every test of pytest.ini's paths is one of three kinds,
marked here at collection so no test module has to say it.

- `act`: the workflows run by nektos/act (test_workflows_act.py) on the module's shared world:
  minutes, and they measure. An act run that starts no server and times nothing (a fork's
  pull request, ci.yml's lint job) takes a world of its own and runs in the parallel pass.
- `measuring`: starts the real bin/hft-server and bin/client-* (or `hftbench run | ab |
  bisect | calibrate` on them) and times something, or asserts on timeouts and deadlines.
  These run one at a time (`make test`'s serial pass): two of them side by side would
  measure each other. A test is measuring when its module is listed below, or when it is
  guarded by a skipif that says it needs bin/ (the real binaries), the way every such test
  of scripts/tests is written, or when it carries `@pytest.mark.measuring` itself (a test
  with a deadline among pure ones: those that confine a child to one CPU and wait for it).
- the rest (unit, structure, golden, schema, statistics on synthetic data, the CI scripts
  against fakes): `make check`, and `make test`'s parallel pass (pytest-xdist).

`slow` is for a test of the rest too slow for the inner loop: `make check` leaves it out,
`make test` runs it. `ci` (the CI steps end to end) is orthogonal: `make test-ci` selects it.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent
# hftbench/__init__.py's one BLAS thread, here too: a test module may import numpy before it
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

# Modules all of whose tests start the real binaries and measure or time them, without a
# "needs bin/" skipif to say so. The conformance modules that start them and time nothing
# (test_conformance_result.py, _lateness.py, _statuses.py: a result's shape and counts) and
# hft/tests/test_compare_performance.py (flag errors; its small run is marked measuring itself)
# are not listed: they run in the parallel pass.
MEASURING_MODULES = {
    "clients/python/tests/test_worker.py",  # the Python client's timeouts: 0.1-0.5 s, the 1 s default
    "clients/tests/test_conformance_errors.py",  # the contract's 2 s to exit on bad input
    "clients/tests/test_conformance_failures.py",
    "clients/tests/test_conformance_intervals.py",
    "clients/tests/test_conformance_latency.py",
    "clients/tests/test_conformance_lifecycle.py",
    # a child's ready line within a timeout (0.5 s, 20 s): beside the serial pass under SCHED_IDLE,
    # a Python child once printed nothing in 0.5 s (a clean clone's make test, 2026-11-29)
    "scripts/tests/measure/test_procs.py",
}
# The act tests are those of these modules that take the act world (a module fixture that
# every act run of the module shares); a module's checks on the workflow files, and its act
# runs that measure nothing on a world of their own (`bare_world`), are the rest.
ACT_MODULES = {"scripts/tests/ci/test_workflows_act.py"}
# Neither measuring nor act, but half a minute of waiting the inner loop need not pay: the runner
# loop's backoffs (real sleeps) and its dedicated user.
SLOW_MODULES = {"scripts/tests/ci/test_runner_loop.py"}
# Modules whose tests share a module fixture that costs seconds: pytest-xdist makes a module
# fixture once in every worker that runs one of its tests, so under `--dist loadgroup` each of
# these runs whole on one worker (pytest_xdist_make_scheduler, below). The runner loop's world
# (a user, a key, two runner jobs) took 15-28 s in each of 5 workers' setups under worksteal;
# golden's compare run 4 s in each worker that runs one of its tests.
ONE_WORKER_MODULES = {"scripts/tests/ci/test_runner_loop.py", "scripts/tests/publish/test_golden.py"}


def _needs_real_binaries(item: pytest.Item) -> bool:
    for mark in item.iter_markers("skipif"):
        reason = str(mark.kwargs.get("reason", ""))
        if "bin/" in reason:
            return True
    return False


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        try:
            rel = Path(str(item.path)).resolve().relative_to(ROOT).as_posix()
        except ValueError:
            continue
        if rel in ACT_MODULES and "act_world" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.act)
        elif rel in MEASURING_MODULES or _needs_real_binaries(item):
            item.add_marker(pytest.mark.measuring)
        elif rel in SLOW_MODULES:
            item.add_marker(pytest.mark.slow)


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Measuring and act tests never run beside each other: each fails under pytest-xdist."""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    if workers > 1 and (item.get_closest_marker("measuring") or item.get_closest_marker("act")):
        pytest.fail(
            f"a measuring test under pytest -n {workers}: two of them would time each other. Run it "
            'alone: `make test-measuring`, or pytest -m "measuring or act" without -n',
            pytrace=False,
        )


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """`--dist loadgroup` with ONE_WORKER_MODULES as its groups, told apart by the test's id on
    the controller: pytest 9.2 no longer keeps the `@group` suffix that pytest-xdist's loadgroup
    appends to a test's id in the worker, so `xdist_group` marks group nothing
    (pytest-dev/pytest-xdist#1386)."""
    if config.getoption("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadGroupScheduling

    class ModuleGroups(LoadGroupScheduling):
        def _split_scope(self, nodeid: str) -> str:
            module = nodeid.split("::", 1)[0]
            return module if module in ONE_WORKER_MODULES else super()._split_scope(nodeid)

    return ModuleGroups(config, log)
