"""The gate's statistics: pure functions over per-run HDR histograms and per-run numbers.

These are the *unpaired* tests (`hftbench compare` of two folders, a store baseline). `ab`
measures base and head side by side in time and tests pairs instead: paired.py, chosen per
comparison by designs.py.

A *side* (base or head) of a comparison is a list of repeats of one series
(scenario × client); each repeat contributes one HdrHistogram and a few scalars. The rules,
and why:

- Runs, not samples, are the unit of replication. Latencies inside one run are correlated
  (same process, same cache state, same neighbours), so a test on pooled samples would
  call every run-to-run wobble significant.
- The statistic is the quantile of the *pooled* histograms, not a summary of per-run
  quantiles. P99 of one 20,000-order run rests on its top 200 samples; pooling 12 runs puts
  2,400 behind the number, and it is the number the clients and the report print. A rank
  test on per-run P99s (Mann-Whitney, what this gate used before) throws that away and is a
  known weak spot of tail comparisons (openmessaging/benchmark#452): its smallest p-value
  is fixed by the number of runs, whatever the size of the effect.
- The test is a permutation test over whole runs: the runs of both sides are pooled and
  split at random into a "base" and a "head" of the original sizes; the p-value is the
  share of splits whose |log(P99 ratio)| is at least the observed one. Base and head are
  measured interleaved, so under "no change" the runs are exchangeable and the test's
  false-alarm rate is exactly its level, for any distribution, any quantile, and with an
  outlier run (a split puts it on either side as often as the data do). Many series are
  tested at once, so p-values are corrected with Holm's step-down method: it bounds the
  chance of *any* false alarm in one comparison (one false flag fails a pull request);
  Benjamini-Hochberg would bound only the false share and let false alarms through
  beside true ones.
- The interval of the ratio is a bootstrap that resamples whole runs on each side and
  merges the drawn runs' histograms (a run-level, i.e. hierarchical, bootstrap; drawing
  samples inside runs as well would count the within-run noise twice, Davison & Hinkley
  1997, §3.8). With 8 to 12 runs a side the plain percentile interval is too narrow, so it
  is the *expanded* percentile interval (Hesterberg 2015, "What teachers should know about
  the bootstrap"): the percentiles are taken at the level whose normal quantile is
  sqrt(n / (n - 1)) · t(n - 1), n the smaller side.
- Three answers (rules.classify): a regression needs significance *and* a point
  effect of at least the metric's threshold; "no change" is an equivalence claim: the whole
  interval lies inside (1 / threshold, threshold); everything else is inconclusive, and
  rules.rounds_to_settle says how many runs would decide it.
- Every verdict states its minimum detectable effect (rules.detectable_effect): the
  change the permutation test would flag with 80 % power at this comparison's noise and level.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.special import ndtr, stdtrit

from ..histograms import Grid, merged_quantile, quantile_rows


def mann_whitney_p(base: Sequence[float], head: Sequence[float]) -> float:
    """Two-sided Mann-Whitney U p-value; exact for small samples without ties (scipy's 'auto').

    Identical constant samples carry no evidence of a difference: p = 1.
    """
    a = np.asarray(base, dtype=float)
    b = np.asarray(head, dtype=float)
    if len(a) == 0 or len(b) == 0:
        return 1.0
    if np.all(a == a[0]) and np.all(b == a[0]):
        return 1.0
    from scipy.stats import mannwhitneyu  # not at the top: judge/__init__.py says why

    return float(mannwhitneyu(b, a, alternative="two-sided", method="auto").pvalue)


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm step-down adjusted p-values (monotone, capped at 1), in the input order."""
    p = np.asarray(pvalues, dtype=float)
    m = len(p)
    if m == 0:
        return []
    order = np.argsort(p, kind="stable")
    adjusted = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * p[order]))
    out = np.empty(m)
    out[order] = adjusted
    return out.tolist()


def _multiplicities(rng: np.random.Generator, runs: int, n_boot: int) -> np.ndarray:
    """(n_boot, runs) how often each run is drawn when resampling `runs` runs with replacement."""
    draws = rng.integers(0, runs, size=(n_boot, runs))
    mult = np.zeros((n_boot, runs), dtype=np.int64)
    np.add.at(mult, (np.arange(n_boot)[:, None], draws), 1)
    return mult


