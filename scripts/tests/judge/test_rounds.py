"""rounds.py: ab's and bisect's rounds flags declared once, checked once, and the looks they allow."""

from __future__ import annotations

import argparse

import pytest
from hftbench.commands import ab, bisect, calibrate
from hftbench.errors import UsageError
from hftbench.judge.rounds import AB_ROUNDS, Rounds, rounds_from_args


def _parsed(add_parser, *argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_parser(parser.add_subparsers())
    return parser.parse_args(list(argv))


def test_looks_are_the_first_look_then_one_every_step_up_to_the_max():
    assert AB_ROUNDS.looks == 3  # 16, 32, 48
    assert Rounds(repeats=16, max_repeats=40, step=16, time_budget_s=0).looks == 3  # 16, 32, then 40
    assert Rounds(repeats=8, max_repeats=8, step=16, time_budget_s=0).looks == 1


def test_ab_and_bisect_share_the_flags_and_keep_their_own_budget():
    a = rounds_from_args(_parsed(ab.AbCommand.register, "ab", "--base", "x", "--head", "y"))
    b = rounds_from_args(_parsed(bisect.BisectCommand.register, "bisect"), min_repeats=2)
    assert (a.repeats, a.max_repeats, a.step) == (b.repeats, b.max_repeats, b.step) == (16, 48, 16)
    assert (a.time_budget_s, b.time_budget_s) == (270.0, 3600.0)
    c = _parsed(calibrate.CalibrateCommand.register, "calibrate")
    assert c.looks == AB_ROUNDS.looks  # calibrate measures the gate at ab's looks


@pytest.mark.parametrize(
    ("argv", "min_repeats", "message"),
    [
        (["--repeats", "0"], 1, "need 1 <= --repeats (0) <= --max-repeats (48)"),
        (["--repeats", "1"], 2, "need 2 <= --repeats (1) <= --max-repeats (48)"),  # bisect's floor
        (["--repeats", "20", "--max-repeats", "10"], 1, "need 1 <= --repeats (20) <= --max-repeats (10)"),
        (["--step", "0"], 1, "--step must be >= 1 (got 0)"),
        (["--time-budget", "-1"], 1, "--time-budget must be >= 0 seconds (got -1.0)"),
    ],
)
def test_bad_rounds_are_refused_naming_the_flag(argv, min_repeats, message):
    args = _parsed(ab.AbCommand.register, "ab", "--base", "x", "--head", "y", *argv)
    with pytest.raises(UsageError) as err:
        rounds_from_args(args, min_repeats=min_repeats)
    assert str(err.value) == message
