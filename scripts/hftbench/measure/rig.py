"""The measuring rig that ab, bisect, calibrate and `hftbench run --rounds` share: sides in,
rounds out.

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
- `round(sides, out, pair)`: one round of {"base": …, "head": …} into out/base and out/head:
  a duet (both servers at once, one client-hft; duet.py; head's slot balanced over each pair
  of rounds: `head_slot`) or paired rounds (a fresh server per side, in `order(pair)`).
  The caller keeps the runs (session.Session).
- `run(side, run_dir)`: the plan against one fresh server of `side` alone: bisect's rounds
  of three, calibrate's solo runs, the profiled round (profile.py).
- `rounds(side, out, n)`: `hftbench run --rounds N` (the push-to-main job's rounds when it
  has no baseline): the load rate probed once, then N runs of `side` alone, each against a
  fresh server, into out/run_<UTC>_r01_<hex> … (one history point with its spread).

A server that does not start is a RoundError naming the side (and the round, in `rounds`);
a failed cell is a cell.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

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


def order(pair: int) -> tuple[str, str]:
    """Which side runs first in round pair `pair` of paired rounds: B,H then H,B then B,H …"""
    return ("base", "head") if pair % 2 == 0 else ("head", "base")


class RoundError(RuntimeError):
    """A round could not run: a server did not start (the message names the side)."""


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

    def round(self, sides: dict[str, Served], out: Path, pair: int) -> dict[str, Run]:
        """Round `pair` (0-based) of sides "base" and "head"; their runs by side."""
        if self.duet:
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
        runs = {}
        for name in order(pair):
            # Unique run ids (the history store keys runs by id): time, side, round.
            run_dir = paths.run_dir(out / name, name, pair + 1)
            runs[name] = self.run(sides[name], run_dir, name=name)
        return runs

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
            raise RoundError(f"{name or side.label or side.bins} server: {exc}") from exc

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
