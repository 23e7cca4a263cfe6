"""lateness.py: the send interval of one connection, the "fell behind" rule, and the pooled
send lateness of a series (pure; fixed vectors)."""

from __future__ import annotations

import pytest
from hdrh.histogram import HdrHistogram
from hftbench.measure import lateness
from hftbench.results import Cell, ClientResult
from support.hftbench_fakes import valid_result


def encoded(values_ns: list[int]) -> str:
    h = HdrHistogram(1, 60_000_000_000, 3)
    for v in values_ns:
        h.record_value(v)
    return h.encode().decode("ascii")


def open_cell(values_ns: list[int] | None, repeat: int = 1) -> Cell:
    doc = valid_result("result-valid-open.json")
    doc.pop("send_lateness_us", None)
    doc.pop("send_lateness_histogram", None)
    if values_ns is not None:
        doc["send_lateness_histogram"] = {
            "format": "hdr-v2-deflate-base64",
            "unit": "ns",
            "data": encoded(values_ns),
        }
    doc["orders"] = len(values_ns or []) or doc["orders"]
    return Cell(scenario="o", client="c", status="ok", result=ClientResult.from_dict(doc), repeat=repeat)


def test_the_send_interval_is_connections_over_rate():
    assert lateness.send_interval_us(5000, 20) == pytest.approx(4000.0)  # open-5k: 4 ms per connection
    assert lateness.send_interval_us(1000, 1) == pytest.approx(1000.0)
    for rate, conns in ((0, 1), (-5, 1), (100, 0)):
        with pytest.raises(ValueError):
            lateness.send_interval_us(rate, conns)


def test_fell_behind_is_a_p99_above_a_tenth_of_the_interval():
    # 5,000/s over 20 connections: one send every 4,000 µs per connection, 10 % = 400 µs.
    assert lateness.fell_behind(400.0, 5000, 20) is False  # at the bound: not above it
    assert lateness.fell_behind(400.1, 5000, 20) is True
    assert lateness.fell_behind(0.0, 5000, 20) is False
    # The same lateness judged against a denser schedule: 10,000/s on 1 connection = 100 µs.
    assert lateness.fell_behind(12.0, 10_000, 1) is True
    assert lateness.fell_behind(9.0, 10_000, 1) is False


def test_pooled_lateness_adds_the_repeats_and_keeps_the_display_rule():
    a = open_cell([5_000] * 990 + [2_000_000] * 10)
    b = open_cell([5_000] * 1000, repeat=2)
    one = lateness.pooled_us([a])
    assert one["p50"] == pytest.approx(5.0, abs=0.01) and one["p99"] == pytest.approx(5.0, abs=0.01)
    both = lateness.pooled_us([a, b])
    assert both["p50"] == pytest.approx(5.0, abs=0.01) and both["p99"] == pytest.approx(5.0, abs=0.01)
    few = open_cell([5_000] * 100)
    assert lateness.pooled_us([few])["p99"] is None  # P99 of 100 values is not stated
    assert lateness.pooled_us([few], display_rule=False)["p99"] == pytest.approx(5.0, abs=0.01)


def test_no_lateness_when_a_repeat_lacks_it():
    assert lateness.series([open_cell(None)]) is None
    assert lateness.pooled_us([open_cell([5_000] * 1000), open_cell(None, repeat=2)]) == {
        "p50": None,
        "p99": None,
    }
