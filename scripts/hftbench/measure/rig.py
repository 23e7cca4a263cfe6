"""The measuring rig that ab, bisect, calibrate, ab's profile and `hftbench run --rounds`
share: sides in, rounds out.

A Rig holds what every round of one comparison shares: the plan (suite, scenarios, clients),
the design that measures the sides side by side in time (design_names.py: a duet, or
paired rounds; flags.choose_design picks it), where the servers and the client run
(placement.py: the runner's placement, resolved once, and the rounds' placement, colocated
once when the plan colocates), the targets the run folders record, the generator that draws
a duet's slots, and the load series' rate. Its sides are Served (a build and its flags), so
a ref (ab), a commit (bisect), an injected knob (calibrate) and this checkout's build (run
--rounds) are measured the same way, and a culprit that ab flagged is placed by bisect with
the same round.

- `load(side, log)`: the load scenarios' rate, a share of `side`'s capacity on this runner,
  probed once before the rounds so that every round of every side runs at the same rate
  (capacity.py). A plan without a load scenario probes nothing.
- `measure(session, groups, out, settled)`: the rounds of a comparison, kept in a
  session.Session until a look settles (Session.measure: the looks, the time budget, the
  failures). Each round measures every Group (sides measured together) into out/<group>/:
  ab's one (base, head), bisect's three duets or its one of good, cand and bad, calibrate's
  one per kind; their runs are kept under key(group, side).
- `round(sides, out, pair)`: one round of one group into out/<side>/: a duet of "base" and
  "head" (both servers at once, one client-hft; duet.py; head's slot balanced over each pair
  of rounds: `head_slot`) or paired rounds (a fresh server per side, in `order(pair, sides)`).
- `run(side, run_dir)`: the plan against one fresh server of `side` alone: a paired round's
  side, calibrate's solo runs (`solo`); `alone(sides, run_dir)`: one run of each side, one after
  another (the profiled round, profile.py).
- `rounds(side, out, n)`: `hftbench run --rounds N` (the push-to-main job's rounds when it
  has no baseline): the load rate probed once, then N runs of `side` alone, each against a
  fresh server, into out/run_<UTC>_r01_<hex> … (one history point with its spread).

A server that does not start is a RoundError naming the side (and the round, in `rounds`);
a failed cell is a cell.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import numpy as np

from .. import paths
from ..design_names import DUET
from ..results import Run
from . import capacity
from . import placement as placement_mod
from .duet import run_round
from .plan import Plan
from .run import placed, run_plan
from .served import Served
from .server import ServerError

# Paired rounds' orders of the sides, cycled, so each side takes each place equally often.
ORDERS = {
    2: [(0, 1), (1, 0)],  # B,H then H,B then B,H …
    3: [(0, 1, 2), (2, 1, 0), (1, 2, 0), (0, 2, 1), (2, 0, 1), (1, 0, 2)],  # bisect's good, cand, bad
}


def order(pair: int, sides: Sequence[str] = ("base", "head")) -> tuple[str, ...]:
    """The order `sides` run in, in round `pair` of paired rounds (ORDERS; more sides: in
    turn, then in reverse)."""
    n = len(sides)
    cycle = ORDERS.get(n) or [tuple(range(n)), tuple(reversed(range(n)))]
    return tuple(sides[i] for i in cycle[pair % len(cycle)])


def key(group: str, side: str) -> str:
    """Where a group's side keeps its runs in the session: the side, or group/side."""
    return f"{group}/{side}" if group else side


@dataclass(frozen=True)
class Group:
    """Sides a round measures together, into <out>/<the group's name>/<side>/: a duet's two,
    "base" and "head", served at once, or paired rounds' any number, one after another."""

    sides: dict[str, Served]
    rounds: int | None = None  # measured in the first `rounds` rounds only; None: every round


class Session(Protocol):
    """What the rig fills: judge/session.Session (measure never imports judge), which keeps
    the runs and decides, look by look, when the rounds stop."""

    def keep(self, side: str, run: Run) -> None: ...

    def measure(
        self, one_round: Callable[[int], None], settled: Callable[[], bool], **looks
    ) -> str | None: ...


class RoundError(RuntimeError):
    """A round could not run: a server did not start (the message names the side; `side` and
    `group` say which)."""

    def __init__(self, message: str, *, side: str = "", group: str = "") -> None:
        super().__init__(message)
        self.side, self.group = side, group


