"""The soak's drift statistics as pure functions: a planted drift is flagged, a flat soak is
not, the tenths are cut by time, and the RSS slope is recovered from a synthetic series."""

from __future__ import annotations

import numpy as np
import pytest
from hdrh.histogram import HdrHistogram
from hftbench import histograms
from hftbench.answers import INCONCLUSIVE, NO_CHANGE, NOT_GATED, REGRESSION
from hftbench.judge import drift
from hftbench.judge.gates import load_gates
from support.gate_synth import encode_ns, latency_run

P99 = load_gates().metric("p99_us")
INTERVAL_S = 6.0
ORDERS_PER_INTERVAL = 12_000  # 2,000/s x 6 s: the soak scenario's numbers


def soak(rng, intervals=100, *, tail_from=None, tail_scale=1.0) -> list[drift.Interval]:
    """A synthetic soak: `intervals` intervals of 6 s; from interval `tail_from` on, the
    tail (above the median) is `tail_scale` times longer."""
    out = []
    for k in range(intervals):
        scale = tail_scale if tail_from is not None and k >= tail_from else 1.0
        ns = latency_run(rng, ORDERS_PER_INTERVAL, median_us=40.0, tail_scale=scale, run_noise=0.03)
        out.append(drift.Interval(100.25 + k * INTERVAL_S, INTERVAL_S, encode_ns(ns), len(ns)))
    return out


def drift_of(intervals_per_run):
    res, noise = drift.drift_result(
        "soak",
        "hft",
        intervals_per_run,
        P99,
        gated=True,
        n_perm=2000,
        n_boot=1000,
        confidence=0.95,
        rng=np.random.default_rng(3),
    )
    drift.assign_verdicts([(res, noise)], P99)
    return res


def test_a_drift_in_the_last_tenth_is_flagged():
    rng = np.random.default_rng(11)
    res = drift_of([soak(rng, tail_from=50, tail_scale=1.6)])
    assert (res.first_intervals, res.last_intervals) == (10, 10)
    assert res.verdict == REGRESSION, res
    assert res.ratio > P99.threshold and res.p_adjusted < P99.alpha
    assert res.ci[0] > 1.0 and res.last_value > res.first_value


def test_a_flat_soak_is_not_flagged_and_says_no_change():
    rng = np.random.default_rng(12)
    res = drift_of([soak(rng)])
    assert res.verdict == NO_CHANGE, res
    assert 1 / P99.threshold < res.ci[0] <= res.ci[1] < P99.threshold
    assert res.mde is not None and 1.0 < res.mde < P99.threshold


def test_flat_soaks_raise_no_false_alarm():
    rng = np.random.default_rng(13)
    verdicts = [drift_of([soak(rng, intervals=60)]).verdict for _ in range(8)]
    assert REGRESSION not in verdicts, verdicts


def test_too_few_intervals_a_tenth_is_inconclusive_not_a_verdict():
    rng = np.random.default_rng(14)
    res = drift_of([soak(rng, intervals=50, tail_from=25, tail_scale=1.6)])  # 5 a tenth < min_repeats 8
    assert res.last_intervals == 5 < P99.min_repeats
    assert res.verdict == INCONCLUSIVE and "min_repeats" in res.reason


def test_intervals_too_small_for_p99_are_not_gated():
    small = [drift.Interval(k * 1.0, 1.0, encode_ns(np.full(500, 40_000.0)), 500) for k in range(100)]
    res = drift_of([small])
    assert res.verdict == NOT_GATED and not res.gated and "min_samples" in res.reason


def test_tenths_are_cut_by_time_and_the_partial_last_interval_is_left_out():
    iv = [drift.Interval(10.0 + k, 1.0, "", 1) for k in range(40)]
    iv.append(drift.Interval(50.0, 0.2, "", 1))  # the drain after --duration
    first, last = drift.tenths(iv)
    assert [i.start_s for i in first] == [10.0, 11.0, 12.0, 13.0]
    assert [i.start_s for i in last] == [46.0, 47.0, 48.0, 49.0]


def test_interval_rows_state_percentiles_only_with_enough_samples():
    rows = drift.interval_rows(
        [
            drift.Interval(5.0, 6.0, encode_ns(np.full(2000, 30_000.0)), 2000),
            drift.Interval(11.0, 6.0, encode_ns(np.full(50, 30_000.0)), 50),
        ]
    )
    assert rows[0].start_s == 0.0 and rows[1].start_s == 6.0
    assert rows[0].p99_us == pytest.approx(30.0, rel=1e-3) and rows[0].p999_us is None  # needs 10,000
    assert rows[1].p50_us == pytest.approx(30.0, rel=1e-3) and rows[1].p99_us is None


def test_read_intervals_keeps_the_untagged_lines_in_order(tmp_path):
    # The format client-hft writes (hdrh's own writer cannot write a StartTime: it passes
    # milliseconds to datetime.fromtimestamp).
    lines = [
        "#[StartTime: 1795000000.0 (seconds since epoch), Mon Nov 16 2026]",
        '"StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"',
        "#[BaseTime: 1795000000.000 (seconds since epoch)]",
    ]
    for k, value in enumerate((10_000, 20_000, 30_000)):
        h = HdrHistogram(1, 60_000_000_000, 3)
        h.record_value(value, 100)
        enc = h.encode().decode()
        lines.append(f"{k + 0.5:.3f},1.000,{value / 1e6:.3f},{enc}")
        lines.append(f"Tag=uncorrected,{k + 0.5:.3f},1.000,{value / 1e6:.3f},{enc}")
    path = tmp_path / "soak.hlog"
    path.write_text("\n".join(lines) + "\n")
    got = drift.read_intervals(path)
    base = 1_795_000_000
    assert [(i.start_s - base, i.length_s, i.count) for i in got] == [
        (0.5, 1.0, 100),
        (1.5, 1.0, 100),
        (2.5, 1.0, 100),
    ]
    assert [histograms.decode(i.histogram).get_max_value() // 1000 for i in got] == [10, 20, 30]
    assert drift.is_soak(got) and drift.untagged_lines(path) == 3


def test_rss_growth_is_recovered_from_a_synthetic_series():
    rng = np.random.default_rng(5)
    t = np.arange(0, 600, 1.0)  # 10 minutes, one sample a second
    rss_kib = (200 + 36.0 * t / 3600) * 1024 + rng.normal(0, 200, size=t.size)  # 36 MiB/h + noise
    g = drift.rss_growth_mib_per_h(t, rss_kib)
    assert g.low < 36.0 < g.high and g.per_hour == pytest.approx(36.0, rel=0.1)
    flat = drift.rss_growth_mib_per_h(t, np.full(t.size, 200 * 1024.0) + rng.normal(0, 200, size=t.size))
    assert flat.low < 0 < flat.high
    assert drift.rss_growth_mib_per_h([0.0, 1.0], [1.0, 2.0]) is None
