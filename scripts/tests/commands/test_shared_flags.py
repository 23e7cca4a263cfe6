"""Every flag two commands take is declared once, in commands/flags.py (SHARED): one wording,
one default. Flags that merely share a name and mean something else in each command are
listed here, with what differs."""

from __future__ import annotations

import argparse

from hftbench import cli
from hftbench.commands import flags

# Same name, another flag: what each command means by it differs (a default, required or not).
SAME_NAME_ONLY = {
    "--suite": "run: optional, no default; ab, bisect, calibrate, creep: default pr; pool, combine, "
    "history baseline: required",
    "--out": "a new results folder (ab, bisect, calibrate, creep), run's run folder, combine's verdict "
    "folder, export-gab's, verdict-text's file, history baseline's run folders",
    "--runner": "compare: default the head run's; history baseline: also 'here'; creep: any",
    "--json": "compare: where to write verdict.json; check-runner: print JSON",
    "--permutations": "calibrate's permutation splits; history changepoints' change point test",
    "--verdict": "history add: a verdict to attach; creep: the newest push's",
}


def _options(parser: argparse.ArgumentParser) -> set[str]:
    found = set()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                found |= _options(sub)
        found |= {o for o in action.option_strings if o.startswith("--") and o != "--help"}
    return found


def test_a_flag_of_two_commands_is_declared_once_in_flags_py():
    sub = next(a for a in cli.build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    commands: dict[str, list[str]] = {}
    for name, parser in sub.choices.items():
        for option in _options(parser):
            commands.setdefault(option, []).append(name)
    declared = {option for options, _ in flags.SHARED.values() for option in options}
    undeclared = {
        option: names
        for option, names in commands.items()
        if len(names) > 1 and option not in declared and option not in SAME_NAME_ONLY
    }
    assert undeclared == {}, "declare these in commands/flags.py SHARED and add them by name"