def _weighted_counts(weights: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """weights @ rows for integer weights of runs and integer bucket counts, through float64
    BLAS: numpy's integer matmul has none and took 9x as long (250 x 16 @ 16 x 3,000). Every
    product and partial sum is an integer below 2^53, so the float sums are exact and the
    counts the same; past that bound (never reached by a run's counts) the integer matmul."""
    if len(rows) == 0 or int(np.max(weights, initial=0)) * int(rows.sum()) >= 2**53:
        return weights @ rows
    return (weights.astype(np.float64) @ rows.astype(np.float64)).astype(np.int64)


def bootstrap_ratio_replicates(
    g: Grid, q: float, *, n_boot: int, rng: np.random.Generator, chunk: int = 250
) -> np.ndarray:
    """Replicates of merged-quantile(head) / merged-quantile(base): each draws whole runs with
    replacement on each side, merges the drawn runs' histograms and takes the ratio."""
    ratios = []
    for start in range(0, n_boot, chunk):
        n = min(chunk, n_boot - start)
        qb = quantile_rows(g.values_ns, _weighted_counts(_multiplicities(rng, len(g.base), n), g.base), q)
        qh = quantile_rows(g.values_ns, _weighted_counts(_multiplicities(rng, len(g.head), n), g.head), q)
        ratios.append(qh / qb)
    return np.concatenate(ratios)


def ratio_interval(replicates: np.ndarray, confidence: float, runs: int) -> tuple[float, float]:
    """The expanded percentile interval of bootstrap replicates (`runs`: the smaller side)."""
    return _interval(replicates, expanded_confidence(confidence, runs))


def log_sd(replicates: np.ndarray) -> float:
    """Standard deviation of log(ratio) over the finite, positive replicates: the noise."""
    finite = replicates[np.isfinite(replicates) & (replicates > 0)]
    return float(np.std(np.log(finite))) if len(finite) > 1 else float("nan")


def bootstrap_quantile(
    values_ns: np.ndarray,
    counts: np.ndarray,
    q: float,
    *,
    rng: np.random.Generator,
    n_boot: int = 1000,
    confidence: float = 0.95,
) -> tuple[float, float]:
    """Expanded percentile-bootstrap interval (ns) of one side's merged q-quantile, over runs."""
    replicates = quantile_rows(
        values_ns, _weighted_counts(_multiplicities(rng, len(counts), n_boot), counts), q
    )
    return _interval(replicates, expanded_confidence(confidence, len(counts)))


def bootstrap_mean_replicates(
    base: Sequence[float], head: Sequence[float], *, n_boot: int, rng: np.random.Generator
) -> np.ndarray:
    """Replicates of mean(head) / mean(base), resampling runs on each side."""
    a = np.asarray(base, dtype=float)
    b = np.asarray(head, dtype=float)
    ma = (_multiplicities(rng, len(a), n_boot) @ a) / len(a)
    mb = (_multiplicities(rng, len(b), n_boot) @ b) / len(b)
    with np.errstate(divide="ignore", invalid="ignore"):
        return mb / ma


def expanded_confidence(confidence: float, runs: int) -> float:
    """The percentile level of Hesterberg's expanded percentile interval for `runs` runs.

    z(level) = sqrt(n / (n - 1)) * t(n - 1, confidence): widens the plain percentile interval
    by the factors a small sample costs (the bootstrap's n - 1 vs n variance, and t vs z).
    """
    if runs < 2:
        return 1.0
    tail = (1.0 - confidence) / 2.0
    z = float(np.sqrt(runs / (runs - 1)) * stdtrit(runs - 1, 1.0 - tail))
    return float(2.0 * ndtr(z) - 1.0)


def _interval(replicates: np.ndarray, confidence: float) -> tuple[float, float]:
    finite = replicates[np.isfinite(replicates)]
    if len(finite) == 0:
        return (float("nan"), float("nan"))
    tail = (1.0 - confidence) / 2.0 * 100.0
    lo, hi = np.percentile(finite, [tail, 100.0 - tail])
    return (float(lo), float(hi))


@dataclass(frozen=True)
class Permutation:
    """A permutation test's answer: the p-value and the null distribution it came from."""

    p_value: float  # two-sided, (1 + #{|null| >= |observed|}) / (1 + splits)
    null_log_ratios: np.ndarray  # log(head / base) of each random split: the noise of this comparison
    smallest_p: float  # the least p-value this many runs can give (2 / C(n, k), two-sided)
    observed: float = math.nan  # the statistic the null is compared with: log(head / base)


def _splits(rng: np.random.Generator, runs: int, head: int, n_perm: int) -> np.ndarray:
    """(n_perm, runs) 0/1 rows: which of the pooled runs a random split calls "head"."""
    order = np.argsort(rng.random((n_perm, runs)), axis=1)
    mask = np.zeros((n_perm, runs), dtype=np.int64)
    np.put_along_axis(mask, order[:, :head], 1, axis=1)
    return mask


def _p_from_null(observed: float, null: np.ndarray, runs: int, head: int) -> Permutation:
    finite = null[np.isfinite(null)]
    if not np.isfinite(observed) or len(finite) == 0:
        return Permutation(1.0, finite, 1.0)
    # A hair of tolerance: splits equal to the observed one must count as "as extreme".
    extreme = np.count_nonzero(np.abs(finite) >= abs(observed) - 1e-12)
    smallest = min(1.0, 2.0 / math.comb(runs, head)) if runs > head > 0 else 1.0
    p = max((1 + extreme) / (1 + len(finite)), smallest)
    return Permutation(float(p), finite, smallest, observed)


def permutation_quantile_test(
    g: Grid, q: float, *, n_perm: int, rng: np.random.Generator, chunk: int = 250
) -> Permutation:
    """Permutation test over whole runs of log(merged-q(head) / merged-q(base)), two-sided."""
    rows = np.vstack([g.base, g.head])
    runs, head = len(rows), len(g.head)
    observed = float(
        np.log(merged_quantile(g.values_ns, g.head, q) / merged_quantile(g.values_ns, g.base, q))
    )
    null = []
    for start in range(0, n_perm, chunk):
        mask = _splits(rng, runs, head, min(chunk, n_perm - start))
        qh = quantile_rows(g.values_ns, _weighted_counts(mask, rows), q)
        qb = quantile_rows(g.values_ns, _weighted_counts(1 - mask, rows), q)
        with np.errstate(divide="ignore", invalid="ignore"):
            null.append(np.log(qh / qb))
    return _p_from_null(observed, np.concatenate(null), runs, head)


def permutation_mean_test(
    base: Sequence[float], head: Sequence[float], *, n_perm: int, rng: np.random.Generator
) -> Permutation:
    """Permutation test over runs of log(mean(head) / mean(base)) for per-run scalars."""
    values = np.asarray([*base, *head], dtype=float)
    runs, k = len(values), len(head)
    if len(base) == 0 or k == 0:
        return Permutation(1.0, np.array([]), 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        observed = float(np.log(np.mean(head) / np.mean(base)))
        mask = _splits(rng, runs, k, n_perm)
        null = np.log((mask @ values / k) / ((1 - mask) @ values / (runs - k)))
    return _p_from_null(observed, null, runs, k)
