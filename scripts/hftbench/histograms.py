"""The clients' HDR histograms as the gate reads them: decoded into one standard layout,
per-run bucket counts on one shared value grid, and quantiles of rows and of merged runs.

Quantiles follow HdrHistogram's definition exactly (`get_value_at_percentile`: the highest
equivalent value of the bucket where the cumulative count first reaches
max(1, int(q * total + 0.5))), so the gate's numbers equal the clients' `latency_us`.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from hdrh.histogram import HdrHistogram

# The clients' histogram layout (clients/README.md): 1 ns .. 60 s, 3 significant digits.
LOWEST_NS = 1
HIGHEST_NS = 60_000_000_000
SIGNIFICANT_DIGITS = 3


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


def mean_stddev(hist: HdrHistogram) -> tuple[float, float]:
    """hdrh's get_mean_value() and get_stddev(), bit for bit (the same sums in the same order),
    over the buckets that hold a count. hdrh walks all 27,000-odd buckets of the layout with a
    Python iterator, three times for the pair: nine tenths of `hftbench report`'s 17.8 s on
    make bench's 31 cells (2026-11-29)."""
    total_count = hist.total_count
    if not total_count:
        return 0.0, 0.0
    counts = np.ctypeslib.as_array(hist.counts)[: hist.counts_len]
    held = np.flatnonzero(counts)
    weights = counts[held].tolist()
    layout = (hist.lowest_trackable_value, hist.highest_trackable_value, hist.significant_figures)
    middles = _bucket_middles(layout)[held].tolist()
    mean = float(sum(c * m for c, m in zip(weights, middles, strict=True))) / total_count
    squares = 0.0
    for c, m in zip(weights, middles, strict=True):
        dev = (m * 1.0) - mean
        squares += (dev * dev) * c
    return mean, math.sqrt(squares / total_count)


@functools.lru_cache(maxsize=4)
def _bucket_middles(layout: tuple[int, int, int]) -> np.ndarray:
    """hdrh's median equivalent value (int) of every bucket index of a layout, as its iterator
    reaches the bucket (from its highest equivalent value)."""
    h = HdrHistogram(*layout)
    return np.array(
        [
            h._hdr_median_equiv_value(h.get_highest_equivalent_value(h.get_value_from_index(i)))
            for i in range(h.counts_len)
        ],
        dtype=np.int64,
    )


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


def merged_quantile(values_ns: np.ndarray, counts: np.ndarray, q: float) -> float:
    """The q-quantile of all runs' histograms merged, in ns."""
    return float(quantile_rows(values_ns, counts.sum(axis=0), q)[0])
