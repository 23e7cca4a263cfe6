"""The gate's statistics: pure functions over per-run HDR histograms and per-run numbers.

A *side* (base or head) of a comparison is a list of repeats of one series
(scenario × client); each repeat contributes one HdrHistogram and a few scalars. The rules:

- Runs, not samples, are the unit of replication. Latencies inside one run are correlated
  (same process, same cache state, same neighbours), so a test on pooled samples would
  call every run-to-run wobble significant. The test is Mann-Whitney U on the per-run
  quantiles, two-sided; the effect is the ratio of the quantiles of the merged histograms,
  with a percentile-bootstrap interval that resamples whole runs on each side.
- Many series are tested at once, so p-values are corrected with Holm's step-down method:
  it controls the family-wise error rate (the chance of *any* false alarm in a comparison),
  which is the error a pull-request gate must bound — one false flag fails a pull request.
  Benjamini-Hochberg controls the false discovery *proportion* instead, which lets false
  alarms through whenever there are true ones, and is no less strict for a single effect.
- `classify` turns (ratio, interval, corrected p) into a verdict: a regression needs both
  significance and a point effect at least the metric's threshold; "no change" needs the
  interval to exclude the threshold; everything else is "inconclusive".

Quantiles follow HdrHistogram's definition exactly (`get_value_at_percentile`: the highest
equivalent value of the bucket where the cumulative count first reaches
max(1, int(q * total + 0.5))), so the gate's numbers equal the clients' `latency_us`.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from hdrh.histogram import HdrHistogram
from scipy import stats as sps

# The clients' histogram layout (clients/README.md): 1 ns .. 60 s, 3 significant digits.
LOWEST_NS = 1
HIGHEST_NS = 60_000_000_000
SIGNIFICANT_DIGITS = 3

REGRESSION = "regression"
IMPROVEMENT = "improvement"
NO_CHANGE = "no_change"
INCONCLUSIVE = "inconclusive"
NOT_GATED = "not_gated"


@dataclass(frozen=True)
class Grid:
    """Per-run bucket counts of both sides on one shared value grid.

    Only buckets that hold a count in some run are kept (a few thousand at most), so the
    bootstrap's merged histograms are small dense matrices.
    """

    values_ns: np.ndarray  # (V,) highest equivalent value of each kept bucket, ascending
    base: np.ndarray  # (runs_base, V) counts
    head: np.ndarray  # (runs_head, V) counts


def decode(encoded: str) -> HdrHistogram:
    """Decode a result's `histogram.data` into the clients' standard layout."""
    hist = HdrHistogram.decode(encoded)
    layout = (hist.lowest_trackable_value, hist.highest_trackable_value, hist.significant_figures)
    if layout == (LOWEST_NS, HIGHEST_NS, SIGNIFICANT_DIGITS):
        return hist
    # Another layout (a foreign tool): re-bucket so every run shares one index space.
    standard = HdrHistogram(LOWEST_NS, HIGHEST_NS, SIGNIFICANT_DIGITS)
    standard.add(hist)
    return standard


@functools.lru_cache(maxsize=1024)
def _counts(encoded: str) -> np.ndarray:
    """The full counts array of one encoded histogram (cached: calibration reuses runs)."""
    h = decode(encoded)
    counts = np.ctypeslib.as_array(h.counts)[: h.counts_len].astype(np.int64)
    counts.setflags(write=False)
    return counts


@functools.lru_cache(maxsize=1)
def _bucket_values() -> np.ndarray:
    """Highest equivalent value (ns) of every bucket index of the standard layout."""
    h = HdrHistogram(LOWEST_NS, HIGHEST_NS, SIGNIFICANT_DIGITS)
    return np.array(
        [h.get_highest_equivalent_value(h.get_value_from_index(i)) for i in range(h.counts_len)],
        dtype=np.float64,
    )


def grid(base: Sequence[str], head: Sequence[str]) -> Grid:
    """Decode both sides' encoded histograms into per-run count rows on one grid."""
    if not base and not head:
        raise ValueError("grid: no histograms on either side")
    full = np.stack([_counts(e) for e in (*base, *head)])
    keep = np.flatnonzero(full.sum(axis=0))
    counts = full[:, keep]
    return Grid(values_ns=_bucket_values()[keep], base=counts[: len(base)], head=counts[len(base) :])


def quantile_rows(values_ns: np.ndarray, counts: np.ndarray, q: float) -> np.ndarray:
    """HdrHistogram's value at quantile q (0 < q <= 1) for each row of counts; NaN for empty rows."""
    counts = np.atleast_2d(counts)
    cum = np.cumsum(counts, axis=1)
    total = cum[:, -1] if cum.shape[1] else np.zeros(len(counts))
    # Same rounding as get_target_count_at_percentile (int() truncates a positive number).
    target = np.maximum(np.floor(q * total + 0.5), 1)
    index = np.argmax(cum >= target[:, None], axis=1) if cum.shape[1] else np.zeros(len(counts), int)
    out = values_ns[index] if len(values_ns) else np.full(len(counts), np.nan)
    return np.where(total > 0, out, np.nan)


