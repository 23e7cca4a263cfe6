"""The soak section of report.md and its plots: drift over time, from the files a soak cell
leaves (`<scenario>/<client>.hlog` cut into intervals by the client, and
`<scenario>/<client>.server.csv`, the server's /proc samples).

Per soak cell: a table by tenth of the soak (seed 002's soak table: time span, orders,
throughput, P50 / P99 / P99.9, the server's memory, CPU and connections), the observations
(the drift verdict, RSS growth per hour, the throughput's spread), every interval in a
folded table, and two time-series plots (latency per interval; RSS, CPU, connections).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .. import histograms, metrics, samples
from ..answers import IMPROVEMENT, NO_CHANGE, REGRESSION
from ..judge import drift
from ..judge.gates import Gates
from ..measure.cell import server_samples_path
from ..measure.proc_sampler import Sample, read_csv
from ..metrics import fmt_us
from ..results import Run
from ..verdict import DriftResult

PERIODS = 10  # the table's rows: tenths, the drift test's unit of comparison

LATENCY_HEAD = " | ".join(m.label for m in metrics.SOAK_PERCENTILES)  # "P50 | P99 | P99.9"


@dataclass
class PeriodRow:
    start_s: float  # since the soak's first interval
    end_s: float
    orders: int
    throughput_rps: float
    p50_us: float | None
    p99_us: float | None
    p999_us: float | None
    rss_mib: float | None  # the server's mean RSS over the period; None without samples
    cpu_pct: float | None
    connections: float | None


@dataclass
class SoakAnalysis:
    scenario: str
    client: str
    repeat: int
    hlog: Path
    intervals: list[drift.Interval]
    samples: list[Sample] = field(default_factory=list)  # the server's, from its CSV
    result: DriftResult | None = None
    growth: drift.Growth | None = None

    @property
    def label(self) -> str:
        return f"{self.scenario}/{self.client}" + (f" r{self.repeat}" if self.repeat > 1 else "")

    @property
    def slug(self) -> str:
        return f"{self.scenario}_{self.client}" + (f"_r{self.repeat}" if self.repeat > 1 else "")


def soak_cells(run: Run) -> list[SoakAnalysis]:
    """The run's cells whose .hlog holds more than one interval, with their server samples."""
    out = []
    for cell in run.cells:
        if cell.result is None or not cell.file:
            continue
        result_path = run.path / cell.file
        hlog = result_path.with_suffix(".hlog")
        if not hlog.is_file() or drift.untagged_lines(hlog) < 2:
            continue
        intervals = drift.read_intervals(hlog)
        if not drift.is_soak(intervals):
            continue
        csv_path = server_samples_path(result_path)
        found = read_csv(csv_path) if csv_path.is_file() else []
        out.append(SoakAnalysis(cell.scenario, cell.client, cell.repeat, hlog, intervals, found))
    return out


def analyze(run: Run, gates: Gates) -> list[SoakAnalysis]:
    """Every soak cell with its drift verdict (Holm over the run's soak cells) and RSS growth."""
    cells = soak_cells(run)
    m = gates.metric(gates.drift_metric)
    tested = []
    for i, a in enumerate(cells):
        tested.append(
            drift.drift_result(
                a.scenario,
                a.client,
                [a.intervals],
                m,
                gated=m.gated,
                n_perm=gates.permutations,
                n_boot=gates.bootstrap,
                confidence=gates.confidence,
                rng=np.random.default_rng([gates.seed, i]),
            )
        )
        a.result = tested[-1][0]
        a.growth = drift.rss_growth_in(a.intervals, a.samples)
        if a.growth is not None:
            a.result.rss_growth_mib_per_h = a.growth.per_hour
            a.result.rss_growth_ci = (a.growth.low, a.growth.high)
    drift.assign_verdicts(tested, m)
    return cells


def period_rows(a: SoakAnalysis, periods: int = PERIODS) -> list[PeriodRow]:
    """The soak by tenth of its time: merged intervals (by midpoint) and the server's samples."""
    full = drift.full_intervals(a.intervals)
    if not full:
        return []
    t0, t1 = full[0].start_s, full[-1].start_s + full[-1].length_s
    edges = np.linspace(t0, t1, periods + 1)
    rows = []
    for lo, hi in zip(edges[:-1], edges[1:], strict=True):
        mine = [
            i
            for i in full
            if lo <= i.start_s + i.length_s / 2 < hi or (hi == t1 and i.start_s + i.length_s / 2 == t1)
        ]
        h = None
        for i in mine:
            d = histograms.decode(i.histogram)
            h = d if h is None else (h.add(d) or h)
        n = h.get_total_count() if h is not None else 0
        span = sum(i.length_s for i in mine)

        def pct(p: float, h=h, n=n) -> float | None:
            return h.get_value_at_percentile(p) / 1000.0 if n and samples.supports(n, p) else None

        near = [s for s in a.samples if lo <= s.unix_s < hi]
        cpu = [s.cpu_pct for s in near if s.cpu_pct is not None]
        rows.append(
            PeriodRow(
                start_s=lo - t0,
                end_s=hi - t0,
                orders=n,
                throughput_rps=n / span if span else 0.0,
                **{m.name: pct(m.percent) for m in metrics.SOAK_PERCENTILES},
                rss_mib=float(np.mean([s.rss_kib for s in near])) / 1024 if near else None,
                cpu_pct=float(np.mean(cpu)) if cpu else None,
                connections=float(np.mean([s.connections for s in near])) if near else None,
            )
        )
    return rows