@dataclass
class Rig:
    plan: Plan
    design: str  # design_names: DUET (duet rounds) or PAIRED_ROUNDS (flags.choose_design chose it)
    targets: dict  # the config's targets, recorded in every run folder
    runner: placement_mod.Placement  # this runner's CPUs, resolved once; run_plan places each run from it
    rng: np.random.Generator = field(default_factory=np.random.default_rng)  # a duet's slot draws
    capacity_rps: float | None = None  # the load scenarios' capacity on this runner (load())
    first_slots: list[str] = field(default_factory=list)  # head's slot in each pair of rounds' first
    timeout_s: float | None = None  # each cell's timeout (run's --timeout); None: from its size
    # Where the rounds run: `runner` as run_plan places it for the plan (colocated() once when
    # the plan colocates): a duet's servers and client, and the capacity probe.
    placement: placement_mod.Placement = field(init=False)

    def __post_init__(self) -> None:
        self.placement = placed(self.plan, self.runner)

    @classmethod
    def of(
        cls,
        plan: Plan,
        design: str,
        targets: dict,
        rng: np.random.Generator | None = None,
        *,
        runner: placement_mod.Placement | None = None,
        timeout_s: float | None = None,
    ) -> Rig:
        """The rig of `plan` on this runner: `runner` (run's --server-cpus / --client-cpus),
        else the runner's HFTBENCH_SERVER_CPUS / HFTBENCH_CLIENT_CPUS (placement.resolve)."""
        where = runner if runner is not None else placement_mod.resolve(None, None)
        rng = rng if rng is not None else np.random.default_rng()
        return cls(plan, design, targets, where, rng, timeout_s=timeout_s)

    @property
    def duet(self) -> bool:
        """Whether the rounds are duets (both servers at once), not paired rounds."""
        return self.design == DUET

    def load(self, side: Served, log: Path) -> float | None:
        """Probe `side`'s capacity and set the load scenarios' rates from it; None (and no
        probe) when the plan has no load scenario."""
        if not capacity.needs_rate(self.plan.scenarios):
            return None
        rps = capacity.measure(self.plan.scenarios, side.bins, list(side.flags), self.placement, log)
        self.plan = dataclasses.replace(self.plan, scenarios=capacity.resolve(self.plan.scenarios, rps))
        self.capacity_rps = rps
        return rps

    def measure(
        self,
        session: Session,
        groups: dict[str, Group],
        out: Path,
        settled: Callable[[], bool],
        *,
        told: Callable[[str, int, dict[str, Run]], None] | None = None,
        after: Callable[[int], None] | None = None,
        **looks,
    ) -> str | None:
        """Rounds of every group until `settled()`, each run kept in `session` under
        key(group, side); what Session.measure returns (None: settled, else why it stopped).
        `told(group, i, runs)` hears each group's round i, `after(i)` each whole round;
        `looks`: Session.measure's spent_before_s, on_more and failed. A server that does not
        start is a RoundError naming its group and side."""

        def one_round(i: int) -> None:
            for name, group in groups.items():
                if group.rounds is not None and i >= group.rounds:
                    continue
                try:
                    runs = self.round(group.sides, out / name, i)
                except RoundError as exc:
                    exc.group = name
                    raise
                for side, run in runs.items():
                    session.keep(key(name, side), run)
                if told is not None:
                    told(name, i, runs)
            if after is not None:
                after(i)

        return session.measure(one_round, settled, **looks)

    def round(self, sides: dict[str, Served], out: Path, pair: int) -> dict[str, Run]:
        """Round `pair` (0-based) of `sides` (a duet's: "base" and "head"); their runs by side."""
        if self.duet:
            if set(sides) != {"base", "head"}:
                raise ValueError(f"a duet serves base and head, not {', '.join(sides)}")
            return run_round(
                sides,
                out,
                pair,
                self.plan.scenarios,
                suite=self.plan.suite,
                targets=self.targets,
                placement=self.placement,
                head_slot=self.head_slot(pair),
            )
        # Unique run ids (the history store keys runs by id): time, side, round.
        return self.alone(
            {name: sides[name] for name in order(pair, tuple(sides))},
            lambda name: paths.round_dir(out, name, pair + 1),
        )

    def alone(self, sides: dict[str, Served], run_dir: Callable[[str], Path]) -> dict[str, Run]:
        """One run of each of `sides` alone, one after another in their order, each into
        `run_dir(name)` (asked as it starts: a folder's time is its run's)."""
        return {name: self.run(side, run_dir(name), name=name) for name, side in sides.items()}

    def solo(self, side: Served, out: Path, name: str, number: int) -> Run:
        """`side` alone into out/run_<UTC>_solo<NN>_<hex> (calibrate's runs of each server alone)."""
        return self.run(side, paths.run_dir(out, "solo", number), name=name)

    def head_slot(self, pair: int) -> str:
        """The duet slot head's server takes in round `pair`: drawn for rounds 0, 2, 4, … and
        the other one in the round after, so every even number of rounds is balanced and the
        round test can take the slot's own effect out (clustered.py)."""
        while len(self.first_slots) <= pair // 2:
            self.first_slots.append("a" if self.rng.random() < 0.5 else "b")
        first = self.first_slots[pair // 2]
        return first if pair % 2 == 0 else ("b" if first == "a" else "a")

    def run(self, side: Served, run_dir: Path, *, name: str = "") -> Run:
        """The plan against one fresh server of `side`, into `run_dir`."""
        try:
            return run_plan(
                self.plan,
                side.bins,
                run_dir,
                targets=self.targets,
                server_flags=list(side.flags),
                timeout_s=self.timeout_s,
                quiet=True,
                git=side.git_info(),
                placement=self.runner,  # run_plan places it for the plan, as self.placement is
            )
        except ServerError as exc:
            raise RoundError(f"{name or side.label or side.bins} server: {exc}", side=name) from exc

    def rounds(
        self,
        side: Served,
        out: Path,
        n: int,
        *,
        name: str = "",
        starting: Callable[[int, Path], None] | None = None,
    ) -> Iterator[Run]:
        """`side` alone in `n` rounds, each run as it ends: the load rate probed once first
        (load(), its log out/capacity-probe.log), then round i against a fresh server into
        out/run_<UTC>_r<ii>_<hex> (`starting(i, run_dir)` told before it runs). A server that
        does not start is a RoundError naming the round and the side; the rounds before it
        stay written."""
        self.load(side, out / "capacity-probe.log")
        for i in range(1, n + 1):
            run_dir = paths.run_dir(out, "r", i)
            if starting:
                starting(i, run_dir)
            try:
                run = self.run(side, run_dir, name=name)
            except RoundError as exc:
                raise RoundError(f"round {i} of {n} ({run_dir.name}): {exc}") from exc
            yield run
