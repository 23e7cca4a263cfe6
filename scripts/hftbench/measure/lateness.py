"""Send lateness of open-loop results (Contract 3's `send_lateness_us` and
`send_lateness_histogram`: actual send minus intended send, one value per measured order),
pooled over a series' repeats, and the rule that says a load generator fell behind. Pure.

An open-loop client corrects its latency for coordinated omission: an order sent late
counts from its intended time. That keeps the latency honest about the server, but when the
*client* is what sends late (a generator that cannot keep up, or a core it waits for), the
corrected latency grows with the client's own delay. The lateness says which it was.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from .. import metrics, samples
from ..series import Repeat, Series

if TYPE_CHECKING:
    from ..results import Cell

FELL_BEHIND_SHARE = 0.10  # of the interval between one connection's intended sends


def send_interval_us(rate_rps: float, connections: int) -> float:
    """The interval between one connection's intended sends, in µs: the rate is spread over
    the connections, so each one is due every connections / rate seconds."""
    if rate_rps <= 0 or connections < 1:
        raise ValueError(f"need rate > 0 and connections >= 1, got {rate_rps} and {connections}")
    return connections / rate_rps * 1e6


def fell_behind(lateness_p99_us: float, rate_rps: float, connections: int) -> bool:
    """True when the send-lateness P99 exceeds 10 % of one connection's send interval: the
    generator then sent a real share of its orders late by a real part of their spacing, so
    the corrected latency holds the client's delay, not only the server's."""
    return lateness_p99_us > FELL_BEHIND_SHARE * send_interval_us(rate_rps, connections)


def series(cells: Iterable[Cell]) -> Series | None:
    """The send lateness of the cells' results as a series (each repeat's `ok` is its count
    of lateness values, one per measured order), pooled as every other series; None when a
    repeat that measured something has no lateness (closed loop, or a client without it)."""
    results = [c.result for c in cells if c.result is not None and c.result.orders > 0]
    if not results or any(r.send_lateness_histogram_data is None for r in results):
        return None
    first = results[0]
    return Series(
        first.scenario,
        first.client,
        tuple(Repeat("", r.send_lateness_histogram_data, r.orders, 0, r.duration_s) for r in results),
    )


def pooled_us(cells: Iterable[Cell], display_rule: bool = True) -> dict[str, float | None]:
    """{"p50": µs, "p99": µs} of the cells' pooled send lateness; a percentile is None when
    there is no lateness or, with `display_rule` (report.md; results.csv keeps them all), too
    few values to state it (samples.py)."""
    s = series(cells)
    out: dict[str, float | None] = {}
    for m in (metrics.P50, metrics.P99):
        if s is None or m.quantile is None or (display_rule and not samples.supports(s.samples, m.percent)):
            out[m.key] = None
        else:
            out[m.key] = s.quantile_us(m.quantile)
    return out
