"""cli.py: every subcommand of the registry is in `hftbench --help`, and a missing module is
an error, not a command that quietly disappears."""

from __future__ import annotations

import pytest
from hftbench import cli


def test_every_registered_subcommand_is_a_command():
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    assert list(sub.choices) == list(cli.SUBCOMMANDS)


def test_a_registered_module_that_is_missing_fails_loudly(monkeypatch):
    monkeypatch.setitem(cli.SUBCOMMANDS, "gone", "no_such_module")
    with pytest.raises(ModuleNotFoundError, match="no_such_module"):
        cli.build_parser()
