"""The `hftbench` command: a registry of subcommands, each a module with
`add_parser(subparsers)` (registers its parser and sets `func=main`) and `main(args) -> int`.

To add a subcommand, add its module name to SUBCOMMANDS; nothing else here changes. The
gate's modules are listed already: one that does not exist yet is left out of the CLI (only
a missing module itself is tolerated; an import error inside a module still fails loudly).
"""

from __future__ import annotations

import argparse
import importlib
import sys

from . import __version__
from .errors import UsageError

# Order = order in `hftbench --help`. One line per subcommand module (hftbench.<name>).
SUBCOMMANDS: list[str] = [
    "run",  # hftbench run
    "report",  # hftbench report
    "check_runner",  # hftbench check-runner
    "compare",  # the gate: hftbench compare
    "ab",  # the gate: hftbench ab
    "history",  # the gate: hftbench history
    "gab",  # the gate: hftbench export-gab
    "calibrate",  # the gate: hftbench calibrate
]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hftbench",
        description="Run the hft-bench scenarios, write results and reports, compare runs.",
    )
    parser.add_argument("--version", action="version", version=f"hftbench {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in SUBCOMMANDS:
        qualified = f"{__package__}.{name}"
        try:
            module = importlib.import_module(qualified)
        except ModuleNotFoundError as exc:
            if exc.name == qualified:
                continue
            raise
        module.add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except UsageError as exc:
        print(f"hftbench {args.command}: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"hftbench {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
