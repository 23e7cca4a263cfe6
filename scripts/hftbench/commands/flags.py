"""The flags several commands share, declared once, and the typed options built once from
them: the output folder, the Selection of a suite (its plan: the block ab, bisect and calibrate
each repeated) and the Builds of ab and bisect.

A command names the shared flags it takes (Command.shared, or `add` from its add_arguments
where --help should show them among its own); `add` declares them with one wording and one
default everywhere: every flag two commands take is declared here, and only here. The
rounds' flags take their defaults from the command (Command.rounds: ab's, bisect's).
"""

from __future__ import annotations

import argparse
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

from .. import paths
from ..design_names import DUET, PAIRED_ROUNDS
from ..errors import UsageError
from ..measure.worktrees import DEFAULT_BUILD, DEFAULT_BUILD_TIMEOUT_S

if TYPE_CHECKING:
    from ..config import Config
    from ..measure.plan import Plan
    from .base import Command


class FlagSpec(TypedDict, total=False):
    """The keyword arguments of argparse's add_argument that the shared flags use."""

    type: Callable[[str], object]
    default: object
    help: str
    choices: tuple[str, ...]
    metavar: str
    action: str
    required: bool
    dest: str


def _design_flag(command: type[Command]) -> FlagSpec:
    return {
        "choices": ("auto", DUET, PAIRED_ROUNDS),
        "default": "auto",
        "help": "how rounds are measured: duet (both servers at once, orders interleaved), "
        "paired-rounds (B H H B rounds), or auto (default): duet when every cell allows it "
        "(client-hft, closed loop, one connection)",
    }


def _rounds_flag(field: str, help: str, kind: type = int) -> Callable[[type[Command]], FlagSpec]:
    """A rounds flag (--repeats, --max-repeats, --step, --time-budget): its default is the
    command's own (Command.rounds: ab's, bisect's), and so is --time-budget's meaning."""

    def spec(command: type[Command]) -> FlagSpec:
        default = getattr(command.rounds, field)
        shown = f"{default:.0f}" if kind is float else str(default)
        said = help or command.time_budget_help
        return {"type": kind, "default": default, "help": f"{said} (default {shown})"}

    return spec


def _calibration_flag(command: type[Command]) -> FlagSpec:
    from ..judge.calibration import ENV

    return {
        "type": Path,
        "help": f"this runner's calibration.json (default ${ENV}): judge the series × metrics it guards",
    }


def _server_cpus_flag(command: type[Command]) -> FlagSpec:
    from ..measure.placement import ENV_SERVER

    return {
        "metavar": "LIST",
        "help": f"pin the server's worker threads, one per CPU (e.g. 2-5; default ${ENV_SERVER})",
    }


def choose_design(plan: Plan, wanted: str) -> str:
    """--design: duet where every cell allows it (auto), else paired rounds; a duet asked for a plan
    that cannot run as one is a UsageError naming the cell."""
    from ..measure import duet

    why = [
        f"{sc.name}/{client}: {reason}"
        for sc, client, _ in plan.cells()
        if (reason := duet.qualifies(sc, client))
    ]
    if wanted == DUET and why:
        raise UsageError(f"--design duet: {why[0]}; pass --design paired-rounds, or a suite of such cells")
    if wanted == "auto":
        return PAIRED_ROUNDS if why else DUET
    return wanted


def _head_sha_flag(command: type[Command]) -> FlagSpec:
    if command.name == "check-run":
        return {"required": True, "help": "the commit the check run is on (the PR's head)"}
    return {"default": None, "help": "the commit every leg's head must be (the event's)"}


