"""cli.py: every subcommand of the registry is in `hftbench --help`, and a missing module is
an error, not a command that quietly disappears."""

from __future__ import annotations

import subprocess
import sys

import pytest
from hftbench import __version__, cli


def test_every_registered_subcommand_is_a_command():
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    assert list(sub.choices) == list(cli.SUBCOMMANDS)


def test_a_registered_module_that_is_missing_fails_loudly(monkeypatch):
    monkeypatch.setitem(cli.SUBCOMMANDS, "gone", "no_such_module")
    with pytest.raises(ModuleNotFoundError, match="no_such_module"):
        cli.build_parser()


def test_the_version_is_said_without_importing_the_subcommands():
    """`hftbench --version` (asked by probes, e.g. whether another user can run it) says what
    argparse would, without the seconds that importing every subcommand's scipy costs."""
    code = (
        "import sys; from hftbench import cli; code = cli.main(['--version']); "
        "print(code, [m for m in cli.SUBCOMMANDS.values() if 'hftbench.commands.' + m in sys.modules], "
        "'scipy' in sys.modules)"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.stdout.splitlines() == [f"hftbench {__version__}", "0 [] False"], r.stdout + r.stderr
    with pytest.raises(SystemExit) as stop:  # the same words argparse's own action says
        cli.build_parser().parse_args(["--version"])
    assert stop.value.code == 0


def test_no_subcommand_imports_scipy_stats():
    """scipy.stats costs about 0.5 s of every CLI call that imports it, and a CI push makes dozens
    (judge/__init__.py): the subcommands take t and the normal from scipy.special."""
    code = "import sys; from hftbench import cli; cli.build_parser(); print('scipy.stats' in sys.modules)"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.stdout.split() == ["False"], r.stdout + r.stderr
