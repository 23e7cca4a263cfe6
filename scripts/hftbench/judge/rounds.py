"""The rounds of an interleaved measurement (`ab`, `bisect`) and the looks they allow, declared once.

A *look* is a verdict taken while measuring: the first after `repeats` rounds a side, then
one every `step` rounds while a gated metric is undecided, up to `max_repeats`. Each look is
a test, so the gate runs at alpha / looks (gates.Gates.for_looks). `calibrate` measures
the gate at the looks ab takes with its defaults.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from ..errors import UsageError


@dataclass(frozen=True)
class Rounds:
    repeats: int  # rounds a side before the first look
    max_repeats: int  # most rounds a side while undecided
    step: int  # rounds a side added per look
    time_budget_s: float  # no further round once measuring would pass it
    # An early look (ab): after this many rounds a side, stop only on a regression certain at
    # a small share of alpha (gates.EARLY_SHARE); 0: none. It decides nothing else.
    early: int = 0

    @property
    def looks(self) -> int:
        """How many verdicts may be taken: at `repeats`, then every `step` rounds up to the max."""
        return 1 + -(-(self.max_repeats - self.repeats) // self.step)


# The round is where the variance enters, so the MDE falls with the rounds twice: through the
# standard error and through t's quantile at alpha / looks / family (df = rounds - 2, the
# slot taken out). 16 rounds at the first look and 3 looks (16, 32, 48) take latency-1c's
# P50 MDE under 1 % on the 2-core VM (its A/A round sd is about 0.7 %: 12 rounds gave
# +1.2 %) for 4/3 of 12 rounds' measuring (a duet round of suite pr is about 4.5 s there);
# shorter rounds would not do it: at half the orders a round's P99 is at the mercy of one
# host stall (docs/measurements.md, 2026-11-28 and 2026-11-29). The early look at 8 rounds
# stops only on a regression certain at alpha / 31 (gates.EARLY_SHARE): an obvious one.
AB_ROUNDS = Rounds(repeats=16, max_repeats=48, step=16, time_budget_s=270.0, early=8)


def rounds_from_args(args: argparse.Namespace, min_repeats: int = 1) -> Rounds:
    """The rounds flags (commands/flags.py: --repeats, --max-repeats, --step, --time-budget),
    checked (UsageError naming the flag)."""
    if not min_repeats <= args.repeats <= args.max_repeats:
        raise UsageError(
            f"need {min_repeats} <= --repeats ({args.repeats}) <= --max-repeats ({args.max_repeats})"
        )
    if args.step < 1:
        raise UsageError(f"--step must be >= 1 (got {args.step})")
    if args.time_budget < 0:
        raise UsageError(f"--time-budget must be >= 0 seconds (got {args.time_budget})")
    early = AB_ROUNDS.early if args.repeats > AB_ROUNDS.early else 0
    return Rounds(args.repeats, args.max_repeats, args.step, args.time_budget, early)