# name -> (flags, keyword arguments of add_argument, or a function of the command that builds
# them when it takes the flag); "{command}" in a help is the command's name.
SHARED: dict[str, tuple[tuple[str, ...], FlagSpec | Callable[[type[Command]], FlagSpec]]] = {
    "suite": (("--suite",), {"default": "pr", "help": "suite of bench-config/scenarios.yaml (default pr)"}),
    "scenarios": (("--scenarios",), {"help": "comma-separated scenarios instead of the suite's"}),
    "clients": (("--clients",), {"help": "comma-separated clients instead of the suite's"}),
    "orders": (("--orders",), {"type": int, "help": "override measured orders per cell"}),
    "out": (("--out",), {"type": Path, "help": "output folder (default results/{command}_<UTC>)"}),
    "repo": (("--repo",), {"type": Path, "help": "repository holding the refs (default: this checkout)"}),
    "clients_bin": (
        ("--clients-bin",),
        {"type": Path, "help": "client binaries for every side (default: this checkout's bin/)"},
    ),
    "build_cmd": (
        ("--build-cmd",),
        {"default": DEFAULT_BUILD, "help": "run in each commit's tree (no .git); must leave bin/hft-server"},
    ),
    "build_timeout": (
        ("--build-timeout",),
        {
            "type": float,
            "default": DEFAULT_BUILD_TIMEOUT_S,
            "metavar": "S",
            "help": f"seconds a commit's build may take (default {DEFAULT_BUILD_TIMEOUT_S:.0f}); one still "
            "running then is killed with every process it started, and ab's verdict says so (the "
            "head's: a regression; base's: invalid); 0: no limit",
        },
    ),
    "require_sandbox": (
        ("--require-sandbox",),
        {
            "action": "store_true",
            "help": "never build or run the code under test unsandboxed (always so where CI=true)",
        },
    ),
    "server_flags": (
        ("--server-flags",),
        {"default": "", "help": "hft-server flags for every side, e.g. '--workers 2'"},
    ),
    "design": (("--design",), _design_flag),
    "gates": (("--gates",), {"type": Path, "help": "gates file (default bench-config/gates.yaml)"}),
    "quiet": (("--quiet",), {"action": "store_true", "help": "plain progress lines, no progress bar"}),
    "calibration": (("--calibration",), _calibration_flag),
    # The rounds of ab and bisect (judge/rounds.py: Rounds, rounds_from_args checks them).
    "repeats": (("--repeats",), _rounds_flag("repeats", "rounds a side before the first look")),
    "max_repeats": (("--max-repeats",), _rounds_flag("max_repeats", "most rounds a side while undecided")),
    "step": (("--step",), _rounds_flag("step", "rounds a side added per look")),
    "time_budget": (("--time-budget",), _rounds_flag("time_budget_s", "", float)),
    # The server a command starts (run, serve).
    "bin": (
        ("--bin",),
        {"type": Path, "dest": "bins", "help": "folder with hft-server and client-* (default bin/)"},
    ),
    "server_flag": (
        ("--server-flag",),
        {"action": "append", "default": [], "help": "extra hft-server flag (repeatable)"},
    ),
    "server_cpus": (("--server-cpus",), _server_cpus_flag),
    # The history store (history, compare's store baseline, creep) and the pool (pool, combine).
    "store": (("--store",), {"type": Path, "required": True, "help": "history store (gh-pages data/)"}),
    "branch": (("--branch",), {"default": "main", "help": "runs of this branch in the store (default main)"}),
    "last": (("--last",), {"type": int, "default": 10, "help": "the last N matching runs (default 10)"}),
    "pool": (("--pool",), {"type": Path, "help": "pool file (default bench-config/pool.yaml)"}),
    # The pull request's head commit, from the event (combine: every leg's head must be it;
    # check-run: the commit its check run is on).
    "head_sha": (("--head-sha",), _head_sha_flag),
    # The gate's texts (verdict-text, regression-issue).
    "run_url": (("--run-url",), {"help": "link to the workflow run (built by the caller from the run id)"}),
    # A workflow step (pool, combine): its step outputs, and the summary where it writes one.
    "github_output": (
        ("--github-output",),
        {
            "action": "store_true",
            "help": "CI: step outputs to $GITHUB_OUTPUT (a summary to $GITHUB_STEP_SUMMARY)",
        },
    ),
}


