"""What a CI job's command shares with the workflow around it: its inputs from the environment
bench.yml sets, its step summary and step outputs (GitHub's files, or stdout and nothing
outside GitHub, so the same command runs under act and on a developer's machine).

The job commands (commands/pr_leg.py, push_leg.py, dispatch_leg.py, publish.py, combine.py's
--github-output) read their inputs here once, into typed fields, and never from os.environ
again.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from .errors import UsageError

SHA = re.compile(r"^[0-9a-f]{7,40}$")
FULL_SHA = re.compile(r"^[0-9a-f]{40}$")
# What judges a pull request (bench.yml checks these out from the base): the PR's changes to
# them take effect after merge, and the texts list them.
HARNESS_PATHS = (".github", "bench-config", "scripts", "clients", "Makefile")


def required(env: Mapping[str, str], name: str, what: str) -> str:
    value = env.get(name, "")
    if not value:
        raise UsageError(f"{name} ({what}) is required")
    return value


def words(env: Mapping[str, str], name: str) -> list[str]:
    """A flag list set by the workflow or a test (AB_ARGS, POOL_ROUNDS …), split as a shell would."""
    return shlex.split(env.get(name, ""))


@dataclass(frozen=True)
class Pool:
    """A leg of the pool (bench.yml's matrix, bench-config/pool.yaml), from POOL_*: its name,
    its placement, its split of the suite and the pool's rounds."""

    leg: str  # POOL_LEG: the runner's name ("" outside the pool); verdict.json's pool_leg
    server_cpus: str  # POOL_SERVER_CPUS
    client_cpus: str  # POOL_CLIENT_CPUS
    scenarios: str  # POOL_SCENARIOS: this leg's split of the suite
    rounds: list[str]  # POOL_ROUNDS: hftbench pool's --repeats/--max-repeats/--step flags

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Pool:
        get = env.get
        return cls(
            get("POOL_LEG", ""),
            get("POOL_SERVER_CPUS", ""),
            get("POOL_CLIENT_CPUS", ""),
            get("POOL_SCENARIOS", ""),
            words(env, "POOL_ROUNDS"),
        )

    def place(self) -> None:
        """The leg runs with the placement the pool sets for its runner, else with the runner's
        own (HFTBENCH_SERVER_CPUS / HFTBENCH_CLIENT_CPUS, which measure/placement.py reads)."""
        if self.server_cpus:
            os.environ["HFTBENCH_SERVER_CPUS"] = self.server_cpus
        if self.client_cpus:
            os.environ["HFTBENCH_CLIENT_CPUS"] = self.client_cpus

    def split(self) -> list[str]:
        return ["--scenarios", self.scenarios] if self.scenarios else []


def copy_calibration(env: Mapping[str, str], out: Path) -> None:
    """The runner's calibration record ($HFTBENCH_CALIBRATION) beside a leg's verdict.json, for
    the hosted combine job (which believes it only when its sha256 is pool.yaml's for the
    runner); nothing when the runner has none."""
    source = env.get("HFTBENCH_CALIBRATION", "")
    if not source:
        return
    try:
        (out / "calibration.json").write_bytes(Path(source).read_bytes())
    except OSError as exc:
        raise UsageError(
            f"HFTBENCH_CALIBRATION={source} is not readable ({exc.strerror}): install it with "
            "install-runner.sh --calibration (hft/runner/README.md)"
        ) from exc


def summary(text: str) -> None:
    """Append markdown to the job's step summary ($GITHUB_STEP_SUMMARY), else print it."""
    target = os.environ.get("GITHUB_STEP_SUMMARY")
    if target:
        with open(target, "a") as f:
            f.write(text)
    else:
        print(text)


def output(name: str, value: str) -> None:
    """A step output ($GITHUB_OUTPUT; dropped outside GitHub). One line: a newline is refused."""
    if "\n" in value:
        raise ValueError(f"step output {name} holds a newline")
    target = os.environ.get("GITHUB_OUTPUT")
    if target:
        with open(target, "a") as f:
            f.write(f"{name}={value}\n")


def fetch_store(root: Path, dest: Path) -> None:
    """gh-pages fetched into `root`'s refs and its history store copied to `dest`, by the step
    that may hold the read token (scripts/ci/fetch-store); its failure names the fix."""
    code = subprocess.run([str(root / "scripts" / "ci" / "fetch-store"), str(dest)]).returncode
    if code != 0:
        raise UsageError(f"scripts/ci/fetch-store failed (exit {code}); its message above names the fix")
