"""How a comparison's units of replication were measured, and the test that matches each.

- `unpaired`: base runs and head runs, exchangeable as wholes (`hftbench compare` of two
  folders, a store baseline): permutation over runs, bootstrap over runs (stats.py).
- `paired-rounds`: `ab` rounds B H H B …, base and head round of each round pair one pair.
- `duet`: both servers at once, one client interleaving orders between them (duet.py); each
  round's `.hlog` is cut into blocks that start and end at the same instant on both sides.

Both paired designs are judged at the level of the round (clustered.py): each round's own
log ratio, Student's t over rounds, because the server processes, their slots and their
placement are drawn once per round and a test over blocks leaves that variance out. A
duet's slots are balanced over its rounds and taken out of the test (clustered.py). A
duet's 0.1 s blocks stay in its `.hlog` (and paired.py's block tests stay pure and tested),
but the gate no longer treats them as independent units.

A pair's two members are found by their round: run folders are named
`run_<stamp>_<side><NN>_<hex>` (ab.py, duet.py, bisect.py's good / cand / bad;
paths.fresh_dir), and the round number NN is the key. A round with a failed cell on one side
has no partner and is left out of a paired comparison.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from .. import histograms
from ..design_names import DUET, PAIRED_ROUNDS, UNPAIRED
from ..series import Repeat
from . import clustered, exceedance, stats

DESIGNS = (UNPAIRED, PAIRED_ROUNDS, DUET)
DESCRIBE = {
    UNPAIRED: "runs of each side, exchangeable as wholes: permutation and bootstrap over runs",
    PAIRED_ROUNDS: "round pairs (B H, H B, …): each round pair's log ratio, Student's t over rounds",
    DUET: "base and head served at once, orders interleaved at random; each round's log ratio, "
    "Student's t over rounds (the servers are drawn per round)",
}
_ROUND = re.compile(r"_(?:base|head|good|cand|bad)(\d+)(?:_[0-9a-f]{6})?(?:#r\d+)?$")


def round_key(run_id: str) -> str | None:
    """The round a run of `ab` belongs to ("run_…_head07_3fa9c1" -> "07"); None for other names."""
    m = _ROUND.search(run_id)
    return m.group(1) if m else None


def pairs(base: Sequence[Repeat], head: Sequence[Repeat]) -> list[tuple[Repeat, Repeat]]:
    """Base and head repeats of the same round, in base's order."""
    by_round = {round_key(r.run_id): r for r in head}
    return [(b, by_round[k]) for b in base if (k := round_key(b.run_id)) is not None and k in by_round]


@dataclass(frozen=True)
class Units:
    """A comparison's units for one series: the histograms on one grid and how they pair."""

    design: str
    grid: histograms.Grid
    # 0 when unpaired; else the rounds: one grid row per round and side (the round's whole
    # histogram), the level the test and the interval are taken at (clustered.py)
    pairs: int
    slots: tuple[str | None, ...] = ()  # a duet's: base's slot in each round (clustered.py)


def units(design: str, base: Sequence[Repeat], head: Sequence[Repeat]) -> Units | None:
    """The units `design` compares; None when there are none (a paired design without one
    complete pair). Both paired designs: one row per round and side, the round's whole
    histogram (a duet's 0.1 s blocks are in its .hlog, but the test is over rounds)."""
    if design == UNPAIRED:
        return Units(design, histograms.grid([r.histogram for r in base], [r.histogram for r in head]), 0)
    matched = pairs(base, head)
    if not matched:
        return None
    rounds = histograms.grid([b.histogram for b, _ in matched], [h.histogram for _, h in matched])
    return Units(design, rounds, len(matched), tuple(b.slot for b, _ in matched))


@dataclass(frozen=True)
class Tested:
    """A test's answer for one metric: p, the interval's replicates, the noise for the MDE."""

    p_value: float
    smallest_p: float
    replicates: np.ndarray
    n: int  # units behind the interval (the smaller side's runs, or the pairs)
    # The test's statistic, log(head / base), and its null replicates: what a pool's combine
    # (strata.py) adds up across runners.
    observed: float = float("nan")
    null: np.ndarray = field(default_factory=lambda: np.array([]))
    # A round-level t (clustered.py): the standard error of `observed` and its degrees of
    # freedom; the interval is Student's, not the replicates' percentiles. df 0: not a t. A
    # pool's sum of runners' t's (strata.t_sum) has Welch–Satterthwaite's, not a whole number.
    se: float = float("nan")
    df: float = 0
    # A round-level t: (base, head) geometric means over the rounds, the values shown beside
    # its estimate exp(observed) (their ratio); None for the tests over runs.
    shown: tuple[float, float] | None = None


