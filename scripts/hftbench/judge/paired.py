"""The gate's statistics when base and head were measured side by side: pure functions over
paired blocks.

Why pairs. On a shared host the speed changes every few seconds (a "regime": here P50 is
21 µs in some seconds and 25-33 µs in others), and it changes for every process at once.
Measured in separate rounds, that regime lands on base in one round and on head in the next,
and the gate reads it as noise of the comparison. Measured as pairs, it hits both members of
a pair alike and cancels in their ratio. Two designs give pairs (rounds.py, duet.py):

- **duet** (the default of `ab`): both builds' servers run at once, pinned alike, and one
  client sends each order to both, in an order drawn at random per pair (client-hft
  `--duet-url`). Its `.hlog` is cut into short intervals (blocks) that start and end at the
  same instant on both sides: block i of base and block i of head are one pair.
- **paired rounds** (where two servers cannot run at once): rounds run B H H B …, and the
  base and head rounds of each round pair are one pair.

The rules, and why:

- The statistic is the one the unpaired gate uses: log(quantile of head's pooled blocks /
  quantile of base's pooled blocks). Pooling is symmetric in a pair, so a regime that lasts
  a block enters both quantiles in the same proportion.
- The test is a *within-pair* randomization test: each random replicate swaps the two
  members of every pair with probability 1/2 (a sign flip of the pair) and recomputes the
  statistic; p is the share of replicates at least as extreme. Under "no change" the two
  members of a pair are exchangeable, because the design makes them so: the same CPUs, the
  same flags, the same orders, the order inside each pair drawn at random by the client, and
  which build takes which server slot drawn at random per round (duet.py). So the level
  holds for any distribution and any regime pattern, however strong: regimes are constant
  within a pair and cannot move the statistic's null distribution. The test flips only
  within pairs and never mixes blocks of different moments, which is the pairing's gain.
- What the exchangeability rests on, and what it costs. The two servers of a duet share the
  CPU's caches and the kernel's queues; that sharing is symmetric in expectation (the order
  in a pair is random) but it is not absent, so a duet's absolute latency is not a solo
  server's: `ab` records both servers' P50 and calibrate reports the difference (the price
  of duet). A persistent difference between two *processes* of one build (heap layout,
  ASLR) is not randomized within a round; rounds start fresh servers and swap their slots,
  and calibrate measures the A/A false-alarm rate that remains (gates.yaml's header).
- The interval is a bootstrap over pairs: each replicate draws pairs with replacement and
  keeps both members of a drawn pair together, then merges and takes the ratio. Blocks of
  one round are serially correlated through the regime, but the regime cancels within a
  pair, so the differences that remain are close to independent; the interval is the same
  expanded percentile interval as stats.ratio_interval, with the number of pairs as n.
- The smallest p of B pairs is 2 / 2^B (two-sided); with blocks of 0.1 s that floor is far
  below any level the gate asks for after a few seconds.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from ..histograms import Grid, quantile_rows
from .stats import Permutation, _multiplicities


def check_pairs(g: Grid) -> int:
    """The number of pairs; ValueError when the two sides do not have one row per pair."""
    if g.base.shape != g.head.shape:
        raise ValueError(f"paired grid: {len(g.base)} base rows vs {len(g.head)} head rows; pairs need both")
    return len(g.base)


def _flips(rng: np.random.Generator, pairs: int, n: int) -> np.ndarray:
    """(n, pairs) 0/1 rows: 1 where a replicate swaps the pair's members."""
    return rng.integers(0, 2, size=(n, pairs), dtype=np.int64)


def log_ratio(g: Grid, q: float) -> float:
    """log(q of head's pooled rows / q of base's pooled rows): the paired statistic."""
    qh = quantile_rows(g.values_ns, g.head.sum(axis=0), q)[0]
    qb = quantile_rows(g.values_ns, g.base.sum(axis=0), q)[0]
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(np.log(qh / qb))


