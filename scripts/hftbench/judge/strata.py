"""A pool's verdict: one series × metric tested on several runners at once, each runner a
stratum (pure functions; combine.py applies them).

Why strata. Runners differ in absolute latency (a server part at 18 µs, a desktop at 25 µs):
pooling their values would add that difference to the noise and drown a 10 % change. Each
runner already measured base and head side by side (paired blocks or rounds, designs.py) and
tested log(head / base) with its own test (a t over rounds, or a permutation over runs). Those
within-runner statistics are free of the runner's level, so they are added up, never the
values:

    T = Σ_s w_s · L_s          L_s: runner s's log(head / base),  Σ_s w_s = 1

- Where every weighted runner's test is a round-level t (designs.round_test: its estimate
  L_s, standard error se_s, df_s degrees of freedom), T is tested analytically: its standard
  error is sqrt(Σ_s w_s² · se_s²), its degrees of freedom Welch–Satterthwaite's
  (Σ_s w_s² se_s²)² / Σ_s (w_s² se_s²)² / df_s, and the p-value is Student's two-sided, as
  one runner's is (t_sum). The interval is Student's about T with the same standard error
  and degrees of freedom (rows._tested), so the interval and the p agree, and neither
  has a floor: two runners at +30 % with 16 rounds each (round sd 2 %) are p ~ 1e-35, where
  the t draws of the Monte Carlo product (2,000 of them) stopped at 1 / 2001 = 5.0e-4, above
  Holm's first step of a 7-row family at 3 looks (0.01 / 3 / 7 = 4.8e-4): the pool could not
  flag (test_pool_flags.py). Welch–Satterthwaite's df is an approximation of the sum's
  distribution; with equal df and se it is exactly the pooled df (two 7-df runners: 14).
- Otherwise (a runner's test is a permutation over runs: designs.Tested.df == 0), the null
  distribution of T is the product of the runners' own: a replicate of T is
  Σ_s w_s · null_s[i_s], each runner's index drawn independently (PRODUCT_DRAWS of them,
  from a fixed seed, so the function stays pure and the p reproducible). Its floor,
  1 / (1 + PRODUCT_DRAWS) = 1e-5, lies far below any Holm step of the gate, and the
  product of the runners' own smallest p (smallest_p) bounds it from below. Nothing is
  exchanged between runners, so a runner 30 % slower than another moves neither its L_s
  nor its null: the level holds.
- The weights are fixed before this comparison's data: each runner's calibrated noise for
  the series × metric (its calibration record's A/A MDE, taken as log(MDE): proportional to
  the sd of its test at the calibrated level), w_s ∝ 1 / log(MDE_s)², or equal weights when
  any runner lacks that figure. Never from the comparison itself: the spread of a runner's
  null grows with a real effect (the sign flips of a +30 % pair span ±30 %; a round-level
  t's standard error grows with an effect that varies between rounds), so weights from it
  made the runner that regressed more count less (×1.30 and ×1.02 pooled to about ×1.02).
  With weights fixed, T's null is exactly the weighted sum of the runners' own nulls, and
  each runner's test keeps its validity in the sum; the t case's variance Σ_s w_s² se_s² holds
  for any fixed weights, so it keeps them too (inverse-variance weights 1 / se_s² would be
  the comparison's own spread again). Two runners of equal noise get 1/2 each
  and the standard deviation of T falls by √2: the MDE of two replicas is about 0.71 of
  one's. A runner that cannot be tested (no null replicates, or all equal) gets none.
- The pool never averages a runner's own regression away: that rule is pooled.py's, above
  this test (a runner's own verdict against the pooled row).
- The interval of the permutation case is the stratified bootstrap: replicate r of the ratio
  is exp(Σ_s w_s · log(boot_s[r])), each runner's runs resampled within it. Those replicates
  are kept in the t case too (sums of the runners' t draws), but the gate reads Student's.
- One stratum is returned as it came, so a pool of one is the single runner's test.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from . import clustered
from .designs import Tested

CALIBRATED, EQUAL = "calibration", "equal"  # where a pool row's weights came from
# Draws of the product of the runners' permutation nulls (the df == 0 case): a p-value floor
# of 1 / (1 + PRODUCT_DRAWS) ~ 1e-5, far below Holm's first step of any family the gate
# judges (e.g. 0.01 / 3 looks / 7 gated rows = 4.8e-4). Drawn from a fixed seed.
PRODUCT_DRAWS = 100_000


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


def t_sum(
    observed: Sequence[float], se: Sequence[float], df: Sequence[float], w: Sequence[float]
) -> tuple[float, float, float]:
    """(T, its standard error, its Welch–Satterthwaite degrees of freedom) of T = Σ w_s · L_s,
    the L_s independent estimates with standard errors se_s on df_s degrees of freedom:
    se_T² = Σ w_s² se_s², df_T = se_T⁴ / Σ (w_s² se_s²)² / df_s. Strata of weight 0 are left
    out; one stratum of weight 1 is its own (L, se, df)."""
    used = [(o, e, d, x) for o, e, d, x in zip(observed, se, df, w, strict=True) if x > 0]
    estimate = float(sum(x * o for o, _, _, x in used))
    parts = [(x * e) ** 2 for _, e, _, x in used]
    variance = float(sum(parts))
    spread = sum(v * v / d for v, (_, _, d, _) in zip(parts, used, strict=True))
    dof = variance * variance / spread if spread > 0 else float(min(d for _, _, d, _ in used))
    return estimate, float(np.sqrt(variance)), float(dof)


def _round_level(t: Tested) -> bool:
    """A round-level t with a finite, non-zero standard error (designs.round_test)."""
    return t.df >= 1 and np.isfinite(t.se) and t.se > 0 and np.isfinite(t.observed)


def product_null(nulls: Sequence[np.ndarray], w: np.ndarray, draws: int = PRODUCT_DRAWS) -> np.ndarray:
    """`draws` replicates of Σ_s w_s · null_s[i_s], each weighted stratum's index drawn on its
    own (the product of the strata's nulls), from a fixed seed; empty when a weighted stratum
    has no finite replicate."""
    rng = np.random.default_rng(0)
    out = np.zeros(draws)
    for a, x in zip(nulls, w, strict=True):
        if x <= 0:
            continue
        finite = np.asarray(a, dtype=float)
        finite = finite[np.isfinite(finite)]
        if len(finite) == 0:
            return np.array([])
        out += x * finite[rng.integers(0, len(finite), draws)]
    return out


def combine(strata: Sequence[Tested], noise: Sequence[float | None] | None = None) -> Combined:
    """The stratified test of the runners' tests of one series × metric (module doc);
    `noise`: each runner's calibrated noise (log of its record's MDE), None where it has none.
    Every weighted stratum a round-level t: Student's test of T (t_sum); else the product of
    the strata's nulls (product_null)."""
    if not strata:
        raise ValueError("combine: no stratum to combine")
    if noise is not None and len(noise) != len(strata):
        raise ValueError(f"combine: {len(noise)} noise figures for {len(strata)} strata")
    if len(strata) == 1:
        return Combined(strata[0], (1.0,), fixed_weights(noise or [None])[1])
    w, basis = weights(strata, noise)
    used = [(t, x) for t, x in zip(strata, w, strict=True) if x > 0]
    with np.errstate(divide="ignore", invalid="ignore"):
        boots = _aligned([np.log(t.replicates) for t in strata], w)
    units = sum(t.n for t, _ in used)
    weights_ = tuple(float(x) for x in w)
    if all(_round_level(t) for t, _ in used):
        observed, se, df = t_sum(*zip(*((t.observed, t.se, t.df, x) for t, x in used), strict=True))
        p = clustered.t_p_value(observed, se, df)
        null = _aligned([t.null for t in strata], w)
        shown = _shown([t.shown for t, _ in used], [x for _, x in used])
        tested = Tested(p, 0.0, np.exp(boots), units, observed, null, se, df, shown)
        return Combined(tested, weights_, basis)
    observed = float(sum(x * t.observed for t, x in used))
    null = product_null([t.null for t in strata], w)
    floor = smallest_p(strata, w)
    if not np.isfinite(observed) or len(null) == 0:
        p = 1.0
    else:
        extreme = np.count_nonzero(np.abs(null) >= abs(observed) - 1e-12)
        p = float(max((1 + extreme) / (1 + len(null)), floor))
    return Combined(Tested(p, floor, np.exp(boots), units, observed, null), weights_, basis)


def _shown(shown: Sequence[tuple[float, float] | None], w: Sequence[float]) -> tuple[float, float] | None:
    """The strata's shown (base, head) geometric means, averaged as T weighs their ratios (so
    their ratio is exp(T)); None when a stratum has none."""
    if any(s is None for s in shown):
        return None
    base = weighted_geomean([s[0] for s in shown], w)
    head = weighted_geomean([s[1] for s in shown], w)
    return (base, head) if base is not None and head is not None else None


def weighted_geomean(values: Sequence[float | None], w: Sequence[float]) -> float | None:
    """The pool's shown value of a side: the runners' values, averaged as the test weighs
    their ratios (so head / base of the shown values is the pooled ratio)."""
    pairs = [(v, x) for v, x in zip(values, w, strict=True) if x > 0]
    if not pairs or any(v is None or not v > 0 for v, _ in pairs):
        return None
    if len(pairs) == 1:  # one runner: its own value, exactly
        return float(pairs[0][0])
    return float(np.exp(sum(x * np.log(v) for v, x in pairs) / sum(x for _, x in pairs)))
