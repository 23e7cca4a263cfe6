"""The test tiers (README, "Tests"): every test of pytest.ini's paths is one of three kinds,
decided here, at collection, from what the test uses (`tier_of`), so no list of paths says it.

- `act`: takes the act world (`act_world`, scripts/tests/ci/conftest.py): the workflows run
  by nektos/act on the module's shared world, minutes, and they measure. An act run that
  starts no server and times nothing (a fork's pull request, ci.yml's lint job) takes a world
  of its own (`bare_world`) and runs in the parallel pass.
- `measuring`: takes the real binaries (`real_binaries`, scripts/tests/conftest.py: it skips
  naming `make build` where bin/ lacks them), itself or through a fixture that does
  (`pool_legs`, `act_world`), and times something; or carries `@pytest.mark.measuring` itself:
  a module of the clients' conformance suite whose tests time the binaries, a test with a
  deadline among pure ones (a child confined to one CPU and waited for). These run one at a
  time (`make test`'s serial pass): two of them side by side would measure each other.
- the rest (unit, structure, golden, schema, statistics on synthetic data, the CI scripts
  against fakes): `make check`, and `make test`'s parallel pass (pytest-xdist).

`slow` is for a test of the rest too slow for the inner loop: it takes the runner loop's world
(`runner_loop_world`: real back-offs and a dedicated user) or carries `@pytest.mark.slow`.
`make check` leaves it out, `make test` runs it. `ci` (the CI steps end to end) is orthogonal:
`make test-ci` selects it.
"""

from __future__ import annotations

import os

import pytest

# hftbench/__init__.py's one BLAS thread, here too: a test module may import numpy before it
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

# The fixtures that put a test in a tier, wherever it takes them from (its arguments, another
# fixture's, usefixtures): scripts/tests/repo/test_tiers.py checks each rule on real modules.
ACT_FIXTURE = "act_world"
MEASURING_FIXTURE = "real_binaries"
SLOW_FIXTURE = "runner_loop_world"
# Modules whose tests share a module fixture that costs seconds: pytest-xdist makes a module
# fixture once in every worker that runs one of its tests, so under `--dist loadgroup` each of
# these runs whole on one worker (pytest_xdist_make_scheduler, below). The runner loop's world
# (a user, a key, two runner jobs) took 15-28 s in each of 5 workers' setups under worksteal;
# golden's compare run 4 s in each worker that runs one of its tests. Paths, not fixtures: the
# scheduler runs in the controller, which collects nothing and sees only node ids.
ONE_WORKER_MODULES = {"scripts/tests/ci/test_runner_loop.py", "scripts/tests/publish/test_golden.py"}


def tier_of(item: pytest.Item) -> str | None:
    """The test's tier: act, measuring, slow, or None for the rest; from the fixtures it uses and
    its own marks. Act first: an act run takes the binaries too, and is not measuring as well."""
    uses = set(getattr(item, "fixturenames", ()))
    if ACT_FIXTURE in uses or item.get_closest_marker("act"):
        return "act"
    if MEASURING_FIXTURE in uses or item.get_closest_marker("measuring"):
        return "measuring"
    if SLOW_FIXTURE in uses or item.get_closest_marker("slow"):
        return "slow"
    return None


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        tier = tier_of(item)
        if tier is not None:
            item.add_marker(getattr(pytest.mark, tier))
    # make test's serial pass starts while the parallel pass still runs beside it (SCHED_IDLE):
    # the timeboxed modules first, whose length that window does not change; the push path and the act
    # runs had filled that window, at 56 and 41 s against 33 and 35 s alone (2026-12-03). A
    # stable sort of whole modules (pytestmark): module fixtures stay set up once.
    items.sort(key=lambda item: item.get_closest_marker("timeboxed") is None)


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
