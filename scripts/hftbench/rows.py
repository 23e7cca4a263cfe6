"""One report row per scenario × client: repeats merged, percentiles checked against the
sample rules, status against the targets. Pure functions; report.py and csvout.py render them."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

from . import samples
from .results import Cell, Run

LATENCY_KEYS = ("p50", "p90", "p95", "p99", "p999", "p9999")


@dataclass
class Row:
    """The figures of one scenario × client, merged over its repeats."""

    scenario: str
    client: str
    cells: list[Cell]
    ok: bool  # every repeat ok
    reasons: list[str]  # why repeats failed
    samples: int = 0  # successful measured orders, all repeats
    throughput_rps: float | None = None  # median over repeats
    mean_us: float | None = None
    stddev_us: float | None = None  # jitter
    min_us: float | None = None
    max_us: float | None = None
    pct_us: dict[str, float | None] = field(default_factory=dict)  # "p99" -> µs, None if not supported
    uncorrected_p99_us: float | None = None  # open loop
    mode: str = "closed"
    target_rate_rps: float | None = None  # open loop: the offered rate

    @property
    def has_numbers(self) -> bool:
        return self.samples > 0

    def percentile(self, key: str) -> float | None:
        return self.pct_us.get(key)

    def shortfall(self, key: str) -> str | None:
        """Why `key` is not shown (too few samples), or None."""
        return samples.shortfall(self.samples, key)


def _from_histograms(cells: list[Cell]) -> dict[str, float | None] | None:
    """mean/stddev/min/max/percentiles (µs) of the merged HDR histograms, None if any is missing."""
    hists = [c.result.histogram() for c in cells if c.result is not None]
    if not hists or any(h is None for h in hists):
        return None
    merged = hists[0]
    for h in hists[1:]:
        merged.add(h)
    if merged.get_total_count() == 0:
        return None
    out: dict[str, float | None] = {
        "mean": merged.get_mean_value() / 1000,
        "stddev": merged.get_stddev() / 1000,
        "min": merged.get_min_value() / 1000,
        "max": merged.get_max_value() / 1000,
    }
    by_pct = merged.get_percentile_to_value_dict(list(samples.PERCENTILES.values()))
    for key in LATENCY_KEYS:
        out[key] = by_pct[samples.PERCENTILES[key]] / 1000
    return out


def make_row(cells: list[Cell]) -> Row:
    """Merge the repeats of one scenario × client (cells with a result count, ok or not)."""
    first = cells[0]
    with_result = [c for c in cells if c.result is not None and c.result.ok > 0]
    row = Row(
        scenario=first.scenario,
        client=first.client,
        cells=cells,
        ok=all(c.ok for c in cells),
        reasons=[c.reason for c in cells if c.reason],
    )
    if not with_result:
        return row
    results = [c.result for c in with_result if c.result is not None]
    row.mode = results[0].mode
    row.target_rate_rps = results[0].target_rate_rps
    row.samples = sum(r.samples for r in results)
    row.throughput_rps = statistics.median(r.throughput_rps for r in results)
    if len(with_result) == 1:
        lat = results[0].latency
        figures = {k: lat.get(k) for k in ("mean", "stddev", "min", "max", *LATENCY_KEYS)}
    else:
        figures = _from_histograms(with_result) or {
            k: statistics.median(v for r in results if (v := r.latency.get(k)) is not None)
            for k in ("mean", "stddev", "min", "max", *LATENCY_KEYS)
        }
    row.mean_us, row.stddev_us = figures["mean"], figures["stddev"]
    row.min_us, row.max_us = figures["min"], figures["max"]
    for key in LATENCY_KEYS:
        row.pct_us[key] = figures[key] if samples.supports(row.samples, samples.PERCENTILES[key]) else None
    unc = [r.uncorrected_latency.p99_us for r in results if r.uncorrected_latency is not None]
    if unc and all(u is not None for u in unc) and samples.supports(row.samples, 99.0):
        row.uncorrected_p99_us = statistics.median(unc)
    return row


def rows_of(run: Run) -> dict[str, list[Row]]:
    """scenario -> rows in client order (floor first), for every cell of the run."""
    out: dict[str, list[Row]] = {}
    for scenario in run.scenario_names():
        for client in run.client_names():
            cells = run.select(scenario=scenario, client=client)
            if cells:
                out.setdefault(scenario, []).append(make_row(cells))
    return out


# Target key -> (row figure, upper bound?): latencies must stay below, throughput above.
TARGETS = {
    "p50_us": ("p50", True),
    "p90_us": ("p90", True),
    "p95_us": ("p95", True),
    "p99_us": ("p99", True),
    "p999_us": ("p999", True),
    "p9999_us": ("p9999", True),
    "max_us": ("max", True),
    "throughput_rps": ("throughput", False),
}


def _figure(row: Row, name: str) -> float | None:
    if name == "throughput":
        return row.throughput_rps
    if name == "max":
        return row.max_us
    return row.percentile(name)


OPEN_LOOP_KEEP_UP = 0.95  # open loop passes on throughput when it delivers 95 % of the offered rate


def judge(row: Row, targets: dict[str, float]) -> tuple[bool, list[str]]:
    """(passes, notes): ❌ for a failed cell or a missed target; a target the samples cannot
    judge (P99 of 100 orders) is noted, not failed. In open loop the offered rate sets the
    throughput, so the throughput target becomes "kept up with the offered rate"."""
    if not row.ok:
        return False, row.reasons or ["failed"]
    passed, notes, unjudged = True, [], []
    for key, bound in targets.items():
        if key not in TARGETS:
            continue
        name, upper = TARGETS[key]
        if name == "throughput" and row.mode == "open" and row.target_rate_rps:
            bound = OPEN_LOOP_KEEP_UP * row.target_rate_rps
        value = _figure(row, name)
        if value is None:
            if name in samples.PERCENTILES:
                unjudged.append(f"{name.upper()} not judged ({row.shortfall(name)})")
            continue
        if (upper and value >= bound) or (not upper and value <= bound):
            passed = False
            if name == "throughput":
                notes.append(f"throughput {fmt_rate(value)} ≤ {fmt_rate(bound)} orders/s")
            else:
                notes.append(f"{name.upper()} {fmt_us(value)} ≥ {fmt_us(bound)}")
    return passed, notes + unjudged


def fmt_us(value: float | None) -> str:
    """123 µs, 1.23 ms, 12.3 ms; '–' for None."""
    if value is None:
        return "–"
    if value >= 1000:
        ms = value / 1000
        return f"{ms:.2f} ms" if ms < 10 else f"{ms:.1f} ms" if ms < 100 else f"{ms:,.0f} ms"
    return f"{value:.1f} µs" if value < 100 else f"{value:,.0f} µs"


def fmt_rate(value: float | None) -> str:
    return "–" if value is None else f"{value:,.0f}"
