"""Change points in a series of runs: E-divisive means with a permutation test.

The method of Matteson & James (2014), as Hunter / Apache Otava apply it to benchmark
histories: the energy statistic

    Q(tau) = tau (n - tau) / n * ( 2/(tau (n-tau)) sum |x_i - y_j|
                                   - 1/C(tau, 2) sum_{i<k} |x_i - x_k|
                                   - 1/C(n-tau, 2) sum_{j<l} |y_j - y_l| )

is maximised over the split tau of a segment (x = before, y = after); the split is kept
when a permutation test says so (p = (1 + #{permuted max >= observed}) / (1 + permutations))
and the search recurses (binary segmentation) into the segment with the largest statistic.

Why by hand, measured against apache-otava 0.8.0 (Hunter, the method's reference
implementation) on 2026-11-24:
- It cannot be installed beside our pins: on Python < 3.14 it requires numpy==2.2.0.* and
  scipy<1.17, so `pip install numpy==2.4.6 scipy==1.17.1 apache-otava==0.8.0` ends in
  ResolutionImpossible. Taking its pins would downgrade the whole orchestrator and add 36
  packages, itself included (61 MB: google-cloud-bigquery, grpcio, protobuf, cryptography, pg8000, slack-sdk)
  that its change point code never imports. Installed with --no-deps it runs, and
  `pip check` fails.
- It finds nothing more on our series: its E-divisive with permutation test finds the same
  change points as this module on test_history's change point store (p99 and p999 at run
  14), two variants of it (a x1.3 tail at run 10; a flat store: none), and synthetic steps,
  flat noise and two steps. On 5-10 point series each finds one step the other misses
  (n=8: this module; n=10: otava, p=1/101). Otava's default (windowed split, t-test merge)
  flags 2 of 5 flat 60-point series at alpha 0.01, this module none.
MongoDB's signal-processing-algorithms pins an older numpy too; ruptures lacks the test.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class ChangePoint:
    index: int  # first element of the new regime
    p_value: float
    before: float  # mean of the regime that ends here
    after: float  # mean of the regime that starts here

    @property
    def change_pct(self) -> float:
        return 100.0 * (self.after / self.before - 1.0) if self.before else float("inf")


def _block(prefix: np.ndarray, r0: int, r1: int, c0: int, c1: int) -> float:
    """Sum of D[r0:r1, c0:c1] from the 2-D prefix sums (prefix has a zero first row/column)."""
    return prefix[r1, c1] - prefix[r0, c1] - prefix[r1, c0] + prefix[r0, c0]


def split_statistics(x: np.ndarray, min_size: int) -> np.ndarray:
    """Q(tau) for every split tau of x (NaN where a side would hold fewer than min_size points)."""
    n = len(x)
    q = np.full(n + 1, np.nan)
    if n < 2 * min_size:
        return q
    d = np.abs(x[:, None] - x[None, :])
    prefix = np.zeros((n + 1, n + 1))
    prefix[1:, 1:] = d.cumsum(axis=0).cumsum(axis=1)
    for tau in range(min_size, n - min_size + 1):
        m = n - tau
        cross = _block(prefix, 0, tau, tau, n)
        within_x = _block(prefix, 0, tau, 0, tau)  # both triangles: 2 * sum over pairs
        within_y = _block(prefix, tau, n, tau, n)
        energy = 2.0 * cross / (tau * m) - within_x / (tau * (tau - 1)) - within_y / (m * (m - 1))
        q[tau] = tau * m / n * energy
    return q


def best_split(x: np.ndarray, min_size: int) -> tuple[int, float] | None:
    q = split_statistics(x, min_size)
    if np.all(np.isnan(q)):
        return None
    tau = int(np.nanargmax(q))
    return tau, float(q[tau])


def permutation_p(x: np.ndarray, observed: float, *, min_size: int, permutations: int, rng) -> float:
    """How often a shuffled segment splits at least as well: the significance of `observed`."""
    hits = 0
    for _ in range(permutations):
        found = best_split(rng.permutation(x), min_size)
        hits += found is not None and found[1] >= observed
    return (1 + hits) / (1 + permutations)


def e_divisive(
    series,
    *,
    alpha: float = 0.01,
    permutations: int = 199,
    min_size: int = 3,
    seed: int = 0,
) -> list[ChangePoint]:
    """Significant change points of `series` (NaNs dropped by the caller), in index order."""
    x = np.asarray(series, dtype=float)
    rng = np.random.default_rng(seed)
    cuts: list[tuple[int, float]] = []  # (index, p)
    bounds = [0, len(x)]
    while True:
        candidates = []
        for lo, hi in zip(bounds, bounds[1:], strict=False):
            found = best_split(x[lo:hi], min_size)
            if found is not None:
                candidates.append((found[1], lo + found[0], lo, hi))
        if not candidates:
            break
        stat, cut, lo, hi = max(candidates)
        p = permutation_p(x[lo:hi], stat, min_size=min_size, permutations=permutations, rng=rng)
        if p > alpha:
            break
        cuts.append((cut, p))
        bounds = sorted({*bounds, cut})
    cuts.sort()
    edges = [0, *(c for c, _ in cuts), len(x)]
    return [
        ChangePoint(cut, p, float(np.mean(x[edges[i] : cut])), float(np.mean(x[cut : edges[i + 2]])))
        for i, (cut, p) in enumerate(cuts)
    ]
