"""`hftbench pool --suite S`: the legs of the pr-bench / main-bench matrices, from
bench-config/pool.yaml (the runners of the pool: labels, CPUs, suites each takes).

It runs on the hosted runner, before any leg: plain Python and PyYAML, never numpy. With
--github-output it appends `legs=<json>` and `max_parallel=<n>` to $GITHUB_OUTPUT, which
bench.yml reads as `strategy.matrix.leg` and `strategy.max-parallel`.

The same file is what `hftbench combine` trusts instead of the legs (judge/legcheck.py): a
runner's `optional`, its `calibration_sha256` (the digest of the calibration record its leg
must upload, and combine refuses any other) and the pool's `rounds` (every leg's rounds and
looks). A pull request is judged by the base's copy, so none of it is the PR's to change.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NotRequired, TypedDict, cast

from . import paths, yamlfile
from .errors import UsageError

NAME = re.compile(r"^[a-z0-9][a-z0-9-]{0,39}$")
CPUS = re.compile(r"^[0-9,\-]*$")
DEFAULT_TIMEOUT_MINUTES = 90
KEYS = {
    "name",
    "labels",
    "suites",
    "scenarios",
    "server_cpus",
    "client_cpus",
    "timeout_minutes",
    "optional",
    "calibration_sha256",
}
SHA256 = re.compile(r"^[0-9a-f]{64}$")
ROUND_KEYS = ("repeats", "max_repeats", "step")


class RunnerConfig(TypedDict):
    """A runner of pool.yaml, as _runner checked it (KEYS)."""

    name: str
    labels: list[str]
    suites: NotRequired[list[str]]
    scenarios: NotRequired[list[str]]
    server_cpus: NotRequired[str | int]
    client_cpus: NotRequired[str | int]
    timeout_minutes: NotRequired[int]
    optional: NotRequired[bool]
    calibration_sha256: NotRequired[str]


@dataclass(frozen=True)
class Leg:
    """One runner's leg of a suite: the matrix entry bench.yml reads (strings for the env)."""

    name: str
    labels: list[str]
    scenarios: str  # comma-separated; "" = the whole suite (a replica)
    server_cpus: str
    client_cpus: str
    timeout_minutes: int
    # ab's rounds flags, the pool's `rounds` (the same for every leg; "": ab's defaults): the
    # looks combine divides alpha by come from this file, so the legs must run exactly these.
    rounds: str = ""


@dataclass(frozen=True)
class Pool:
    runners: list[RunnerConfig]
    max_parallel: int | None
    source: Path
    # `rounds:` as written (repeats, max_repeats, step; what it omits is ab's default): every
    # leg's rounds a side, and so the looks (judge/legcheck.pool_rounds makes them a Rounds).
    rounds: dict[str, int] | None = None

    def runner(self, name: str) -> RunnerConfig:
        return next(r for r in self.runners if r["name"] == name)

    def rounds_flags(self) -> str:
        return " ".join(f"--{k.replace('_', '-')} {v}" for k, v in (self.rounds or {}).items())

    def legs(self, suite: str) -> list[Leg]:
        """The runners that take `suite`, in file order; UsageError when none does."""
        legs = [
            Leg(
                name=r["name"],
                labels=list(r["labels"]),
                scenarios=",".join(r.get("scenarios") or []),
                server_cpus=str(r.get("server_cpus") or ""),
                client_cpus=str(r.get("client_cpus") or ""),
                timeout_minutes=int(r.get("timeout_minutes") or DEFAULT_TIMEOUT_MINUTES),
                rounds=self.rounds_flags(),
            )
            for r in self.runners
            if not r.get("suites") or suite in r["suites"]
        ]
        if not legs:
            raise UsageError(f"{self.source}: no runner takes suite {suite!r}; add it to a runner's `suites`")
        return legs


def _fail(path: Path, where: str, what: str) -> UsageError:
    return UsageError(f"{path}: {where}: {what}")


def _strings(path: Path, where: str, value: Any, key: str, *, pattern: re.Pattern | None = None) -> list[str]:
    if not isinstance(value, list) or not value or not all(isinstance(x, str) and x for x in value):
        raise _fail(path, where, f"`{key}` must be a non-empty list of names (got {value!r})")
    bad = [x for x in value if pattern is not None and not pattern.match(x)]
    if bad:
        raise _fail(path, where, f"`{key}`: {bad[0]!r} is not a name ([a-z0-9-])")
    return value


