"""The flags several commands share, declared once, and what they build: the output folder
and the plan of a suite (the block ab, bisect and calibrate each repeated).

A command names the shared flags it takes (Command.shared); `add` declares them with one
wording and one default everywhere. The rounds' flags (--repeats, --max-repeats, --step,
--time-budget) live beside the rounds they set (judge/rounds.py), the calibration record's
beside the record (judge/calibration.py).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
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


def plan_of(args: argparse.Namespace, cfg: Config, clients_bin: Path, **narrow: list[str] | None) -> Plan:
    """The plan of --suite, narrowed to --scenarios / --clients (or `narrow`'s lists), with
    --orders; the suite's own settings (its colocation) stay, whatever is narrowed."""
    from ..measure.plan import make_plan

    scenarios = narrow.get("scenarios", split(getattr(args, "scenarios", None)))
    clients = narrow.get("clients", split(getattr(args, "clients", None)))
    suite = None if scenarios else args.suite
    plan = make_plan(
        cfg,
        clients_bin,
        suite,
        scenarios=scenarios,
        clients=clients,
        overrides={"orders": args.orders},
        floor=False,
    )
    plan.suite = args.suite
    plan.colocate = cfg.suite(args.suite).colocate
    return plan
