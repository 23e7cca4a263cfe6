"""The `hftbench` command: a registry of subcommands, each a module of commands/ holding one
Command (commands/base.py: its name, help, flags and `run`).

To add a subcommand, write its module in commands/ and add it to SUBCOMMANDS; nothing else
here changes. Every module listed is imported for real: a renamed or missing one fails
`hftbench` loudly instead of dropping its command from `--help` (test_cli.py), and every
module of commands/ must be listed (test_structure.py).
"""

from __future__ import annotations

import argparse
import importlib
import sys

from . import __version__
from .commands.base import Command
from .errors import UsageError
from .fsio import NO_SPACE, write_error

# Subcommand name -> module (hftbench.commands.<module>); order = order in `hftbench --help`.
# Only the module of the subcommand being run is imported (scipy & co. cost seconds).
SUBCOMMANDS: dict[str, str] = {
    "run": "run",
    "report": "report",
    "check-runner": "check_runner",
    "serve": "serve",  # a command run against a fresh server (the shell drivers')
    "compare": "compare",  # the gate
    "ab": "ab",  # the gate
    "bisect": "bisect",  # the commit that made a series slower
    "creep": "creep",  # main's small slowdowns added up against a fixed reference
    "history": "history",  # the gate
    "export-gab": "export_gab",  # the gate
    "calibrate": "calibrate",  # the gate
    "verdict-text": "verdict_text",  # the gate's texts: summary, PR comment, issue body
    "check-run": "check_run",  # the gate's check run: success, neutral (inconclusive), failure
    "regression-issue": "regression_issue",  # main's regression issue: open, update, close
    "pool": "pool",  # the runners of the pool that take a suite: the CI matrix
    "combine": "combine",  # the gate over a pool: the legs' rounds, each runner a stratum
    "pr-leg": "pr_leg",  # CI: a pull request's leg of the pool (bench.yml pr-bench)
    "push-leg": "push_leg",  # CI: a push's leg (bench.yml main-bench)
    "dispatch-leg": "dispatch_leg",  # CI: a run by hand (bench.yml dispatch-bench)
    "stage-artifact": "stage_artifact",  # CI: a leg's upload, an explicit list of regular files
    "publish": "publish",  # CI: the history and dashboard commit for gh-pages
    "microbench": "microbench",  # CI: the microbenchmarks for github-action-benchmark's charts
}


VERSION = f"hftbench {__version__}"  # what --version says


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser with every subcommand, or with just `only` (a subcommand name) for speed."""
    parser = argparse.ArgumentParser(
        prog="hftbench",
        description="Run the hft-bench scenarios, write results and reports, compare runs.",
    )
    parser.add_argument("--version", action="version", version=VERSION)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    modules = [SUBCOMMANDS[only]] if only in SUBCOMMANDS else list(SUBCOMMANDS.values())
    for name in modules:
        command_of(importlib.import_module(f"{__package__}.commands.{name}")).register(sub)
    return parser


def command_of(module) -> type[Command]:
    """The one Command a module of commands/ defines."""
    found = [
        c
        for c in vars(module).values()
        if isinstance(c, type) and issubclass(c, Command) and c.__module__ == module.__name__
    ]
    if len(found) != 1:
        raise TypeError(
            f"{module.__name__} defines {len(found)} Command classes; a subcommand's module defines one"
        )
    return found[0]


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv == ["--version"]:  # as argparse says it, without importing every subcommand (1.5 s)
        print(VERSION)
        return 0
    parser = build_parser(argv[0] if argv else None)
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except UsageError as exc:
        print(f"hftbench {args.command}: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"hftbench {args.command}: interrupted", file=sys.stderr)
        return 130
    except OSError as exc:
        if exc.errno not in NO_SPACE:
            raise
        # Every writer is atomic (fsio.py): the files written before this one are whole.
        print(f"hftbench {args.command}: {write_error(exc)}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
