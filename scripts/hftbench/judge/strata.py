"""A pool's verdict: one series × metric tested on several runners at once, each runner a
stratum (pure functions; combine.py applies them).

Why strata. Runners differ in absolute latency (a server part at 18 µs, a desktop at 25 µs):
pooling their values would add that difference to the noise and drown a 10 % change. Each
runner already measured base and head side by side (paired blocks or rounds, designs.py) and
tested log(head / base) with its own randomization test. Those within-runner statistics are
free of the runner's level, so they are added up, never the values:

    T = Σ_s w_s · L_s          L_s: runner s's log(head / base),  Σ_s w_s = 1

- The null distribution of T is the product of the runners' own: replicate r of T is
  Σ_s w_s · null_s[r], each runner's replicates drawn independently (sign flips within its
  pairs, or its splits of runs). Nothing is exchanged between runners, so a runner 30 %
  slower than another moves neither its L_s nor its null: the level holds.
- The weights are inverse variances of each runner's *null*, not of its data: the null's
  spread is the same whichever way a runner's pairs are flipped, so the weights are fixed
  under the randomization and the test stays a randomization test. Two runners of equal
  noise get 1/2 each and the standard deviation of T falls by √2: the MDE of two replicas
  is about 0.71 of one's.
- The interval is the stratified bootstrap: replicate r of the ratio is
  exp(Σ_s w_s · log(boot_s[r])), each runner's pairs resampled within it.
- One stratum is returned as it came, so a pool of one is the single runner's test.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .designs import Tested


@dataclass(frozen=True)
class Combined:
    """The pooled test of one series × metric: what compare's rows need, and each weight."""

    tested: Tested
    weights: tuple[float, ...]  # one per stratum, in the order given; sum 1


def weights(strata: Sequence[Tested]) -> np.ndarray:
    """Inverse variance of each stratum's null replicates, normalised; a stratum whose null
    has no spread (one pair, every replicate equal) or no replicates gets no weight. Equal
    weights when none has a spread."""
    var = np.array([np.var(t.null) if len(t.null) > 1 else np.nan for t in strata])
    ok = np.isfinite(var) & (var > 0)
    if not ok.any():
        return np.full(len(strata), 1.0 / len(strata))
    w = np.where(ok, 1.0 / np.where(ok, var, 1.0), 0.0)
    return w / w.sum()


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


def combine(strata: Sequence[Tested]) -> Combined:
    """The stratified test of the runners' tests of one series × metric (module doc)."""
    if not strata:
        raise ValueError("combine: no stratum to combine")
    if len(strata) == 1:
        return Combined(strata[0], (1.0,))
    w = weights(strata)
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
    return Combined(tested, tuple(float(x) for x in w))


def weighted_geomean(values: Sequence[float | None], w: Sequence[float]) -> float | None:
    """The pool's shown value of a side: the runners' values, averaged as the test weighs
    their ratios (so head / base of the shown values is the pooled ratio)."""
    pairs = [(v, x) for v, x in zip(values, w, strict=True) if x > 0]
    if not pairs or any(v is None or not v > 0 for v, _ in pairs):
        return None
    if len(pairs) == 1:  # one runner: its own value, exactly
        return float(pairs[0][0])
    return float(np.exp(sum(x * np.log(v) for v, x in pairs) / sum(x for _, x in pairs)))
