"""Memory per order: the bytes of anonymous resident memory a server grows by for each order
it answers (measure/memory.py reads them per cell), head against base. Pure.

A difference, not a ratio. Base itself keeps about nothing per order once its books are
emptied (a reset frees them, and the allocator hands the same memory to the next cell's), so
its value sits near 0, at times below it; a ratio over it is noise divided by noise. What
matters is the bytes head keeps beyond base's per order: 32 bytes more per order is 32 MB a
million orders, kept for as long as the process runs. So each round's difference head − base
is tested over the rounds with Student's t (the round is where the randomness enters: fresh
servers, slots, an allocator's steps; clustered.py takes a duet's slot out, as for the
ratios), and unpaired runs with Welch's t.

The resolution this can claim: a page (4 KiB) over a cell's orders (0.08 B/order at 50,000;
a smaller difference is never named, however certain: `classify`'s resolution), and the
allocator's own steps: a glibc arena grows its heap by at least 128 KiB at a time,
jemalloc by its extents, each step a few bytes per order in one round and none in the next;
those land on both sides alike in an A/A and widen the interval, they do not shift it. The
threshold (gates.yaml: bytes per order) is set well above them; the A/A spread says how far.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.special import stdtr, stdtrit

from ..answers import FASTER, IMPROVEMENT, INCONCLUSIVE, NO_CHANGE, REGRESSION, SLOWER
from ..verdict import MetricResult
from . import clustered


@dataclass(frozen=True)
class Difference:
    """head − base of one value per round or run: its estimate, standard error, degrees of
    freedom, the test's p, and each side's mean (the shown values)."""

    estimate: float
    se: float
    df: float
    p_value: float
    base_mean: float
    head_mean: float
    n: int  # the rounds (paired) or the smaller side's runs (unpaired) behind it


def paired_difference(
    base: Sequence[float], head: Sequence[float], slots: Sequence[str | None] = ()
) -> Difference:
    """Student's t over the rounds' differences head − base (one value per round and side, the
    rounds aligned), slot-adjusted where every round carries a duet slot (clustered.py)."""
    b, h = np.asarray(base, dtype=float), np.asarray(head, dtype=float)
    if len(b) != len(h):
        raise ValueError(f"{len(b)} base rounds and {len(h)} head rounds: a paired test needs them aligned")
    d = h - b
    estimate, se, df = clustered.round_estimate(d, slots)
    p = clustered.t_p_value(estimate, se, df)
    w = clustered.round_weights(d, slots)
    return Difference(estimate, se, df, p, float(w @ b), float(w @ h), len(d))


def unpaired_difference(base: Sequence[float], head: Sequence[float]) -> Difference:
    """Welch's t of the two sides' means (runs exchangeable as wholes: `hftbench compare`)."""
    b, h = np.asarray(base, dtype=float), np.asarray(head, dtype=float)
    estimate = float(h.mean() - b.mean()) if len(b) and len(h) else float("nan")
    if len(b) < 2 or len(h) < 2:
        return Difference(estimate, float("nan"), 0, 1.0, _mean(b), _mean(h), min(len(b), len(h)))
    vb, vh = float(b.var(ddof=1)) / len(b), float(h.var(ddof=1)) / len(h)
    se = math.sqrt(vb + vh)
    df = (vb + vh) ** 2 / (vb**2 / (len(b) - 1) + vh**2 / (len(h) - 1)) if se > 0 else len(b) + len(h) - 2
    p = _t_p(estimate, se, df)
    return Difference(estimate, se, df, p, _mean(b), _mean(h), min(len(b), len(h)))


def _mean(x: np.ndarray) -> float:
    return float(x.mean()) if len(x) else float("nan")


def _t_p(estimate: float, se: float, df: float) -> float:
    """Two-sided p of Student's t (a fractional df too); 1 when it cannot be computed, 0 for a
    non-zero estimate with no spread at all."""
    if df <= 0 or not (math.isfinite(estimate) and math.isfinite(se)):
        return 1.0
    if se == 0:
        return 1.0 if estimate == 0 else 0.0
    return float(2.0 * stdtr(df, -abs(estimate) / se))


def pooled(diffs: Sequence[Difference], weights: Sequence[float]) -> Difference:
    """Several runners' differences as one (a pool's combine): their mean under `weights`
    (fixed before the data: strata.fixed_weights), its standard error from each one's, and the
    fewest degrees of freedom of any (conservative)."""
    total = sum(weights)
    w = [x / total for x in weights]
    estimate = sum(wi * d.estimate for wi, d in zip(w, diffs, strict=True))
    se = math.sqrt(sum(wi**2 * d.se**2 for wi, d in zip(w, diffs, strict=True)))
    df = min(d.df for d in diffs)
    base = sum(wi * d.base_mean for wi, d in zip(w, diffs, strict=True))
    head = sum(wi * d.head_mean for wi, d in zip(w, diffs, strict=True))
    return Difference(estimate, se, df, _t_p(estimate, se, df), base, head, sum(d.n for d in diffs))


def interval(d: Difference, confidence: float) -> tuple[float, float] | None:
    """estimate ± t_{df, (1 + confidence) / 2} · se, in bytes per order; None without a spread."""
    if d.df <= 0 or not (math.isfinite(d.estimate) and math.isfinite(d.se)):
        return None
    half = float(stdtrit(d.df, 0.5 + confidence / 2.0)) * d.se
    return d.estimate - half, d.estimate + half


def detectable(se: float, df: float, level: float, threshold: float = 0.0) -> float:
    """The smallest extra bytes per order flagged with 80 % power at `level`: the two-sided
    critical value plus the power quantile, in standard errors; with `threshold`, the gate's
    bar (significant *and* at least the threshold: rules.gate_detectable_effect's shape, in
    bytes). Infinite without a spread to judge by."""
    if df <= 0 or not math.isfinite(se):
        return float("inf")
    critical, power = float(stdtrit(df, 1.0 - level / 2.0)), float(stdtrit(df, 0.8))
    return max(threshold, critical * se) + power * se


# The readings' grain: a page. A cell's two readings each round to one, so a difference
# smaller than a page over the cell's orders is below what the readings can tell apart.
PAGE_BYTES = 4096


def resolution(orders_per_cell: int) -> float:
    """The smallest bytes per order the readings resolve: a page over a cell's orders (0.08 B
    at 50,000); infinite without orders."""
    return PAGE_BYTES / orders_per_cell if orders_per_cell > 0 else float("inf")


def classify(
    estimate: float,
    ci: tuple[float, float],
    p_adjusted: float,
    *,
    threshold: float,
    alpha: float,
    resolution: float = 0.0,
) -> str:
    """The row's answer, in the words of the ratios (rules.classify), on differences: a
    regression is significant and at least `threshold` bytes per order more; "no change" is
    the whole interval inside ±threshold and holding 0; inside the band, a difference the
    test or the interval finds is named (SLOWER: more memory, under the gate; FASTER: less),
    unless it is smaller than `resolution`: a page a cell that one side's process maps and
    the other's does not, in every round alike, is certain to the t and no memory per order."""
    lo, hi = ci
    if not all(math.isfinite(x) for x in (estimate, lo, hi)):
        return INCONCLUSIVE
    significant = p_adjusted < alpha
    if significant and estimate >= threshold:
        return REGRESSION
    if significant and estimate <= -threshold:
        return IMPROVEMENT
    if -threshold < lo and hi < threshold:
        resolved = abs(estimate) >= resolution
        if resolved and (significant or lo > 0) and estimate > 0:
            return SLOWER
        if resolved and (significant or hi < 0) and estimate < 0:
            return FASTER
        return NO_CHANGE
    return INCONCLUSIVE


