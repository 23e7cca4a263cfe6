"""Tails past P99 without 100,000 orders in a run: whose orders are the round's slowest 0.1 %.

A round of latency-1c holds 50,000 orders a side, so its P99.9 is the 50th slowest order, and
the ratio of two such quantiles moves with the tail's shape as much as with the servers. The
question a user asks of the tail is simpler: do more of my orders wait among the slowest? Each
round answers it by counting: the line is the round's P99.9 over both sides' orders together,
and the row's statistic is head's share of its orders past the line over base's share. The
same build on both sides puts as many past it; a rare stall on 1 order in 700 of head's puts
about three times as many of head's orders there as base's, whatever the stall's length.

Why the line is drawn over both sides, not at base's own P99.9: then it is one side's own
order statistic (head, a fresh sample, has on average b + 1 orders past base's b-th slowest),
and the log of a count of about 50 has a bias of its own; they roughly cancel for independent
sides, by amounts that depend on how alike the two sides' orders are (in a duet the host's
stalls hit both at once). Over both sides together, base and head are exchangeable under no
change, so the log ratio centres on 0 whatever the dependence, and the statistic reads plainly:
of the round's slowest 0.1 %, how many are head's against base's.

The counts need no 100,000 samples in one run: a round's 50 or so orders per side past the
line carry a Poisson spread of about 1/√50 each (0.2 in log), and the rounds, the level where
the randomness enters (clustered.py), carry the rest: Student's t over the rounds' log ratios,
as every other round-level row.

Unpaired runs (`hftbench compare` of two folders) have no round to draw the line in: the line
is the q over all runs of both sides, and each run's share past it is one value of the
permutation test over runs (designs.value_test's way).
"""

from __future__ import annotations

import numpy as np

from ..histograms import Grid, merged_quantile, quantile_rows

CONTINUITY = 0.5  # orders added to each side's count: a round with none past the line stays finite


def round_shares(g: Grid, q: float) -> tuple[np.ndarray, np.ndarray]:
    """(base's, head's) share of its orders past the q of the same round's orders of both sides
    (one grid row per round and side), each count with CONTINUITY added."""
    lines = quantile_rows(g.values_ns, g.base + g.head, q)
    past = g.values_ns[None, :] > lines[:, None]  # (rounds, buckets): beyond this round's line
    b = (g.base * past).sum(axis=1) + CONTINUITY
    h = (g.head * past).sum(axis=1) + CONTINUITY
    return b / g.base.sum(axis=1), h / g.head.sum(axis=1)


def run_shares(g: Grid, q: float) -> tuple[np.ndarray, np.ndarray]:
    """(base's, head's) share of each run's orders past the q of every run of both sides (one
    grid row per run), each count with CONTINUITY added: the unpaired design's one value per
    run."""
    line = merged_quantile(g.values_ns, np.vstack([g.base, g.head]), q)
    past = g.values_ns > line
    return (
        (g.base[:, past].sum(axis=1) + CONTINUITY) / g.base.sum(axis=1),
        (g.head[:, past].sum(axis=1) + CONTINUITY) / g.head.sum(axis=1),
    )