def _opt(x: float | None, fmt: str) -> str:
    return "–" if x is None else format(x, fmt)


def _verdict_line(r: DriftResult) -> str:
    icon = {
        REGRESSION: "❌ drifted",
        NO_CHANGE: "✅ no drift",
        IMPROVEMENT: "✅ got faster",
    }
    word = icon.get(r.verdict, f"⚠️ {r.verdict.replace('_', ' ')}")
    if r.ratio is None:
        return f"- P99 drift: {word} ({r.reason})"
    lo, hi = r.ci
    text = (
        f"- P99 drift, last tenth / first tenth: **{word}**: "
        f"{fmt_us(r.first_value)} → {fmt_us(r.last_value)}, "
        f"×{r.ratio:.3f} (interval ×{lo:.3f} … ×{hi:.3f}, p = {r.p_adjusted:.2g}; "
        f"{r.first_intervals} vs {r.last_intervals} intervals; threshold ×{r.threshold:.2f}"
    )
    if r.mde is not None and np.isfinite(r.mde):
        text += f"; could have seen +{100 * (r.mde - 1):.1f} %"
    text += ")" + (f": {r.reason}" if r.reason else "")
    return text


def markdown(analyses: list[SoakAnalysis], plots: dict[str, list[Path]] | None = None) -> list[str]:
    """The report's "Soak: drift over time" section; [] when the run has no soak."""
    if not analyses:
        return []
    out = [
        "",
        "## Soak: drift over time",
        "",
        "The client cut the measured phase into intervals (its `.hlog`); hftbench sampled the server's "
        "RSS, CPU and established connections from /proc every second (`<scenario>/<client>.server.csv`). "
        "Drift = P99 of the last tenth of the soak against the first, with the gate's statistics over "
        "the intervals of each tenth (scripts/hftbench/drift.py) and gates.yaml's P99 threshold and alpha; "
        "RSS growth = Theil-Sen slope with its 95 % interval (reported, not gated).",
    ]
    for a in analyses:
        rows = period_rows(a)
        out += ["", f"### {a.label}", ""]
        out += [
            f"| time | orders | orders/s | {LATENCY_HEAD} | server RSS MiB | server CPU % | connections |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        digits = 1 if rows and rows[-1].end_s < 100 else 0  # a short soak's tenths are seconds long
        for r in rows:
            out.append(
                f"| {r.start_s:,.{digits}f}–{r.end_s:,.{digits}f} s | {r.orders:,} | "
                f"{r.throughput_rps:,.0f} | {fmt_us(r.p50_us)} | {fmt_us(r.p99_us)} | {fmt_us(r.p999_us)} | "
                f"{_opt(r.rss_mib, ',.1f')} | "
                f"{_opt(r.cpu_pct, '.0f')} | {_opt(r.connections, '.0f')} |"
            )
        out += ["", "Observations:", ""]
        if a.result is not None:
            out.append(_verdict_line(a.result))
        if a.growth is not None:
            g = a.growth
            first = next((r.rss_mib for r in rows if r.rss_mib is not None), None)
            last = next((r.rss_mib for r in reversed(rows) if r.rss_mib is not None), None)
            out.append(
                f"- Server RSS: {_opt(first, ',.1f')} → {_opt(last, ',.1f')} MiB; growth "
                f"{g.per_hour:+,.1f} MiB/h (95 % interval {g.low:+,.1f} … {g.high:+,.1f})"
            )
        else:
            out.append(
                "- Server RSS: no /proc samples for this cell "
                "(not run by `hftbench run`, or the server ended)"
            )
        rates = [r.throughput_rps for r in rows if r.orders]
        if rates:
            spread = 100 * (max(rates) - min(rates)) / np.median(rates)
            out.append(
                f"- Throughput by tenth: {min(rates):,.0f} … {max(rates):,.0f} orders/s "
                f"({spread:.1f} % spread)"
            )
        out += ["", f"<details><summary>All {len(a.intervals)} intervals</summary>", ""]
        out += [f"| start | length | orders | {LATENCY_HEAD} |", "|---:|---:|---:|---:|---:|---:|"]
        for r in drift.interval_rows(a.intervals):
            out.append(
                f"| {r.start_s:,.1f} s | {r.length_s:.2f} s | {r.count:,} | {fmt_us(r.p50_us)} | "
                f"{fmt_us(r.p99_us)} | {fmt_us(r.p999_us)} |"
            )
        out += ["", "</details>"]
        for p in (plots or {}).get(a.slug, []):
            out += ["", f"![{p.stem}](plots/{p.name})"]
    out.append("")
    out.append(
        f"Percentiles per interval follow the display rule (≥ {samples.DISPLAY_MIN_BEYOND} samples beyond); "
        "the drift test needs gates.yaml's min_samples in every interval and min_repeats intervals a tenth."
    )
    return out
