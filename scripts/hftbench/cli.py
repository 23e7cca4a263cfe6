"""The `hftbench` command: a registry of subcommands, each a module with
`add_parser(subparsers)` (registers its parser and sets `func=main`) and `main(args) -> int`.

To add a subcommand, add it to SUBCOMMANDS; nothing else here changes. Every module listed
is imported for real: a renamed or missing one fails `hftbench` loudly instead of dropping
its command from `--help`.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from . import __version__
from .errors import UsageError
from .fsio import NO_SPACE, write_error

# Subcommand name -> module (hftbench.<module>); order = order in `hftbench --help`.
# Only the module of the subcommand being run is imported (scipy & co. cost seconds).
SUBCOMMANDS: dict[str, str] = {
    "run": "run",
    "report": "report",
    "check-runner": "check_runner",
    "serve": "serve",  # a command run against a fresh server (the shell drivers')
    "compare": "compare",  # the gate
    "ab": "ab",  # the gate
    "bisect": "bisect",  # the commit that made a series slower
    "history": "history",  # the gate
    "export-gab": "gab",  # the gate
    "calibrate": "calibrate",  # the gate
    "verdict-text": "verdict_text",  # the gate's texts: summary, PR comment, issue body
    "regression-issue": "regression_issue",  # main's regression issue: open, update, close
    "pool": "pool",  # the runners of the pool that take a suite: the CI matrix
    "combine": "combine",  # the gate over a pool: the legs' rounds, each runner a stratum
}


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser with every subcommand, or with just `only` (a subcommand name) for speed."""
    parser = argparse.ArgumentParser(
        prog="hftbench",
        description="Run the hft-bench scenarios, write results and reports, compare runs.",
    )
    parser.add_argument("--version", action="version", version=f"hftbench {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    modules = [SUBCOMMANDS[only]] if only in SUBCOMMANDS else list(SUBCOMMANDS.values())
    for name in modules:
        importlib.import_module(f"{__package__}.{name}").add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
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