def round_test(
    base: np.ndarray, head: np.ndarray, *, slots: Sequence[str | None] = (), n: int, rng: np.random.Generator
) -> Tested:
    """Student's t over the rounds' log ratios of one value per round and side (a quantile,
    CPU per order), centred on their mean, the duet's slot taken out where the rounds carry
    it (clustered.py); replicates and null are t draws, so a pool's combine can add it to
    other runners'. `shown`: each side's geometric mean over the rounds, whose ratio is the
    estimate."""
    log_ratios = clustered.round_value_log_ratios(base, head)
    observed, se, df = clustered.round_estimate(log_ratios, slots)
    p = clustered.t_p_value(observed, se, df)
    reps = np.exp(observed + clustered.t_draws(se, df, n, rng))
    null = clustered.t_draws(se, df, n, rng)
    rounds = int(np.count_nonzero(np.isfinite(log_ratios)))
    shown = clustered.geometric_means(base, head, slots)
    return Tested(p, 0.0, reps, rounds, observed, null, se, df, shown)


def quantile_test(u: Units, q: float, *, n_perm: int, n_boot: int, rng: np.random.Generator) -> Tested:
    g = u.grid
    if u.pairs:  # the rounds' quantiles in µs, as the shown values are (the grid holds ns)
        base_us, head_us = (v / 1e3 for v in clustered.round_quantiles(g, q))
        return round_test(base_us, head_us, slots=u.slots, n=n_boot, rng=rng)
    perm = stats.permutation_quantile_test(g, q, n_perm=n_perm, rng=rng)
    reps = stats.bootstrap_ratio_replicates(g, q, n_boot=n_boot, rng=rng)
    n = min(len(g.base), len(g.head))
    return Tested(perm.p_value, perm.smallest_p, reps, n, perm.observed, perm.null_log_ratios)


def exceedance_test(u: Units, q: float, *, n_perm: int, n_boot: int, rng: np.random.Generator) -> Tested:
    """Head's share of its orders past the q of both sides' orders against base's share
    (exceedance.py): over the rounds (both paired designs: each round's own line), or over
    runs against one line drawn over every run (unpaired; `shown`: each side's mean share)."""
    g = u.grid
    if u.pairs:
        base, head = exceedance.round_shares(g, q)
        return round_test(base, head, slots=u.slots, n=n_boot, rng=rng)
    base, head = exceedance.run_shares(g, q)
    return replace(
        runs_test(base, head, n_perm=n_perm, n_boot=n_boot, rng=rng),
        shown=(float(np.mean(base)), float(np.mean(head))),
    )


def mean_test(
    design: str, base: Sequence[Repeat], head: Sequence[Repeat], *, n_perm: int, n_boot: int, rng
) -> Tested:
    """Per-run throughputs: over runs (unpaired), or over rounds (both paired designs: a
    duet's blocks carry no throughput of their own)."""
    return value_test(design, base, head, lambda r: r.throughput_rps, n_perm=n_perm, n_boot=n_boot, rng=rng)


def value_test(
    design: str, base: Sequence[Repeat], head: Sequence[Repeat], of, *, n_perm: int, n_boot: int, rng
) -> Tested:
    """One scalar per run (`of(repeat)`: throughput, CPU per order): tested over runs
    (unpaired: the ratio of the sides' means) or over rounds (paired designs: the rounds'
    geometric mean ratio, clustered.py)."""
    if design != UNPAIRED:
        matched = [(x, y) for x, y in pairs(base, head) if of(x) is not None and of(y) is not None]
        if matched:
            b = np.array([of(x) for x, _ in matched], dtype=float)
            h = np.array([of(y) for _, y in matched], dtype=float)
            return round_test(b, h, slots=tuple(x.slot for x, _ in matched), n=n_boot, rng=rng)
    b = [of(x) for x in base if of(x) is not None]
    h = [of(y) for y in head if of(y) is not None]
    return runs_test(b, h, n_perm=n_perm, n_boot=n_boot, rng=rng)


def runs_test(
    base: Sequence[float], head: Sequence[float], *, n_perm: int, n_boot: int, rng: np.random.Generator
) -> Tested:
    """One value per run, unpaired: permutation over runs of the ratio of the sides' means, its
    bootstrap replicates resampling runs on each side."""
    perm = stats.permutation_mean_test(base, head, n_perm=n_perm, rng=rng)
    reps = stats.bootstrap_mean_replicates(base, head, n_boot=n_boot, rng=rng)
    return Tested(
        perm.p_value, perm.smallest_p, reps, min(len(base), len(head)), perm.observed, perm.null_log_ratios
    )
