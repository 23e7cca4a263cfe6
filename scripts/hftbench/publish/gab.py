"""`hftbench export-gab RUN`: github-action-benchmark's custom JSON, so its action can chart it.

Two files, because the action takes one `tool` per file:
- <out>/gab-latency.json     tool: customSmallerIsBetter  (P50 / P90 / P99 / P99.9, µs)
- <out>/gab-throughput.json  tool: customBiggerIsBetter   (orders/s)

Each is a list of {"name", "unit", "value", "range"?, "extra"}. A percentile is exported only
when every repeat recorded enough samples to state it (samples.py's display rule), so the
action never charts P99.9 of a thousand orders. Repeats of a run are pooled as everywhere else
(series.py: the pooled histogram's quantiles, Σ ok / Σ duration), with the repeats' spread of
throughput as `range`.
"""

from __future__ import annotations

from typing import NotRequired, TypedDict

import numpy as np

from .. import metrics, results, samples
from ..series import Series


class GabEntry(TypedDict):
    """One entry of github-action-benchmark's custom JSON."""

    name: str
    unit: str
    value: float
    range: NotRequired[str]
    extra: str


def export(run: results.Run) -> tuple[list[GabEntry], list[GabEntry]]:
    """(latency entries, throughput entries) for one run folder, from its series (series.py)."""
    cells: dict[tuple[str, str], list[results.Cell]] = {}
    for cell in run.cells:
        if cell.ok and cell.result is not None and cell.result.histogram_data and cell.result.ok > 0:
            cells.setdefault((cell.scenario, cell.client), []).append(cell)
    latency: list[GabEntry] = []
    throughput: list[GabEntry] = []
    for (scenario, client), chosen in cells.items():
        series = Series.of_cells(chosen)
        fewest = series.fewest_samples
        commit = (run.git.get("commit") or "?")[:10]
        extra = f"{len(series.repeats)} repeat(s), {fewest:,} samples per repeat, commit {commit}"
        for m in metrics.STORE_PERCENTILES:
            value = series.quantile_us(m.quantile)
            if value is None or not samples.supports(fewest, m.percent):
                continue
            latency.append(
                {
                    "name": f"{scenario}/{client} {m.label}",
                    "unit": "us",
                    "value": round(value, 3),
                    "extra": extra,
                }
            )
        rates = np.array(series.repeat_throughputs())
        entry: GabEntry = {
            "name": f"{scenario}/{client} throughput",
            "unit": "orders/s",
            "value": round(series.throughput_rps() or 0.0, 1),
            **(
                {"range": f"± {float(rates.std(ddof=1)):.1f}"} if len(rates) > 1 else {}
            ),  # the repeats' spread
            "extra": extra,
        }
        throughput.append(entry)
    return latency, throughput
