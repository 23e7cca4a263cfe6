"""One measuring session, shared by `ab`, `bisect` and `calibrate`: measure a round, keep its
runs in memory, look, and add rounds until a look settles or the rounds or the time run out.

A look judges the runs this session measured, from memory: the rounds are written to disk
as they finish (nothing measured is lost to an interrupt), but never read back while
measuring. What a round is (a duet, or paired rounds of fresh servers, of one group of
sides or several) is the rig's (measure/rig.Rig.measure, which every command measures
through); when to look and when to stop is `rounds.Rounds`, declared once. A session changes
only through its methods: `keep` a run, `measure` (which counts the rounds), `drop_incomplete`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from ..answers import INVALID, REGRESSION
from ..results import Run
from . import failures
from .rounds import Rounds
from .sides import Side, side_from_runs

RUNS_OUT = "rounds"  # the most rounds a side allowed (max_repeats) were measured
TIME_OUT = "time budget"  # the next look would end after the time budget
FAILED = "failures"  # the rounds' failures already fail the check (a head that fails orders)


@dataclass
class Session:
    rounds: Rounds
    runs: dict[str, list[Run]] = field(default_factory=dict)  # side -> its runs, in round order
    done: int = 0  # complete rounds (every side of the round measured)
    clock: Callable[[], float] = time.perf_counter
    started: float | None = None

    def __post_init__(self) -> None:
        if self.started is None:
            self.started = self.clock()

    def keep(self, side: str, run: Run) -> None:
        self.runs.setdefault(side, []).append(run)

    def drop_incomplete(self) -> None:
        """Forget the runs of a round not every side finished (an interrupted round)."""
        self.runs = {side: runs[: self.done] for side, runs in self.runs.items()}

    def side(self, name: str, label: str | None = None) -> Side:
        """The runs of `name` so far, as the statistics read a side."""
        return side_from_runs(label or name, self.runs.get(name, []))

    def failures_fail(self, base: str = "base", head: str = "head") -> bool:
        """Whether the complete rounds' failures alone fail the check: a series whose failure
        row is a regression or invalid (failures.judge over every round so far)."""
        b = side_from_runs(base, self.runs.get(base, [])[: self.done])
        h = side_from_runs(head, self.runs.get(head, [])[: self.done])
        return any(
            failures.judge(b.series.get(key, []), h.series.get(key, [])).verdict in (REGRESSION, INVALID)
            for key in {*b.series, *h.series}
        )

    def pairs(self, base: str = "base", head: str = "head") -> list[tuple[Run, Run]]:
        """(base run, head run) of each complete round, in round order."""
        return list(zip(self.runs.get(base, []), self.runs.get(head, []), strict=False))[: self.done]

    def elapsed(self) -> float:
        return self.clock() - self.started

    def measure(
        self,
        one_round: Callable[[int], None],
        settled: Callable[[], bool],
        *,
        spent_before_s: float = 0.0,
        on_more: Callable[[int], None] | None = None,
        failed: Callable[[], bool] | None = None,
    ) -> str | None:
        """Rounds until `settled()` says a look decided; None then, else why it stopped
        (RUNS_OUT, TIME_OUT). `one_round(i)` measures round i and keeps its runs;
        `spent_before_s` counts time spent before this session against the budget (bisect's
        earlier steps); `on_more(n)` is told when a look asks for rounds up to n; `failed()`,
        asked after every round from the second, ends the session at once (FAILED) when the
        rounds already fail the check by their failures, which are counts, not tests: stopping
        on them spends no alpha (judge/failures.py)."""
        look = min(self.rounds.repeats, self.rounds.max_repeats)
        while True:
            while self.done < look:
                one_round(self.done)
                self.done += 1
                if failed is not None and self.done >= 2 and failed():
                    return FAILED
            if settled():
                return None
            if self.done >= self.rounds.max_repeats:
                return RUNS_OUT
            nxt = min(self.done + self.rounds.step, self.rounds.max_repeats)
            per_round = self.elapsed() / self.done
            if spent_before_s + self.elapsed() + per_round * (nxt - self.done) > self.rounds.time_budget_s:
                return TIME_OUT
            if on_more is not None:
                on_more(nxt)
            look = nxt