class _Window:
    """The buckets where a replicate's q-quantile is expected, with one column for all below
    and one for all above: the replicates' matrix products shrink from every bucket
    (thousands) to this window, in floating point (BLAS; counts are exact below 2^53).

    A replicate side is a mix of about half the pairs' rows, so its quantile's rank sits near
    the q of the pooled rows: within a few standard deviations of the rows' own quantile
    ranks over sqrt(pairs) (SPREAD of them), around base's, head's and both sides' pooled
    quantile. A mixture's quantile also lies between its parts' quantiles, which bounds the
    window when there are few pairs. A replicate whose quantile still lands outside is
    computed again on every bucket, so the window changes the time, never the result
    (test_paired checks the replicates against a computation on every bucket).
    Measured on 8 duet rounds of the 16-core machine: the rows' bounds alone kept 2,697 of
    3,583 buckets for latency-1c's P99 and 8,029 of 9,656 for load's P50.
    """

    MARGIN = 3
    SPREAD = 6.0

    def __init__(self, g: Grid, q: float) -> None:
        self.g, self.q = g, q
        rows = np.vstack([g.base, g.head])
        rows = rows[rows.sum(axis=1) > 0]
        idx = np.searchsorted(g.values_ns, quantile_rows(g.values_ns, rows, q))
        lo, hi = int(idx.min()), int(idx.max())
        both = rows.sum(axis=0)
        if len(rows) > 1 and both.sum() > 0:
            cdf = np.cumsum(both) / both.sum()
            spread = self.SPREAD * float(np.std(cdf[idx])) / math.sqrt(max(len(g.base), 1))
            pooled = np.vstack([g.base.sum(axis=0), g.head.sum(axis=0), both])
            pooled = pooled[pooled.sum(axis=1) > 0]
            near_lo = quantile_rows(g.values_ns, pooled, max(q - spread, 1e-9))
            near_hi = quantile_rows(g.values_ns, pooled, min(q + spread, 1.0))
            lo = max(lo, int(np.searchsorted(g.values_ns, near_lo).min()))
            hi = min(hi, int(np.searchsorted(g.values_ns, near_hi).max()))
        last = len(g.values_ns) - 1
        self.lo = max(lo - self.MARGIN, 0)
        self.hi = min(max(hi, lo) + self.MARGIN, last)
        self.values = np.concatenate([[np.nan], g.values_ns[self.lo : self.hi + 1], [np.nan]])
        self.base, self.head = self.cut(g.base), self.cut(g.head)

    def cut(self, m: np.ndarray) -> np.ndarray:
        lo, hi = self.lo, self.hi
        parts = [m[:, :lo].sum(axis=1), m[:, lo : hi + 1].T, m[:, hi + 1 :].sum(axis=1)]
        return np.vstack(parts).T.astype(np.float64)

    def quantiles(self, sums: np.ndarray, full: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
        """q of each row of window sums; a row whose quantile falls outside the window is
        computed again from full(mask), the same replicates' sums on every bucket."""
        out = quantile_rows(self.values, sums, self.q)
        outside = ~np.isfinite(out)
        if outside.any():
            out[outside] = quantile_rows(self.g.values_ns, full(outside), self.q)
        return out


def sign_flip_test(
    g: Grid, q: float, *, n_perm: int, rng: np.random.Generator, chunk: int = 500
) -> Permutation:
    """Within-pair randomization test of log(merged-q(head) / merged-q(base)), two-sided.

    A flip moves its pair's difference d = base - head from one side to the other:
    head' = Σhead + F·d and base' = Σbase - F·d, one matrix product for both sides."""
    pairs = check_pairs(g)
    observed = log_ratio(g, q)
    w = _Window(g, q)
    d_w, d = w.base - w.head, g.base - g.head
    sum_h, sum_b = w.head.sum(axis=0), w.base.sum(axis=0)
    null = []
    for start in range(0, n_perm, chunk):
        f = _flips(rng, pairs, min(chunk, n_perm - start))
        x = f.astype(np.float64) @ d_w
        qh = w.quantiles(sum_h + x, lambda m, f=f: g.head.sum(axis=0) + f[m] @ d)
        qb = w.quantiles(sum_b - x, lambda m, f=f: g.base.sum(axis=0) - f[m] @ d)
        with np.errstate(divide="ignore", invalid="ignore"):
            null.append(np.log(qh / qb))
    return _p_value(observed, np.concatenate(null) if null else np.array([]), pairs)


def bootstrap_replicates(
    g: Grid, q: float, *, n_boot: int, rng: np.random.Generator, chunk: int = 500
) -> np.ndarray:
    """Replicates of merged-q(head) / merged-q(base), drawing whole pairs with replacement."""
    pairs = check_pairs(g)
    w = _Window(g, q)
    out = []
    for start in range(0, n_boot, chunk):
        m = _multiplicities(rng, pairs, min(chunk, n_boot - start))
        mf = m.astype(np.float64)
        qh = w.quantiles(mf @ w.head, lambda k, m=m: m[k] @ g.head)
        qb = w.quantiles(mf @ w.base, lambda k, m=m: m[k] @ g.base)
        with np.errstate(divide="ignore", invalid="ignore"):
            out.append(qh / qb)
    return np.concatenate(out) if out else np.array([])


def mean_sign_flip_test(
    base: np.ndarray, head: np.ndarray, *, n_perm: int, rng: np.random.Generator
) -> Permutation:
    """Within-pair randomization test of log(mean(head) / mean(base)) for per-pair scalars."""
    b, h = np.asarray(base, dtype=float), np.asarray(head, dtype=float)
    if b.shape != h.shape or len(b) == 0:
        return Permutation(1.0, np.array([]), 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        observed = float(np.log(h.mean() / b.mean()))
        f = _flips(rng, len(b), n_perm)
        null = np.log(((1 - f) @ h + f @ b) / ((1 - f) @ b + f @ h))
    return _p_value(observed, null, len(b))


def mean_bootstrap_replicates(
    base: np.ndarray, head: np.ndarray, *, n_boot: int, rng: np.random.Generator
) -> np.ndarray:
    """Replicates of mean(head) / mean(base), drawing whole pairs with replacement."""
    b, h = np.asarray(base, dtype=float), np.asarray(head, dtype=float)
    m = _multiplicities(rng, len(b), n_boot)
    with np.errstate(divide="ignore", invalid="ignore"):
        return (m @ h) / (m @ b)


def smallest_p(pairs: int) -> float:
    """The least two-sided p a sign-flip test over `pairs` pairs can give."""
    return min(1.0, 2.0 / math.pow(2.0, pairs)) if pairs < 1024 else 0.0


def _p_value(observed: float, null: np.ndarray, pairs: int) -> Permutation:
    """(1 + #{|null| >= |observed|}) / (1 + replicates), never below the design's floor."""
    finite = null[np.isfinite(null)]
    if not np.isfinite(observed) or len(finite) == 0:
        return Permutation(1.0, finite, 1.0)
    # A hair of tolerance: replicates equal to the observed one count as "as extreme".
    extreme = np.count_nonzero(np.abs(finite) >= abs(observed) - 1e-12)
    floor = smallest_p(pairs)
    return Permutation(float(max((1 + extreme) / (1 + len(finite)), floor)), finite, floor, observed)
