"""A pool's verdict: one series × metric tested on several runners at once, each runner a
stratum (pure functions; combine.py applies them).

Why strata. Runners differ in absolute latency (a server part at 18 µs, a desktop at 25 µs):
pooling their values would add that difference to the noise and drown a 10 % change. Each
runner already measured base and head side by side (paired blocks or rounds, designs.py) and
tested log(head / base) with its own randomization test. Those within-runner statistics are
free of the runner's level, so they are added up, never the values:

    T = Σ_s w_s · L_s          L_s: runner s's log(head / base),  Σ_s w_s = 1

- The null distribution of T is the product of the runners' own: replicate r of T is
  Σ_s w_s · null_s[r], each runner's replicates drawn independently (its splits of runs,
  or the t draws of its round-level test: designs.py). Nothing is exchanged between
  runners, so a runner 30 % slower than another moves neither its L_s nor its null: the
  level holds.
- The weights are fixed before this comparison's data: each runner's calibrated noise for
  the series × metric (its calibration record's A/A MDE, taken as log(MDE): proportional to
  the sd of its test at the calibrated level), w_s ∝ 1 / log(MDE_s)², or equal weights when
  any runner lacks that figure. Never from the comparison itself: the spread of a runner's
  null grows with a real effect (the sign flips of a +30 % pair span ±30 %; a round-level
  t's standard error grows with an effect that varies between rounds), so weights from it
  made the runner that regressed more count less (×1.30 and ×1.02 pooled to about ×1.02).
  With weights fixed, T's null is exactly the weighted sum of the runners' own nulls, and
  each runner's test keeps its validity in the sum. Two runners of equal noise get 1/2 each
  and the standard deviation of T falls by √2: the MDE of two replicas is about 0.71 of
  one's. A runner that cannot be tested (no null replicates, or all equal) gets none.
- The pool never averages a runner's own regression away: that rule is pooled.py's, above
  this test (a runner's own verdict against the pooled row).
- The interval is the stratified bootstrap: replicate r of the ratio is
  exp(Σ_s w_s · log(boot_s[r])), each runner's pairs resampled within it.
- One stratum is returned as it came, so a pool of one is the single runner's test.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .designs import Tested

CALIBRATED, EQUAL = "calibration", "equal"  # where a pool row's weights came from


@dataclass(frozen=True)
class Combined:
    """The pooled test of one series × metric: what compare's rows need, and each weight."""

    tested: Tested
    weights: tuple[float, ...]  # one per stratum, in the order given; sum 1
    basis: str = EQUAL  # CALIBRATED (1 / noise² of each runner's record) or EQUAL


def fixed_weights(noise: Sequence[float | None]) -> tuple[np.ndarray, str]:
    """Weights from figures fixed before the data (each runner's calibrated noise, a log
    ratio): ∝ 1 / noise², normalised, when every stratum has a finite figure > 0; else equal."""
    n = len(noise)
    figures = np.array([np.nan if x is None else float(x) for x in noise], dtype=float)
    if n and np.all(np.isfinite(figures)) and np.all(figures > 0):
        w = 1.0 / figures**2
        return w / w.sum(), CALIBRATED
    return np.full(n, 1.0 / n), EQUAL


def weights(strata: Sequence[Tested], noise: Sequence[float | None] | None = None) -> tuple[np.ndarray, str]:
    """fixed_weights of the strata's calibrated noise (None: equal), a stratum that cannot be
    tested (no null replicates, or every replicate equal) left out and the rest renormalised;
    equal weights when none can be. Invariant under the randomization: no data enters but
    whether a stratum has a null at all."""
    w, basis = fixed_weights(list(noise) if noise is not None else [None] * len(strata))
    testable = np.array([len(t.null) > 1 and float(np.ptp(t.null)) > 0 for t in strata])
    if not testable.any():
        return np.full(len(strata), 1.0 / len(strata)), basis
    w = np.where(testable, w, 0.0)
    return w / w.sum(), basis


def _aligned(arrays: Sequence[np.ndarray], w: np.ndarray) -> np.ndarray:
    """Σ_s w_s · a_s[r] over the replicates every weighted stratum has."""
    used = [(a, x) for a, x in zip(arrays, w, strict=True) if x > 0]
    n = min(len(a) for a, _ in used)
    return sum(x * a[:n] for a, x in used) if n else np.array([])


def smallest_p(strata: Sequence[Tested], w: np.ndarray) -> float:
    """The least two-sided p of the product test: every weighted stratum at its own extreme,
    in the same direction."""
    floors = [t.smallest_p for t, x in zip(strata, w, strict=True) if x > 0]
    return float(min(1.0, 2.0 * np.prod([f / 2.0 for f in floors])))


def combine(strata: Sequence[Tested], noise: Sequence[float | None] | None = None) -> Combined:
    """The stratified test of the runners' tests of one series × metric (module doc);
    `noise`: each runner's calibrated noise (log of its record's MDE), None where it has none."""
    if not strata:
        raise ValueError("combine: no stratum to combine")
    if noise is not None and len(noise) != len(strata):
        raise ValueError(f"combine: {len(noise)} noise figures for {len(strata)} strata")
    if len(strata) == 1:
        return Combined(strata[0], (1.0,), fixed_weights(noise or [None])[1])
    w, basis = weights(strata, noise)
    observed = float(sum(x * t.observed for t, x in zip(strata, w, strict=True) if x > 0))
    null = _aligned([t.null for t in strata], w)
    with np.errstate(divide="ignore", invalid="ignore"):
        boots = _aligned([np.log(t.replicates) for t in strata], w)
    floor = smallest_p(strata, w)
    finite = null[np.isfinite(null)]
    if not np.isfinite(observed) or len(finite) == 0:
        p = 1.0
    else:
        extreme = np.count_nonzero(np.abs(finite) >= abs(observed) - 1e-12)
        p = float(max((1 + extreme) / (1 + len(finite)), floor))
    units = sum(t.n for t, x in zip(strata, w, strict=True) if x > 0)
    tested = Tested(p, floor, np.exp(boots), units, observed, finite)
    return Combined(tested, tuple(float(x) for x in w), basis)


def weighted_geomean(values: Sequence[float | None], w: Sequence[float]) -> float | None:
    """The pool's shown value of a side: the runners' values, averaged as the test weighs
    their ratios (so head / base of the shown values is the pooled ratio)."""
    pairs = [(v, x) for v, x in zip(values, w, strict=True) if x > 0]
    if not pairs or any(v is None or not v > 0 for v, _ in pairs):
        return None
    if len(pairs) == 1:  # one runner: its own value, exactly
        return float(pairs[0][0])
    return float(np.exp(sum(x * np.log(v) for v, x in pairs) / sum(x for _, x in pairs)))