def rounds_to_settle(estimate: float, ci: tuple[float, float], threshold: float, rounds: int) -> int | None:
    """Rounds per side that would make an interval like this one clear ±threshold (its half
    width shrinks as 1/sqrt(rounds)); None when the estimate sits on a bound."""
    half = (ci[1] - ci[0]) / 2.0
    margin = min(abs(threshold - estimate), abs(-threshold - estimate))
    if rounds < 1 or half <= 0 or margin <= 1e-12 or not math.isfinite(half):
        return None
    return max(int(math.ceil(rounds * (half / margin) ** 2)), rounds + 1)


def extra(r: MetricResult) -> float | None:
    """The bytes per order head keeps beyond base in a memory row: its estimate (each side's
    shown mean is weighted as the estimate is, so their difference is it); None unknown."""
    if r.base_value is None or r.head_value is None:
        return None
    return r.head_value - r.base_value


def fails(r: MetricResult, threshold: float, *, undecided: bool = False) -> str:
    """The check's message for a gated memory row that failed it."""
    lo, hi = r.ci or (float("nan"), float("nan"))
    said = (
        f"{r.series} memory per order: head keeps {extra(r):+,.1f} B/order more than base "
        f"(interval {lo:+,.1f} … {hi:+,.1f})"
    )
    if undecided:
        return (
            f"{said}, beyond the threshold {threshold:,.0f} B/order, undecided: {r.reason or 'inconclusive'}"
        )
    return f"{said}, adjusted p = {r.p_adjusted:.2g}, beyond the threshold {threshold:,.0f} B/order"
