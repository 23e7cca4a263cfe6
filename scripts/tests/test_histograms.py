"""histograms.mean_stddev is hdrh's get_mean_value() and get_stddev() without walking every
bucket: the report's mean and stddev columns must not move by a bit."""

from __future__ import annotations

import numpy as np
import pytest
from hdrh.histogram import HdrHistogram
from hftbench import histograms
from support.gate_synth import encode_ns


def _recorded(values) -> HdrHistogram:
    h = HdrHistogram(histograms.LOWEST_NS, histograms.HIGHEST_NS, histograms.SIGNIFICANT_DIGITS)
    for v in values:
        h.record_value(int(v))
    return h


@pytest.mark.parametrize("seed", range(3))
def test_mean_stddev_is_hdrhs_to_the_bit(seed):
    rng = np.random.default_rng(seed)
    ns = rng.lognormal(np.log(50_000), 1.2, 2000) + rng.choice([0, 5_000_000], 2000, p=[0.99, 0.01])
    for h in (_recorded(ns), histograms.decode(encode_ns(ns))):
        assert histograms.mean_stddev(h) == (h.get_mean_value(), h.get_stddev())


@pytest.mark.parametrize(
    "values", [[], [1], [7, 7, 7], [1023, 1024, 2047, 2048, 4095, 4096], [59_000_000_000, 3]]
)
def test_mean_stddev_at_the_edges(values):
    h = _recorded(values)
    assert histograms.mean_stddev(h) == (h.get_mean_value(), h.get_stddev())
