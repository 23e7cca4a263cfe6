"""The Command base: a subcommand is a class with its name, its help, the shared flags it
takes (flags.py declares each once) and its own, and `run` (asv's commands/ package is the
model). cli.py registers every command of its registry through `register`.

A command loads the repository's configuration once, through `config`, and hands it on: the
stages below never read bench-config themselves on a command's behalf.
"""

from __future__ import annotations

import argparse
import sys
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from .. import paths
from . import flags

if TYPE_CHECKING:
    from ..config import Config


class Command:
    name: ClassVar[str]  # the subcommand, as typed: "ab", "verdict-text"
    help: ClassVar[str]  # one line in `hftbench --help`
    description: ClassVar[str | None] = None  # `hftbench NAME --help`; default: the module's docstring
    shared: ClassVar[tuple[str, ...]] = ()  # flags.SHARED names, in the order --help shows them
    raw_description: ClassVar[bool] = False  # keep the description's own line breaks

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args

    @classmethod
    def register(cls, subparsers) -> argparse.ArgumentParser:
        doc = cls.description if cls.description is not None else sys.modules[cls.__module__].__doc__
        extra = {"formatter_class": argparse.RawDescriptionHelpFormatter} if cls.raw_description else {}
        p = subparsers.add_parser(cls.name, help=cls.help, description=doc, **extra)
        cls.add_arguments(p)
        flags.add(p, cls.name, cls.shared)
        p.set_defaults(func=cls.main)
        return p

    @classmethod
    def add_arguments(cls, p: argparse.ArgumentParser) -> None:
        """The command's own flags (beside its `shared` ones)."""

    @classmethod
    def main(cls, args: argparse.Namespace) -> int:
        return cls(args).run()

    def run(self) -> int:
        raise NotImplementedError(f"{type(self).__name__}.run")

    @cached_property
    def root(self) -> Path:
        """The repository whose bench-config this command reads ($HFTBENCH_ROOT, else this one)."""
        return paths.repo_root()

    @cached_property
    def config(self) -> Config:
        """bench-config/scenarios.yaml, loaded once for the whole command."""
        from ..config import load

        return load(paths.config_file(self.root))
