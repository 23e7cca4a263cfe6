"""results.csv: one row per cell (scenario × client × repeat), for spreadsheets and pandas."""

from __future__ import annotations

import csv
import io
from pathlib import Path

from .fsio import write_atomic
from .results import Run

COLUMNS = [
    "scenario", "client", "repeat", "status", "reason", "mode", "target_rate_rps", "connections",
    "warmup", "orders", "ok", "errors", "duration_s", "throughput_rps", "min_us", "mean_us",
    "stddev_us", "p50_us", "p90_us", "p95_us", "p99_us", "p999_us", "p9999_us", "max_us",
    "wall_s", "exit_code", "server_orders",
]  # fmt: skip


def cell_rows(run: Run) -> list[dict[str, object]]:
    out = []
    for cell in run.cells:
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
                throughput_rps=r.throughput_rps,
            )
            for key in ("min", "mean", "stddev", "p50", "p90", "p95", "p99", "p999", "p9999", "max"):
                row[f"{key}_us"] = r.latency.get(key)
        out.append(row)
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
