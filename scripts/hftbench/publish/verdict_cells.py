"""A verdict's row as its table's cells: each column's text (the sides' values, the change,
the interval, what the gate could detect, the verdict in words), the columns by name and the
head's labels. verdict_text.py lays the rows out as markdown tables; publish/store_text.py keeps
each row's cells under COLUMNS in the history store, so the dashboard shows the same table
without formatting it. Outside names (scenario, client) pass through `esc`: mdsafe.text for
markdown, mdsafe.title for plain text."""

from __future__ import annotations

import math

from .. import answers, mdsafe, metrics
from ..metrics import MEMORY_PER_ORDER, fmt_bytes_per_order, fmt_change
from ..verdict import DriftResult, MetricResult

Row = MetricResult | DriftResult  # a table's row: the cells read the fields both have

ICON = {
    answers.INVALID: "⛔",
    answers.REGRESSION: "🔴",
    answers.INCONCLUSIVE: "🟡",
    answers.IMPROVEMENT: "🟢",
    answers.SLOWER: "🟠",
    answers.FASTER: "🔵",
    answers.NO_CHANGE: "⚪",
    answers.NOT_GATED: "▫️",
}
MEMORY = MEMORY_PER_ORDER.name  # its row is a difference in bytes per order, not a ratio


def value(metric: str, v: float | None) -> str:
    """A row's value in its metric kind's unit, so a new metric of a known kind needs no line
    here."""
    if v is None:
        return "–"
    kind = metrics.BY_NAME[metric].kind if metric in metrics.BY_NAME else metrics.QUANTILE
    if kind == metrics.MEMORY:
        return fmt_bytes_per_order(v)
    if kind == metrics.THROUGHPUT:
        return f"{v:,.0f}/s"
    if kind in (metrics.ERRORS, metrics.EXCEEDANCE):  # a rate, a share of the orders
        return f"{100 * v:.3g}%"
    return f"{v:,.1f} µs"


def change(r: Row) -> str:
    if r.metric == "errors":
        if r.base_value is None or r.head_value is None:
            return "–"
        d = 100 * (r.head_value - r.base_value)
        return "=" if d == 0 else f"{'▲' if d > 0 else '▼'} {d:+.3g} pt"
    if r.metric == MEMORY:  # head − base, bytes per order
        if r.base_value is None or r.head_value is None:
            return "–"
        d = r.head_value - r.base_value
        arrow = "▲" if d > 0.05 else "▼" if d < -0.05 else "="
        return f"{arrow} {fmt_bytes_per_order(d, signed=True)}"
    if r.ratio is None:
        return "–"
    pct = 100 * (r.ratio - 1)
    arrow = "▲" if pct > 0.05 else "▼" if pct < -0.05 else "="
    return f"{arrow} {pct:+.1f}%"


def interval(r: Row) -> str:
    ci = r.ci
    if not ci or any(x is None or x != x for x in ci):
        return "–"
    if r.metric == MEMORY:
        return f"{fmt_bytes_per_order(ci[0], signed=True)} … {fmt_bytes_per_order(ci[1], signed=True)}"
    return f"{fmt_change(ci[0])} … {fmt_change(ci[1])}"


def detectable(r: Row) -> str:
    """'≥ +12.0%': the smallest slowdown for which the gate fails with 80 % power (an old
    verdict without it: the bar of significance, `mde`)."""
    mde = could_detect(r)
    if mde is None:
        return "–"
    if not math.isfinite(mde):
        return "none (too few runs)"
    if r.metric == MEMORY:
        return f"≥ {fmt_bytes_per_order(mde, signed=True)}"
    return f"≥ {fmt_change(mde)}"


def could_detect(r: Row) -> float | None:
    fails_at = getattr(r, "fails_at", None)
    return fails_at if fails_at is not None else r.mde


def series_cell(r: Row, esc=mdsafe.text) -> str:
    return esc(f"{r.scenario}/{r.client}")


def metric_cell(r: Row, esc=mdsafe.text) -> str:
    return esc(metrics.label(r.metric))


# A memory row's answers in its own words (the ratios' "slower" and "faster" are about time).
MEMORY_WORDS = {answers.SLOWER: "more, under the gate", answers.FASTER: "less, under the gate"}


def verdict_cell(r: Row) -> str:
    if r.metric == MEMORY and r.verdict in MEMORY_WORDS:
        return MEMORY_WORDS[r.verdict]
    return r.verdict.replace("_", " ")


# The table's columns by name: the history store keeps each row's cells under these keys
# (publish/store_text.py's shown_verdict), so the dashboard shows this table without formatting it.
COLUMNS = ("icon", "series", "metric", "base", "head", "change", "interval", "could_detect", "verdict")


def row_cells(r: Row, esc=mdsafe.text) -> list[str]:
    """One table row's cells, in COLUMNS order (`esc`: the outside names made inert for markdown,
    or plain text with mdsafe.title)."""
    icon = ICON[r.verdict] if r.gated else ICON[answers.NOT_GATED]
    sides = [value(r.metric, r.base_value), value(r.metric, r.head_value)]
    judged = [change(r), interval(r), detectable(r), verdict_cell(r)]
    return [icon, series_cell(r, esc), metric_cell(r, esc), *sides, *judged]


def table_head_cells(confidence: float) -> list[str]:
    """The table head's cells, in COLUMNS order."""
    interval_label = f"{100 * confidence:.4g}% interval"
    return ["", "series", "metric", "base", "head", "change", interval_label, "could detect", "verdict"]


def table_row(r: Row) -> str:
    return "| " + " | ".join(row_cells(r)) + " |"


def table_head(confidence: float) -> str:
    head = "|" + "|".join(f" {c} " if c else " " for c in table_head_cells(confidence)) + "|"
    return head + "\n" + "|---" * len(COLUMNS) + "|"
