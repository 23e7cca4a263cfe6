"""`hftbench export-gab RUN`: github-action-benchmark's custom JSON, so its action can chart it.

Two files, because the action takes one `tool` per file:
- <out>/gab-latency.json     tool: customSmallerIsBetter  (P50 / P90 / P99 / P99.9, µs)
- <out>/gab-throughput.json  tool: customBiggerIsBetter   (orders/s)

Each is a list of {"name", "unit", "value", "range"?, "extra"}. A percentile is exported only
when every repeat recorded enough samples to state it (samples.py's display rule), so the
action never charts P99.9 of a thousand orders. Repeats of a run are merged (histograms) or
averaged (throughput, with the spread as `range`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from . import results, samples
from .errors import UsageError
from .fsio import write_atomic
from .stats import decode

PERCENTILES = ((50.0, "P50"), (90.0, "P90"), (99.0, "P99"), (99.9, "P99.9"))


def export(run: results.Run) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(latency entries, throughput entries) for one run folder."""
    series: dict[tuple[str, str], list[results.ClientResult]] = {}
    for cell in run.cells:
        if cell.ok and cell.result is not None and cell.result.histogram_data and cell.result.ok > 0:
            series.setdefault((cell.scenario, cell.client), []).append(cell.result)
    latency, throughput = [], []
    for (scenario, client), res in series.items():
        hist = decode(res[0].histogram_data)
        for r in res[1:]:
            hist.add(decode(r.histogram_data))
        fewest = min(r.ok for r in res)
        commit = (run.git.get("commit") or "?")[:10]
        extra = f"{len(res)} repeat(s), {fewest:,} samples per repeat, commit {commit}"
        for pct, label in PERCENTILES:
            if not samples.supports(fewest, pct):
                continue
            latency.append(
                {
                    "name": f"{scenario}/{client} {label}",
                    "unit": "us",
                    "value": round(hist.get_value_at_percentile(pct) / 1000.0, 3),
                    "extra": extra,
                }
            )
        rps = np.array([r.throughput_rps for r in res])
        entry = {
            "name": f"{scenario}/{client} throughput",
            "unit": "orders/s",
            "value": round(float(rps.mean()), 1),
        }
        if len(rps) > 1:
            entry["range"] = f"± {float(rps.std(ddof=1)):.1f}"
        throughput.append({**entry, "extra": extra})
    return latency, throughput


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "export-gab",
        help="write github-action-benchmark JSON (customSmallerIsBetter / customBiggerIsBetter)",
        description=__doc__,
    )
    p.add_argument("run", type=Path, help="run folder written by `hftbench run`")
    p.add_argument("--out", type=Path, help="output folder (default: the run folder)")
    p.set_defaults(func=main)


def main(args) -> int:
    try:
        run = results.load_run(args.run)
    except (OSError, ValueError) as exc:
        raise UsageError(str(exc)) from exc
    latency, throughput = export(run)
    if not latency and not throughput:
        raise UsageError(f"{args.run}: no successful cell with a histogram to export; check its report.md")
    out = args.out or run.path
    for name, entries in (("gab-latency.json", latency), ("gab-throughput.json", throughput)):
        write_atomic(out / name, json.dumps(entries, indent=2) + "\n")
        print(out / name)
    return 0
