"""The number formats every surface shares (metrics.fmt_*): report.md, the verdict texts,
bisect's steps."""

import pytest
from hftbench.metrics import fmt_change, fmt_rate, fmt_us


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (None, "–"),
        (42.04, "42.0 µs"),
        (123.4, "123 µs"),
        (1234, "1.23 ms"),
        (12_345, "12.3 ms"),
        (123_456, "123 ms"),
    ],
)
def test_fmt_us(value, text):
    assert fmt_us(value) == text


@pytest.mark.parametrize(("ratio", "text"), [(None, "–"), (1.138, "+13.8%"), (0.95, "-5.0%"), (1.0, "+0.0%")])
def test_fmt_change_is_the_signed_change_of_a_ratio(ratio, text):
    assert fmt_change(ratio) == text


def test_fmt_rate_is_whole_orders_per_second():
    assert (fmt_rate(46_948.4), fmt_rate(None)) == ("46,948", "–")
