"""The tiers are decided in one place, the root conftest.py's `tier_of`, from the fixtures a test
takes and its own marks: each check here collects real modules with pytest itself and reads the
tier the decision gave, so a renamed fixture or a broken rule fails here instead of moving tests
out of their tier without a word. And a module of ONE_WORKER_MODULES runs whole on one worker
under `--dist loadgroup` (make test's parallel pass)."""

from __future__ import annotations

import ast
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

TESTS = "scripts/tests"
# One module per way into a tier: a fixture taken through another fixture (pool_legs takes
# real_binaries), a fixture taken directly, usefixtures on the module, the act world, the runner
# loop's world, an explicit module mark outside scripts/tests, explicit marks on single tests.
POOL_LEGS = f"{TESTS}/commands/test_combine_forged.py"
DIRECT = f"{TESTS}/commands/test_ab.py"
MODULE_WIDE = f"{TESTS}/commands/test_surfaces_agree.py"
ACT = f"{TESTS}/ci/test_workflows_act.py"
RUNNER_LOOP = f"{TESTS}/ci/test_runner_loop.py"
CONFORMANCE = "clients/tests/test_conformance_errors.py"
DEADLINES = f"{TESTS}/measure/test_placement.py"
PURE = f"{TESTS}/judge/test_stats.py"
MODULES = (POOL_LEGS, DIRECT, MODULE_WIDE, ACT, RUNNER_LOOP, CONFORMANCE, DEADLINES, PURE)


def collected(marks: str) -> set[str]:
    """The node ids of MODULES that `pytest -m MARKS` selects, as the root conftest decides."""
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "--collect-only",
            "-q",
            "-p",
            "no:cacheprovider",
            "-m",
            marks,
            *MODULES,
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode in (0, 5), run.stdout[-3000:] + run.stderr[-3000:]  # 5: none selected
    return {line for line in run.stdout.splitlines() if "::" in line}


@pytest.fixture(scope="module")
def by_tier() -> dict[str, set[str]]:
    return {tier: collected(tier) for tier in ("measuring", "act", "slow")} | {
        "rest": collected("not measuring and not act and not slow")
    }


def module_of(ids: set[str], module: str) -> set[str]:
    return {i for i in ids if i.startswith(module + "::")}


def functions_taking(module: str, fixture: str) -> set[str]:
    """The names of the module's test functions with `fixture` among their arguments."""
    tree = ast.parse((ROOT / module).read_text())
    return {
        node.name
        for node in tree.body
        if isinstance(node, ast.FunctionDef)
        and node.name.startswith("test_")
        and fixture in [a.arg for a in node.args.args]
    }


def names(ids: set[str]) -> set[str]:
    return {i.split("::", 1)[1].split("[", 1)[0] for i in ids}


def test_the_tiers_split_the_tests_without_overlap(by_tier):
    tiers_of = [by_tier[t] for t in ("measuring", "act", "slow", "rest")]
    assert all(a.isdisjoint(b) for i, a in enumerate(tiers_of) for b in tiers_of[i + 1 :])
    assert all(by_tier.values()), {t: len(ids) for t, ids in by_tier.items()}


def test_a_test_that_takes_the_real_binaries_is_measuring_however_it_takes_them(by_tier):
    everything = set().union(*by_tier.values())
    for module in (POOL_LEGS, MODULE_WIDE):  # through pool_legs; usefixtures on the module
        assert module_of(by_tier["measuring"], module) == module_of(everything, module) != set()
    direct = names(module_of(by_tier["measuring"], DIRECT))
    assert functions_taking(DIRECT, "pool_legs") <= direct  # the legs' tests, and not the pure ones
    assert names(module_of(by_tier["rest"], DIRECT)) and not direct & names(
        module_of(by_tier["rest"], DIRECT)
    )


def test_the_act_tier_is_exactly_the_tests_that_take_the_act_world(by_tier):
    assert tiers.ACT_FIXTURE == "act_world"
    assert names(module_of(by_tier["act"], ACT)) == functions_taking(ACT, "act_world") != set()
    # an act run on a world of its own times nothing: not act, not measuring
    bare = functions_taking(ACT, "bare_world")
    assert bare and not bare & names(by_tier["act"] | by_tier["measuring"])


def test_the_runner_loop_s_world_makes_a_test_slow(by_tier):
    taking = functions_taking(RUNNER_LOOP, "runner_loop_world")
    assert taking and taking <= names(module_of(by_tier["slow"], RUNNER_LOOP))


def test_an_explicit_mark_puts_a_test_in_its_tier(by_tier):
    everything = set().union(*by_tier.values())
    assert module_of(by_tier["measuring"], CONFORMANCE) == module_of(everything, CONFORMANCE) != set()
    deadlines = module_of(by_tier["measuring"], DEADLINES)
    assert deadlines and module_of(by_tier["rest"], DEADLINES)  # only its marked tests
    assert module_of(everything, PURE) == module_of(by_tier["rest"], PURE) != set()


def test_every_one_worker_module_exists():
    assert sorted(rel for rel in tiers.ONE_WORKER_MODULES if not (ROOT / rel).is_file()) == []


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


def test_the_serial_pass_runs_the_timeboxed_modules_first_each_whole():
    """The order `make test`'s serial pass collects: the soak (timeboxed) before the push path,
    collected after it by path, and each module's tests in one run, so its fixtures are set up
    once."""
    timeboxed, later = f"{TESTS}/commands/test_soak_integration.py", f"{TESTS}/ci/test_ci_push_path.py"
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", later, timeboxed],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    modules = [line.split("::", 1)[0] for line in run.stdout.splitlines() if "::" in line]
    runs = [m for i, m in enumerate(modules) if i == 0 or modules[i - 1] != m]
    assert runs == [timeboxed, later], runs