def _runner(path: Path, i: int, r: Any) -> RunnerConfig:
    where = f"runners[{i}]"
    if not isinstance(r, dict):
        raise _fail(path, where, "each runner is a mapping with name and labels")
    unknown = sorted(set(r) - KEYS)
    if unknown:
        raise _fail(path, where, f"unknown key {unknown[0]!r} (known: {', '.join(sorted(KEYS))})")
    name = r.get("name")
    if not isinstance(name, str) or not NAME.match(name):
        raise _fail(path, where, f"`name` must match [a-z0-9][a-z0-9-]* (got {name!r})")
    _strings(path, f"runner {name}", r.get("labels"), "labels")
    for key in ("suites", "scenarios"):
        if key in r:
            _strings(path, f"runner {name}", r[key], key)
    for key in ("server_cpus", "client_cpus"):
        if key in r and not (isinstance(r[key], (str, int)) and CPUS.match(str(r[key]))):
            raise _fail(path, f"runner {name}", f"`{key}` must be a CPU list like 2-3,6 (got {r[key]!r})")
    t = r.get("timeout_minutes", DEFAULT_TIMEOUT_MINUTES)
    if not isinstance(t, int) or isinstance(t, bool) or not 1 <= t <= 360:
        raise _fail(path, f"runner {name}", f"`timeout_minutes` must be a whole number 1..360 (got {t!r})")
    if not isinstance(r.get("optional", False), bool):
        raise _fail(path, f"runner {name}", f"`optional` must be true or false (got {r['optional']!r})")
    digest = r.get("calibration_sha256")
    if digest is not None and not (isinstance(digest, str) and SHA256.match(digest)):
        raise _fail(
            path,
            f"runner {name}",
            "`calibration_sha256` must be 64 lowercase hex digits: "
            f"`sha256sum` of the runner's calibration.json (got {digest!r})",
        )
    return cast(RunnerConfig, r)


def _rounds(path: Path, value: Any) -> dict[str, int] | None:
    """The pool's `rounds:` mapping (repeats, max_repeats, step), in that order; None: ab's defaults."""
    if value is None:
        return None
    if not isinstance(value, dict) or set(value) - set(ROUND_KEYS):
        raise UsageError(f"{path}: `rounds` is a mapping of {', '.join(ROUND_KEYS)} (got {value!r})")
    if not all(isinstance(v, int) and not isinstance(v, bool) and v >= 1 for v in value.values()):
        raise UsageError(f"{path}: `rounds` values must be whole numbers >= 1 (got {value!r})")
    if value.get("repeats", 2) < 2 or value.get("repeats", 0) > value.get("max_repeats", 10**6):
        raise UsageError(f"{path}: `rounds` needs 2 <= repeats <= max_repeats (got {value!r})")
    return {k: value[k] for k in ROUND_KEYS if k in value}


def load_pool(path: Path | str | None = None) -> Pool:
    """Read and check pool.yaml; every error names the file, the runner and the fix."""
    path = Path(path) if path else paths.pool_file()
    doc = yamlfile.read(path, "pool file", "pass --pool bench-config/pool.yaml")
    if not isinstance(doc, dict) or not isinstance(doc.get("runners"), list) or not doc["runners"]:
        raise UsageError(f"{path}: needs a non-empty `runners:` list (see the file's header)")
    runners = [_runner(path, i, r) for i, r in enumerate(doc["runners"])]
    names = [r["name"] for r in runners]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise UsageError(f"{path}: runner {twice[0]!r} is listed twice; names key the legs' artifacts")
    # A leg must land on its runner: labels that another runner also has would let it land there.
    for r in runners:
        for other in runners:
            if other is not r and set(r["labels"]) <= set(other["labels"]):
                raise UsageError(
                    f"{path}: runner {r['name']}'s labels {r['labels']} also select runner {other['name']}; "
                    "give each runner a label of its own"
                )
    par = doc.get("max_parallel")
    if par is not None and (not isinstance(par, int) or isinstance(par, bool) or par < 1):
        raise UsageError(f"{path}: `max_parallel` must be a whole number >= 1 (got {par!r})")
    return Pool(runners, par, path, _rounds(path, doc.get("rounds")))
