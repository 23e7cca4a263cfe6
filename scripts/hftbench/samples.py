"""Which percentiles a sample count supports (pure).

A percentile q of n samples is estimated from the n·(1 − q) samples beyond it: P99 of 100
orders is a single sample. Two rules, one shape ("at least k samples beyond the percentile"):

- DISPLAY (k = 10), for the report: P50 needs 20 samples, P90 100, P99 1,000,
  P99.9 10,000, P99.99 100,000. Below that the report says "n/a (needs ≥ N samples)".
- GATE (k = 100), for regression verdicts (docs/architecture.md, Measuring honestly): P99 needs
  10,000 samples and P99.9 100,000, exactly the architecture's thresholds.

min, mean, stddev and max need only one sample (and the report shows them as measured).
"""

from __future__ import annotations

import math

from . import metrics

DISPLAY_MIN_BEYOND = 10
GATE_MIN_BEYOND = 100


def min_samples(percentile: float, min_beyond: int = DISPLAY_MIN_BEYOND) -> int:
    """The smallest sample count with at least `min_beyond` samples beyond `percentile`."""
    if not 0 < percentile < 100:
        raise ValueError(f"percentile must be in (0, 100), got {percentile}")
    # Rounded first so that 10 / 0.001 is 10,000 and not 10,000.000000000002.
    return math.ceil(round(min_beyond * 100.0 / (100.0 - percentile), 6))


def supports(samples: int, percentile: float, min_beyond: int = DISPLAY_MIN_BEYOND) -> bool:
    """True when `samples` are enough to state `percentile` under the rule `min_beyond`."""
    return samples >= min_samples(percentile, min_beyond)


def shortfall(samples: int, key: str, min_beyond: int = DISPLAY_MIN_BEYOND) -> str | None:
    """None when the percentile `key` is supported, else the reason in words."""
    need = min_samples(metrics.get(key).percent, min_beyond)
    if samples >= need:
        return None
    return f"needs ≥ {need:,} samples, has {samples:,}"
