"""One report row per scenario × client: repeats pooled (series.py), percentiles checked
against the sample rules, status against the targets. Pure functions; report.py, csvout.py
and plots.py render them."""

from __future__ import annotations

from dataclasses import dataclass, field

from .. import histograms, metrics, roster, samples
from ..measure import lateness
from ..metrics import fmt_rate, fmt_us
from ..results import Cell, Run
from ..series import Series


@dataclass
class Row:
    """The figures of one scenario × client, pooled over its repeats (series.py)."""

    scenario: str
    client: str
    cells: list[Cell]
    ok: bool  # every repeat ok
    reasons: list[str]  # why repeats failed
    samples: int = 0  # successful measured orders, all repeats
    throughput_rps: float | None = None  # Σ ok / Σ duration over the repeats
    mean_us: float | None = None
    stddev_us: float | None = None  # jitter
    min_us: float | None = None
    max_us: float | None = None
    pct_us: dict[str, float | None] = field(default_factory=dict)  # "p99" -> µs, None if not supported
    uncorrected_p99_us: float | None = None  # open loop
    lateness_p50_us: float | None = None  # open loop: send lateness (actual - intended send), pooled
    lateness_p99_us: float | None = None
    fell_behind: bool | None = None  # open loop: lateness.fell_behind of the P99; None when not judged
    busy_poll: tuple[bool | None, ...] = ()  # client hft: each repeat's extra.busy_poll (None: not recorded)
    mode: str = "closed"
    connections: int = 1
    target_rate_rps: float | None = None  # open loop: the offered rate
    series: Series | None = None  # the repeats with a result (ok or not); None when none wrote one

    @property
    def has_numbers(self) -> bool:
        return self.samples > 0

    def percentile(self, key: str) -> float | None:
        return self.pct_us.get(key)

    def shortfall(self, key: str) -> str | None:
        """Why `key` is not shown (too few samples), or None."""
        return samples.shortfall(self.samples, key)


def make_row(cells: list[Cell]) -> Row:
    """Pool the repeats of one scenario × client (cells with a result count, ok or not: a ❌
    row still shows what was measured)."""
    first = cells[0]
    row = Row(
        scenario=first.scenario,
        client=first.client,
        cells=cells,
        ok=all(c.ok for c in cells),
        reasons=[c.reason for c in cells if c.reason],
    )
    results = [c.result for c in cells if c.result is not None]
    row.busy_poll = tuple(_busy_poll(r.extra) for r in results)
    if not results or not any(r.ok > 0 for r in results):
        return row
    series = Series.of_cells(cells, ok_only=False)
    row.series = series
    row.mode = results[0].mode
    row.target_rate_rps = results[0].target_rate_rps
    row.connections = results[0].connections
    row.samples = series.samples
    row.throughput_rps = series.throughput_rps()
    merged = series.merged_histogram()
    if merged is not None:
        mean, stddev = histograms.mean_stddev(merged)
        row.mean_us, row.stddev_us = mean / 1000, stddev / 1000
        row.min_us, row.max_us = merged.get_min_value() / 1000, merged.get_max_value() / 1000
    for m in metrics.PERCENTILES:
        shown = samples.supports(row.samples, m.percent)
        row.pct_us[m.key] = series.quantile_us(m.quantile) if shown else None
    if all(r.uncorrected_histogram_data for r in results if r.ok > 0) and samples.supports(row.samples, 99.0):
        unc = Series.of_cells(cells, ok_only=False, uncorrected=True)
        row.uncorrected_p99_us = unc.quantile_us(metrics.P99.quantile)
    if row.mode == "open":
        late = lateness.pooled_us(cells)
        row.lateness_p50_us, row.lateness_p99_us = late["p50"], late["p99"]
        if row.lateness_p99_us is not None and row.target_rate_rps:
            row.fell_behind = lateness.fell_behind(row.lateness_p99_us, row.target_rate_rps, row.connections)
    return row


def _busy_poll(extra: dict[str, object]) -> bool | None:
    value = extra.get("busy_poll")
    return value if isinstance(value, bool) else None


def rows_of(run: Run) -> dict[str, list[Row]]:
    """scenario -> rows in client order (floor first), for every cell of the run."""
    out: dict[str, list[Row]] = {}
    for scenario in run.scenario_names():
        for client in run.client_names():
            cells = run.select(scenario=scenario, client=client)
            if cells:
                out.setdefault(scenario, []).append(make_row(cells))
    return out


def _figure(row: Row, m: metrics.Metric) -> float | None:
    if m is metrics.THROUGHPUT_RPS:
        return row.throughput_rps
    if m is metrics.MAX:
        return row.max_us
    return row.percentile(m.key)


OPEN_LOOP_KEEP_UP = 0.95  # open loop passes on throughput when it delivers 95 % of the offered rate


def check_targets(row: Row, targets: dict[str, float]) -> tuple[bool, list[str]]:
    """(passes, notes): ❌ for a failed cell or a missed target; a target the samples cannot
    judge (P99 of 100 orders) is noted, not failed. In open loop the offered rate sets the
    throughput, so the throughput target becomes "kept up with the offered rate"."""
    if not row.ok:
        return False, row.reasons or ["failed"]
    passed, notes, unjudged = True, [], []
    allowed = {m.name: m for m in metrics.TARGETS}
    for name, bound in targets.items():
        m = allowed.get(name)
        if m is None:
            continue
        throughput = m is metrics.THROUGHPUT_RPS
        if throughput and row.mode == "open" and row.target_rate_rps:
            bound = OPEN_LOOP_KEEP_UP * row.target_rate_rps
        value = _figure(row, m)
        if value is None:
            if m.kind == metrics.QUANTILE:
                unjudged.append(f"{m.label} not judged ({row.shortfall(m.key)})")
            continue
        if (m.lower_is_better and value >= bound) or (not m.lower_is_better and value <= bound):
            passed = False
            if throughput:
                notes.append(f"throughput {fmt_rate(value)} ≤ {fmt_rate(bound)} orders/s")
            else:
                notes.append(f"{m.label} {fmt_us(value)} ≥ {fmt_us(bound)}")
    return passed, notes + unjudged


def busy_poll_note(row: Row) -> str | None:
    """Whether a client's workers busy-polled (each repeat's `extra.busy_poll`), in words; None
    for a client that does not pin threads (the roster's pins_threads), which never busy-polls."""
    if row.client not in roster.default().having("pins_threads") or not row.busy_poll:
        return None
    polled, n = sum(1 for b in row.busy_poll if b), len(row.busy_poll)
    if all(b is None for b in row.busy_poll):
        return "busy-poll not recorded"
    if polled == n:
        return "busy-polled"
    if polled == 0 and all(b is False for b in row.busy_poll):
        return "not busy-polled"
    return f"busy-polled in {polled} of {n} repeats"


def fell_behind_note(row: Row) -> str | None:
    """Open loop: the row's words when its generator fell behind (lateness.fell_behind), else None."""
    if not row.fell_behind or row.lateness_p99_us is None or not row.target_rate_rps:
        return None
    interval = lateness.send_interval_us(row.target_rate_rps, row.connections)
    return (
        f"⚠️ generator fell behind: send lateness P99 {fmt_us(row.lateness_p99_us)} > "
        f"{lateness.FELL_BEHIND_SHARE:.0%} of the {fmt_us(interval)} between one connection's sends"
    )
