"""session.py: one loop of rounds and looks for ab, bisect and calibrate."""

from __future__ import annotations

from hftbench.judge.rounds import Rounds
from hftbench.judge.session import RUNS_OUT, TIME_OUT, Session


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
    stopped = session.measure(lambda i: setattr(clock, "now", clock.now + 10.0), lambda: False,
                              spent_before_s=50.0)  # fmt: skip
    assert stopped == TIME_OUT and session.done == 8
