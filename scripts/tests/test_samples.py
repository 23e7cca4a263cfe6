"""The percentile-sample rules (display: 10 beyond; gate: 100 beyond)."""

from __future__ import annotations

import pytest
from hftbench import samples


@pytest.mark.parametrize(
    ("pct", "display", "gate"),
    [
        (50, 20, 200),
        (90, 100, 1000),
        (95, 200, 2000),
        (99, 1000, 10000),
        (99.9, 10000, 100000),
        (99.99, 100000, 1000000),
    ],
)
def test_min_samples_per_rule(pct, display, gate):
    assert samples.min_samples(pct) == display
    assert samples.min_samples(pct, samples.GATE_MIN_BEYOND) == gate


def test_gate_rule_is_the_architecture_threshold():
    # docs/architecture.md: gate P99 only with >= 10,000 samples, P99.9 with >= 100,000.
    assert not samples.supports(9_999, 99, samples.GATE_MIN_BEYOND)
    assert samples.supports(10_000, 99, samples.GATE_MIN_BEYOND)
    assert not samples.supports(99_999, 99.9, samples.GATE_MIN_BEYOND)
    assert samples.supports(100_000, 99.9, samples.GATE_MIN_BEYOND)


def test_shortfall():
    assert samples.shortfall(1000, "p99") is None
    assert samples.shortfall(100, "p99") == "needs ≥ 1,000 samples, has 100"


@pytest.mark.parametrize("bad", [0, 100, -1, 150])
def test_percentile_out_of_range_is_an_error(bad):
    with pytest.raises(ValueError):
        samples.min_samples(bad)
