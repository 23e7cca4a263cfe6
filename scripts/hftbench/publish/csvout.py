"""results.csv: one row per cell (scenario × client × repeat), and for a series measured more
than once one more row, `repeat` = "all", with the numbers of its repeats pooled, for
spreadsheets and pandas.

Every figure comes from series.py, a cell's as a series of one repeat: the quantiles of the
histogram, min / mean / stddev / max of it, the client's throughput_rps (pooled: Σ ok / Σ
seconds). So the "all" row
equals report.md's row of that scenario × client (report.md also hides the percentiles the
samples cannot support; results.csv keeps them). Open-loop rows also carry the send
lateness P50 / P99 (lateness.py: actual send − intended send, pooled the same way); closed-loop
rows leave them empty.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

from .. import histograms, metrics
from ..fsio import write_atomic
from ..measure import lateness
from ..results import Cell, Run
from ..series import Series

POOLED = "all"  # the `repeat` of a series' pooled row

COLUMNS = [
    "scenario",
    "client",
    "repeat",
    "status",
    "reason",
    "mode",
    "target_rate_rps",
    "connections",
    "warmup",
    "orders",
    "ok",
    "errors",
    "duration_s",
    "throughput_rps",
    *(m.name for m in metrics.LATENCY_US),
    "send_lateness_p50_us",
    "send_lateness_p99_us",
    "wall_s",
    "exit_code",
    "server_orders",
]


def _figures(series: Series) -> dict[str, object]:
    """throughput and latency_us figures of a series (µs to the ns, orders/s to 0.01)."""
    rate = series.throughput_rps()
    out: dict[str, object] = {"throughput_rps": None if rate is None else round(rate, 2)}
    merged = series.merged_histogram()
    if merged is None:
        return out
    mean, stddev = histograms.mean_stddev(merged)
    ns = {
        metrics.MIN: merged.get_min_value(),
        metrics.MEAN: mean,
        metrics.STDDEV: stddev,
        metrics.MAX: merged.get_max_value(),
    }
    for m in metrics.LATENCY_US:
        value = series.quantile_us(m.quantile) if m.quantile is not None else ns[m] / 1000.0
        out[m.name] = None if value is None else round(value, 3)
    return out


def _cell_row(cell: Cell) -> dict[str, object]:
    row: dict[str, object] = {
        "scenario": cell.scenario,
        "client": cell.client,
        "repeat": cell.repeat,
        "status": cell.status,
        "reason": cell.reason or "",
        "wall_s": cell.wall_s,
        "exit_code": cell.exit_code,
        "server_orders": cell.server_orders,
    }
    r = cell.result
    if r is not None:
        row.update(
            mode=r.mode,
            target_rate_rps=r.target_rate_rps,
            connections=r.connections,
            warmup=r.warmup,
            orders=r.orders,
            ok=r.ok,
            errors=r.errors,
            duration_s=r.duration_s,
        )
        row.update(_figures(Series.of_cells([cell], ok_only=False)))
        row.update(_lateness([cell]))
    return row


def _lateness(cells: list[Cell]) -> dict[str, object]:
    """Open loop: the send lateness P50 / P99 (µs to the ns), pooled; empty in closed loop."""
    late = lateness.pooled_us(cells, display_rule=False)
    return {f"send_lateness_{k}_us": None if v is None else round(v, 3) for k, v in late.items()}


def _pooled_row(cells: list[Cell]) -> dict[str, object]:
    """The series' row: its repeats pooled as report.md pools them (every cell with a result)."""
    with_result = [c for c in cells if c.result is not None]
    first = with_result[0].result
    assert first is not None
    series = Series.of_cells(with_result, ok_only=False)
    row: dict[str, object] = {
        "scenario": cells[0].scenario,
        "client": cells[0].client,
        "repeat": POOLED,
        "status": "ok" if all(c.ok for c in cells) else "failed",
        "reason": "; ".join(dict.fromkeys(c.reason for c in cells if c.reason)),
        "mode": first.mode,
        "target_rate_rps": first.target_rate_rps,
        "connections": first.connections,
        "warmup": first.warmup,
        "orders": sum(c.result.orders for c in with_result if c.result),
        "ok": series.samples,
        "errors": series.errors,
        "duration_s": round(sum(r.duration_s for r in series.repeats), 6),
        "wall_s": round(sum(c.wall_s or 0.0 for c in cells), 3),
    }
    row.update(_figures(series))
    row.update(_lateness(with_result))
    return row


def cell_rows(run: Run) -> list[dict[str, object]]:
    out = [_cell_row(cell) for cell in run.cells]
    for scenario in run.scenario_names():
        for client in run.client_names():
            cells = run.select(scenario=scenario, client=client)
            if len(cells) > 1 and any(c.result is not None for c in cells):
                out.append(_pooled_row(cells))
    return out


def write_csv(run: Run, path: Path | None = None) -> Path:
    path = path or run.path / "results.csv"
    text = io.StringIO(newline="")
    writer = csv.DictWriter(text, fieldnames=COLUMNS, restval="")
    writer.writeheader()
    for row in cell_rows(run):
        writer.writerow({k: ("" if v is None else v) for k, v in row.items()})
    write_atomic(path, text.getvalue())
    return path