def per_run_quantiles(values_ns: np.ndarray, counts: np.ndarray, q: float) -> np.ndarray:
    """The q-quantile of each run (row), in ns."""
    return quantile_rows(values_ns, counts, q)


def merged_quantile(values_ns: np.ndarray, counts: np.ndarray, q: float) -> float:
    """The q-quantile of all runs' histograms merged, in ns."""
    return float(quantile_rows(values_ns, counts.sum(axis=0), q)[0])


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
    return float(sps.mannwhitneyu(b, a, alternative="two-sided", method="auto").pvalue)


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


def bootstrap_quantile_ratio(
    g: Grid, q: float, *, n_boot: int, confidence: float, rng: np.random.Generator, chunk: int = 250
) -> tuple[float, float]:
    """Percentile-bootstrap interval of merged-quantile(head) / merged-quantile(base).

    Each replicate draws whole runs with replacement on each side, merges the drawn runs'
    histograms and takes the ratio of their q-quantiles.
    """
    ratios = []
    for start in range(0, n_boot, chunk):
        n = min(chunk, n_boot - start)
        qb = quantile_rows(g.values_ns, _multiplicities(rng, len(g.base), n) @ g.base, q)
        qh = quantile_rows(g.values_ns, _multiplicities(rng, len(g.head), n) @ g.head, q)
        ratios.append(qh / qb)
    return _interval(np.concatenate(ratios), confidence)


def bootstrap_mean_ratio(
    base: Sequence[float], head: Sequence[float], *, n_boot: int, confidence: float, rng: np.random.Generator
) -> tuple[float, float]:
    """Percentile-bootstrap interval of mean(head) / mean(base), resampling runs."""
    a = np.asarray(base, dtype=float)
    b = np.asarray(head, dtype=float)
    ma = (_multiplicities(rng, len(a), n_boot) @ a) / len(a)
    mb = (_multiplicities(rng, len(b), n_boot) @ b) / len(b)
    with np.errstate(divide="ignore", invalid="ignore"):
        return _interval(mb / ma, confidence)


def _interval(replicates: np.ndarray, confidence: float) -> tuple[float, float]:
    finite = replicates[np.isfinite(replicates)]
    if len(finite) == 0:
        return (float("nan"), float("nan"))
    tail = (1.0 - confidence) / 2.0 * 100.0
    lo, hi = np.percentile(finite, [tail, 100.0 - tail])
    return (float(lo), float(hi))


def worse_factor(ratio: float, lower_is_better: bool) -> float:
    """head/base turned into 'how many times worse' (> 1 is worse) for either direction."""
    return ratio if lower_is_better else (1.0 / ratio if ratio else float("inf"))


def classify(
    ratio: float,
    interval: tuple[float, float],
    p_adjusted: float,
    *,
    threshold: float,
    alpha: float,
    lower_is_better: bool = True,
) -> str:
    """Verdict for one series × metric.

    threshold: the minimal effect that matters, as a "worse" factor >= 1 (p99: 1.10 means
    head 10% slower; throughput: 1.10 means head 10% less throughput).
    """
    if not (np.isfinite(ratio) and all(np.isfinite(interval))):
        return INCONCLUSIVE
    w = worse_factor(ratio, lower_is_better)
    w_lo, w_hi = sorted(worse_factor(x, lower_is_better) for x in interval)
    significant = p_adjusted < alpha
    if significant and w >= threshold:
        return REGRESSION
    if significant and w <= 1.0 / threshold:
        return IMPROVEMENT
    if w_hi < threshold and w_lo > 1.0 / threshold:
        return NO_CHANGE
    return INCONCLUSIVE


@dataclass(frozen=True)
class RegressionCheck:
    """One gated series × metric after the test (pytest-benchmark style: `fails()` says why)."""

    series: str  # "large/rust"
    metric: str  # "p99_us"
    ratio: float  # head / base
    interval: tuple[float, float]
    p_adjusted: float
    threshold: float
    verdict: str

    def fails(self) -> str | None:
        """The message when this check is a regression, else None."""
        if self.verdict != REGRESSION:
            return None
        lo, hi = self.interval
        return (
            f"{self.series} {self.metric}: head/base = {self.ratio:.3f} "
            f"(CI {lo:.3f}..{hi:.3f}, adjusted p = {self.p_adjusted:.2g}) "
            f"beyond the threshold {self.threshold:.2f}"
        )
