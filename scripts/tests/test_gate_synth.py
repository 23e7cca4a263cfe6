"""gate_synth.encode_ns fills hdrh's counts with numpy: it must give the bytes hdrh's own
record_value gives, sample by sample, or every synthetic gate test reads other histograms."""

from __future__ import annotations

import numpy as np
import pytest
from hdrh.histogram import HdrHistogram
from support.gate_synth import encode_ns


def encode_by_record_value(samples_ns: np.ndarray) -> str:
    hist = HdrHistogram(1, 60_000_000_000, 3)
    for v in np.maximum(1, np.round(samples_ns)).astype(np.int64).tolist():
        hist.record_value(v)
    return hist.encode().decode()


EDGES = np.array([0, 1, 2, 1023, 1024, 2047, 2048, 2049, 4095, 4096, 4097, 1 << 20, 59_999_999_999])


@pytest.mark.parametrize("seed", range(12))
def test_encode_ns_gives_record_values_bytes(seed):
    rng = np.random.default_rng(seed)
    samples = np.concatenate([rng.lognormal(np.log(100_000), 1.5, 3000), EDGES[rng.random(EDGES.size) < 0.5]])
    assert encode_ns(samples) == encode_by_record_value(samples)


def test_encode_ns_drops_what_record_value_refuses():
    samples = np.array([5_000.0, 70_000_000_000.0, 12_345.0])
    assert encode_ns(samples) == encode_by_record_value(samples)
    decoded = HdrHistogram.decode(encode_ns(samples))
    assert decoded.get_total_count() == 2 and decoded.get_max_value() < 13_000


def test_encode_ns_of_nothing_is_an_empty_histogram():
    assert HdrHistogram.decode(encode_ns(np.array([]))).get_total_count() == 0