def add(p: argparse.ArgumentParser, command: type[Command], names: tuple[str, ...]) -> None:
    """Declare the SHARED flags `names` on `p` (a command's parser, or one of its sub-parsers)."""
    for name in names:
        args, spec = SHARED[name]
        kwargs = FlagSpec(**(spec(command) if callable(spec) else spec))
        if "help" in kwargs:
            kwargs["help"] = kwargs["help"].replace("{command}", command.name.replace("-", "_"))
        p.add_argument(*args, **kwargs)


def split(value: str | None) -> list[str] | None:
    """A comma-separated flag's values, or None when it was not given."""
    return [v.strip() for v in value.split(",") if v.strip()] if value else None


def new_out(given: Path | None, root: Path, command: str) -> Path:
    """--out, or results/<command>_<UTC>; refused when it exists and holds anything."""
    out = (given or paths.results_dir(root) / f"{command}_{paths.utc_stamp()}").resolve()
    if out.exists() and any(out.iterdir()):
        raise UsageError(f"--out {out} exists and is not empty; pass a new folder")
    return out


@dataclass(frozen=True)
class Selection:
    """--suite narrowed by --scenarios / --clients, with --orders: what a plan measures (ab,
    bisect, calibrate), read once from the flags."""

    suite: str
    scenarios: tuple[str, ...] | None = None  # None: the suite's
    clients: tuple[str, ...] | None = None  # None: the suite's
    orders: int | None = None  # None: each scenario's own

    @classmethod
    def of(cls, args: argparse.Namespace, suite: str | None = None) -> Selection:
        """From the flags (a command without --scenarios / --clients takes the suite's); `suite`
        replaces --suite (bisect --from-verdict: the verdict's)."""
        scenarios, clients = split(getattr(args, "scenarios", None)), split(getattr(args, "clients", None))
        return cls(suite or args.suite, _tuple(scenarios), _tuple(clients), args.orders)

    def plan(self, cfg: Config, clients_bin: Path, **narrow: list[str] | None) -> Plan:
        """The plan of the suite, narrowed to the selection's (or `narrow`'s) scenarios and
        clients, with its orders; the suite's own settings (its colocation) stay, whatever is
        narrowed."""
        from ..measure.plan import make_plan

        scenarios = narrow.get("scenarios", list(self.scenarios) if self.scenarios else None)
        clients = narrow.get("clients", list(self.clients) if self.clients else None)
        plan = make_plan(
            cfg,
            clients_bin,
            None if scenarios else self.suite,
            scenarios=scenarios,
            clients=clients,
            overrides={"orders": self.orders},
            floor=False,
        )
        plan.suite = self.suite
        plan.colocate = cfg.suite(self.suite).colocate
        return plan


@dataclass(frozen=True)
class Builds:
    """--repo, --clients-bin, --build-cmd, --build-timeout, --require-sandbox, --server-flags: where
    ab and bisect find the commits, how each one's server is built, and the flags it is served with."""

    repo: Path  # the repository holding the commits
    clients_bin: Path  # the client binaries every side uses
    build_cmd: str  # run in each commit's exported tree (no .git); leaves bin/hft-server
    build_timeout_s: float | None  # --build-timeout: a build still running then is killed (None: no limit)
    require_sandbox: bool  # never build or run the code under test unsandboxed
    server_flags: tuple[str, ...]  # hft-server flags for every side

    @classmethod
    def of(cls, args: argparse.Namespace, root: Path) -> Builds:
        return cls(
            repo=(args.repo or root).resolve(),
            clients_bin=(args.clients_bin or paths.bin_dir(root)).resolve(),
            build_cmd=args.build_cmd,
            build_timeout_s=_build_timeout(args.build_timeout),
            require_sandbox=bool(args.require_sandbox),
            server_flags=tuple(shlex.split(args.server_flags)),
        )


def _build_timeout(seconds: float) -> float | None:
    """--build-timeout's limit (0: none), or UsageError naming the flag."""
    if not seconds >= 0:  # negative or NaN
        raise UsageError(f"--build-timeout {seconds:g}: pass the seconds a build may take (0: no limit)")
    return seconds or None


def _tuple(values: list[str] | None) -> tuple[str, ...] | None:
    return tuple(values) if values else None
