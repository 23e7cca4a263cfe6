"""The stats stage: exact summaries of known histograms, and the merge of worker tallies."""

import pytest
from hdrh.histogram import HdrHistogram
from hft_client.stats import ERROR_KINDS, Tally, latency_us, merge, merge_tallies, new_histogram


def filled(values_ns) -> HdrHistogram:
    h = new_histogram()
    for v in values_ns:
        h.record_value(v)
    return h


def test_latency_summary_of_a_known_histogram_is_exact():
    # 1..1000 us: percentiles are the highest value equivalent to the rank's bucket
    hist = filled(range(1_000, 1_000_001, 1_000))
    s = latency_us(hist)
    assert s["min"] == 1.0 and s["max"] == pytest.approx(1000.447, abs=0.001)
    assert s["p50"] == pytest.approx(500.223, abs=0.001)
    assert s["p99"] == pytest.approx(990.207, abs=0.001)
    assert s["mean"] == pytest.approx(500.5, rel=1e-3)
    assert s["stddev"] == pytest.approx(288.675, rel=1e-3)  # sqrt((n^2 - 1) / 12) us


def test_empty_histogram_gives_all_null():
    assert set(latency_us(new_histogram()).values()) == {None}


def test_merge_keeps_min_and_count():
    a, b, empty = filled([5_000, 7_000]), filled([3_000_000]), new_histogram()
    m = merge([empty, a, None, b])
    assert m.get_total_count() == 3
    assert m.get_min_value() == 5_000 and m.get_max_value() == b.get_max_value()
    assert merge([empty]).get_total_count() == 0


def test_tally_counts_successes_and_each_error_kind():
    t = Tally()
    assert t.count(None) and not t.count("timeout") and not t.count("timeout")
    assert (t.ok, t.errors["timeout"], sum(t.errors.values())) == (1, 2, 2)


def test_merge_tallies_adds_counts_and_histograms_of_every_worker():
    a, b = Tally.for_mode(open_loop=True), Tally.for_mode(open_loop=True)
    for v in range(1_000, 501_000, 1_000):
        a.latency.record_value(v)
        a.uncorrected.record_value(v)
    for v in range(501_000, 1_001_000, 1_000):
        b.latency.record_value(v)
        b.pacing.record_value(v)
        b.lateness.record_value(v)
    a.ok, b.ok = 500, 500
    a.errors["connect"], b.errors["connect"], b.errors["http_5xx"] = 1, 2, 3
    m = merge_tallies([a, b], open_loop=True)
    assert (m.ok, m.errors) == (1000, {**dict.fromkeys(ERROR_KINDS, 0), "connect": 3, "http_5xx": 3})
    assert m.latency.get_total_count() == 1000
    assert latency_us(m.latency)["p50"] == pytest.approx(500.223, abs=0.001)
    assert (m.uncorrected.get_total_count(), m.pacing.get_total_count()) == (500, 500)
    assert m.lateness.get_total_count() == 500
    closed = merge_tallies([Tally(), Tally()], open_loop=False)
    assert closed.uncorrected is None and closed.pacing is None and closed.lateness is None
