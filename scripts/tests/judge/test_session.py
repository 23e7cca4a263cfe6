"""session.py: one loop of rounds and looks for ab, bisect and calibrate."""

from __future__ import annotations

import numpy as np
import pytest
from hftbench.judge.rounds import Rounds
from hftbench.judge.session import FAILED, RUNS_OUT, TIME_OUT, Session
from hftbench.results import load_run
from support.gate_synth import latency_run, result_doc, write_run


class Clock:
    """A round costs `per_round` seconds of a clock the test owns."""

    def __init__(self, per_round: float) -> None:
        self.now, self.per_round = 0.0, per_round

    def __call__(self) -> float:
        return self.now


def drive(session: Session, clock: Clock, settle_at: int | None):
    measured, looks, asked = [], [], []

    def one_round(i: int) -> None:
        measured.append(i)
        session.keep("base", f"b{i}")
        session.keep("head", f"h{i}")
        clock.now += clock.per_round

    def settled() -> bool:
        looks.append(session.done)
        return settle_at is not None and session.done >= settle_at

    stopped = session.measure(one_round, settled, on_more=asked.append)
    return stopped, measured, looks, asked


ROUNDS = Rounds(repeats=8, max_repeats=32, step=8, time_budget_s=1000.0)


def test_a_session_looks_at_each_step_and_stops_when_a_look_settles():
    clock = Clock(per_round=1.0)
    session = Session(ROUNDS, clock=clock)
    stopped, measured, looks, asked = drive(session, clock, settle_at=16)
    assert stopped is None
    assert measured == list(range(16)) and looks == [8, 16] and asked == [16]
    assert session.pairs() == [(f"b{i}", f"h{i}") for i in range(16)]


def test_a_session_that_never_settles_stops_at_the_most_rounds():
    clock = Clock(per_round=1.0)
    session = Session(ROUNDS, clock=clock)
    stopped, measured, looks, _ = drive(session, clock, settle_at=None)
    assert stopped == RUNS_OUT and looks == [8, 16, 24, 32] and len(measured) == 32


def test_a_session_does_not_start_a_look_it_cannot_finish_within_the_budget():
    clock = Clock(per_round=30.0)  # 8 rounds: 240 s; 16 would end at 480 s > 400
    session = Session(Rounds(8, 32, 8, time_budget_s=400.0), clock=clock)
    stopped, measured, looks, asked = drive(session, clock, settle_at=None)
    assert stopped == TIME_OUT and measured == list(range(8)) and looks == [8] and asked == []


def test_time_spent_before_the_session_counts_against_the_budget():
    clock = Clock(per_round=10.0)  # 8 rounds: 80 s, 16 would end at 160 s after the session began
    session = Session(Rounds(8, 32, 8, time_budget_s=200.0), clock=clock)
    stopped = session.measure(
        lambda i: setattr(clock, "now", clock.now + 10.0), lambda: False, spent_before_s=50.0
    )
    assert stopped == TIME_OUT and session.done == 8


def test_failures_that_already_fail_the_check_end_the_session_before_the_first_look():
    clock = Clock(per_round=1.0)
    session = Session(ROUNDS, clock=clock)
    measured = []

    def one_round(i: int) -> None:
        measured.append(i)
        session.keep("base", f"b{i}")
        session.keep("head", f"h{i}")

    asked = []

    def failed() -> bool:  # the head's third round failed orders
        asked.append(session.done)
        return session.done >= 3

    stopped = session.measure(one_round, lambda: True, failed=failed)
    assert stopped == FAILED and measured == [0, 1, 2] and asked == [2, 3]


def test_failures_fail_reads_the_rounds_failure_rows(tmp_path):
    rng = np.random.default_rng(3)
    session = Session(ROUNDS)
    for i in range(1, 3):
        for side, errors in (("base", 0), ("head", 5 * (i == 2))):
            doc = result_doc("latency-1c", "hft", latency_run(rng, 1000), errors=errors)
            path = write_run(
                tmp_path / side,
                f"run_20261122T03{i:02d}00Z_{side}{i:02d}_abc123",
                {("latency-1c", "hft"): [doc]},
            )
            session.keep(side, load_run(path))
        session.done = i
        assert session.failures_fail() == (i == 2)


def test_an_interrupted_rounds_runs_are_dropped_and_the_complete_rounds_kept():
    clock = Clock(per_round=1.0)
    session = Session(ROUNDS, clock=clock)

    def one_round(i: int) -> None:
        session.keep("base", f"b{i}")
        if i == 2:
            raise KeyboardInterrupt  # base of round 3 measured, head not
        session.keep("head", f"h{i}")

    with pytest.raises(KeyboardInterrupt):
        session.measure(one_round, lambda: True)
    assert session.done == 2 and session.runs["base"] == ["b0", "b1", "b2"]
    session.drop_incomplete()
    assert session.runs == {"base": ["b0", "b1"], "head": ["h0", "h1"]}
    assert session.pairs() == [("b0", "h0"), ("b1", "h1")]
