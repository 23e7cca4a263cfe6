"""The flags several commands share, declared once, and the typed options built once from
them: the output folder, the Selection of a suite (its plan: the block ab, bisect and calibrate
each repeated) and the Builds of ab and bisect.

A command names the shared flags it takes (Command.shared); `add` declares them with one
wording and one default everywhere. The rounds' flags (--repeats, --max-repeats, --step,
--time-budget) live beside the rounds they set (judge/rounds.py), the calibration record's
beside the record (judge/calibration.py).
"""

from __future__ import annotations

import argparse
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import paths
from ..errors import UsageError
from ..measure.worktrees import DEFAULT_BUILD

if TYPE_CHECKING:
    from ..config import Config
    from ..measure.plan import Plan


def _design_flag() -> dict[str, Any]:
    # Built when a command takes --design: designs imports numpy, which the hosted runner's
    # commands (verdict-text, regression-issue, pool) must never load.
    from ..judge import designs

    return {
        "choices": ("auto", designs.DUET, designs.PAIRED_ROUNDS),
        "default": "auto",
        "help": "how rounds are measured: duet (both servers at once, orders interleaved), "
        "paired-rounds (B H H B rounds), or auto (default): duet when every cell allows it "
        "(client-hft, closed loop, one connection)",
    }


def choose_design(plan: Plan, wanted: str) -> str:
    """--design: duet where every cell allows it (auto), else paired rounds; a duet asked for a plan
    that cannot run as one is a UsageError naming the cell."""
    from ..judge import designs
    from ..measure import duet

    why = [f"{sc.name}/{client}: {reason}" for sc, client, _ in plan.cells()
           if (reason := duet.qualifies(sc, client))]  # fmt: skip
    if wanted == designs.DUET and why:
        raise UsageError(f"--design duet: {why[0]}; pass --design paired-rounds, or a suite of such cells")
    if wanted == "auto":
        return designs.PAIRED_ROUNDS if why else designs.DUET
    return wanted


# name -> (flags, keyword arguments of add_argument, or a function that builds them when a
# command takes the flag); "{command}" in a help is the command's name.
SHARED: dict[str, tuple[tuple[str, ...], dict[str, Any] | Callable[[], dict[str, Any]]]] = {
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
        {"default": DEFAULT_BUILD, "help": "run in each worktree; must leave bin/hft-server"},
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
    "design": (("--design",), lambda: _design_flag()),
    "gates": (("--gates",), {"type": Path, "help": "gates file (default bench-config/gates.yaml)"}),
    "quiet": (("--quiet",), {"action": "store_true", "help": "plain progress lines, no progress bar"}),
}


def add(p: argparse.ArgumentParser, command: str, names: tuple[str, ...]) -> None:
    for name in names:
        args, spec = SHARED[name]
        kwargs = dict(spec() if callable(spec) else spec)
        if "help" in kwargs:
            kwargs["help"] = kwargs["help"].replace("{command}", command.replace("-", "_"))
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
    """--repo, --clients-bin, --build-cmd, --require-sandbox, --server-flags: where ab and bisect
    find the commits, how each one's server is built, and the flags it is served with."""

    repo: Path  # the repository holding the commits
    clients_bin: Path  # the client binaries every side uses
    build_cmd: str  # run in each worktree; leaves bin/hft-server
    require_sandbox: bool  # never build or run the code under test unsandboxed
    server_flags: tuple[str, ...]  # hft-server flags for every side

    @classmethod
    def of(cls, args: argparse.Namespace, root: Path) -> Builds:
        return cls(
            repo=(args.repo or root).resolve(),
            clients_bin=(args.clients_bin or paths.bin_dir(root)).resolve(),
            build_cmd=args.build_cmd,
            require_sandbox=bool(args.require_sandbox),
            server_flags=tuple(shlex.split(args.server_flags)),
        )


def _tuple(values: list[str] | None) -> tuple[str, ...] | None:
    return tuple(values) if values else None
