"""The Command base: a subcommand is a class with its name, its help, the shared flags it
takes (flags.py declares each once) and its own, and `run` (asv's commands/ package is the
model). cli.py registers every command of its registry through `register`.

A command works out the repository's root once (`root`), loads its configuration once
(`config`) and hands both on: the stages below never read bench-config themselves on a
command's behalf. Its `run` holds its body; what a stage needs from the flags travels as a small
typed object built once from them, never the argparse namespace. A verdict's command (compare,
ab, combine) ends through `close`: verdict.json and summary.md, the summary, each failure.
"""

from __future__ import annotations

import argparse
import json
import sys
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from .. import paths
from ..errors import UsageError
from ..fsio import write_atomic
from . import flags

if TYPE_CHECKING:
    from ..config import Config
    from ..judge.rounds import Rounds
    from ..verdict import Verdict


class Command:
    name: ClassVar[str]  # the subcommand, as typed: "ab", "verdict-text"
    help: ClassVar[str]  # one line in `hftbench --help`
    description: ClassVar[str | None] = None  # `hftbench NAME --help`; default: the module's docstring
    shared: ClassVar[tuple[str, ...]] = ()  # flags.SHARED names, in the order --help shows them
    raw_description: ClassVar[bool] = False  # keep the description's own line breaks
    rounds: ClassVar[Rounds | None] = None  # the rounds flags' defaults, where it takes them
    time_budget_help: ClassVar[str] = ""  # what --time-budget bounds, where it takes it

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args

    @classmethod
    def register(cls, subparsers) -> argparse.ArgumentParser:
        doc = cls.description if cls.description is not None else sys.modules[cls.__module__].__doc__
        extra = {"formatter_class": argparse.RawDescriptionHelpFormatter} if cls.raw_description else {}
        p = subparsers.add_parser(cls.name, help=cls.help, description=doc, **extra)
        cls.add_arguments(p)
        flags.add(p, cls, cls.shared)
        p.set_defaults(func=cls.main)
        return p

    @classmethod
    def add_arguments(cls, p: argparse.ArgumentParser) -> None:
        """The command's own flags (beside its `shared` ones)."""

    @classmethod
    def main(cls, args: argparse.Namespace) -> int:
        return cls(args).run()

    @classmethod
    def invoke(cls, argv: list[str]) -> int:
        """This command run in this process with these flags, as another command composes it
        (a CI job's command: ab, bisect, run); its UsageError is exit 2 and its message, as
        `hftbench` says them, and a flag argparse refuses its exit 2."""
        parser = argparse.ArgumentParser(prog="hftbench")
        cls.register(parser.add_subparsers(dest="command", required=True))
        try:
            args = parser.parse_args([cls.name, *argv])
        except SystemExit as exc:  # argparse said why on stderr
            return int(exc.code or 0)
        try:
            return int(cls(args).run() or 0)
        except UsageError as exc:
            print(f"hftbench {cls.name}: {exc}", file=sys.stderr)
            return 2

    def run(self) -> int:
        raise NotImplementedError(f"{type(self).__name__}.run")

    @cached_property
    def root(self) -> Path:
        """The repository whose bench-config this command reads ($HFTBENCH_ROOT, else this one)."""
        return paths.repo_root()

    def config_file(self) -> Path:
        """The scenarios file `config` loads (a command with --config overrides this)."""
        return paths.config_file(self.root)

    @cached_property
    def config(self) -> Config:
        """bench-config/scenarios.yaml, loaded once for the whole command."""
        from ..config import load

        return load(self.config_file())

    def gates_file(self, given: Path | None) -> Path:
        """--gates, else the root's bench-config/gates.yaml."""
        return given or paths.gates_file(self.root)

    def say(self, msg: str) -> None:
        """A progress or failure line on stderr, named for the command."""
        print(f"hftbench {self.name}: {msg}", file=sys.stderr, flush=True)

    def close(
        self,
        v: Verdict,
        failures: list[str],
        *,
        verdict: Path | None,
        summary: Path | None,
        quiet: bool = False,
    ) -> None:
        """The end of a verdict's command (compare, ab, combine): verdict.json and summary.md
        written where given, the summary printed (unless quiet), then each failure said."""
        from ..publish import verdict_text  # imported when used: most commands close no verdict

        if verdict:
            write_atomic(verdict, json.dumps(v.to_json(), indent=2) + "\n")
        if summary:
            write_atomic(summary, verdict_text.markdown(v))
        if not quiet:
            verdict_text.print_console(v)
        for message in failures:
            self.say(message)
