"""The comparison as markdown (job summary, pull-request comment) and as console lines.

Most important first: the headline, then the gated rows (regressions, inconclusive,
improvements, no change; p99 before other metrics), then one line naming what was not gated
and why, then the reported-only metrics folded away.
"""

from __future__ import annotations

from . import stats
from .compare import Comparison, MetricResult

ICON = {
    stats.REGRESSION: "🔴",
    stats.INCONCLUSIVE: "🟡",
    stats.IMPROVEMENT: "🟢",
    stats.NO_CHANGE: "⚪",
    stats.NOT_GATED: "▫️",
}
HEADLINE = {
    stats.REGRESSION: "❌ Regression",
    stats.INCONCLUSIVE: "🟡 Inconclusive (more repeats needed)",
    stats.IMPROVEMENT: "✅ Improvement",
    stats.NO_CHANGE: "✅ No change",
}
LABEL = {
    "p50_us": "P50",
    "p90_us": "P90",
    "p95_us": "P95",
    "p99_us": "P99",
    "p999_us": "P99.9",
    "p9999_us": "P99.99",
    "throughput_rps": "throughput",
    "errors": "error rate",
}
RANK = {stats.REGRESSION: 0, stats.INCONCLUSIVE: 1, stats.IMPROVEMENT: 2, stats.NO_CHANGE: 3}


def _value(r: MetricResult, v: float | None) -> str:
    if v is None:
        return "–"
    if r.metric == "throughput_rps":
        return f"{v:,.0f}/s"
    if r.metric == "errors":
        return f"{100 * v:.3g}%"
    return f"{v:,.1f} µs"


def _change(r: MetricResult) -> str:
    if r.metric == "errors":
        if r.base_value is None or r.head_value is None:
            return "–"
        d = 100 * (r.head_value - r.base_value)
        return "=" if d == 0 else f"{'▲' if d > 0 else '▼'} {d:+.3g} pt"
    if r.ratio is None:
        return "–"
    pct = 100 * (r.ratio - 1)
    arrow = "▲" if pct > 0.05 else "▼" if pct < -0.05 else "="
    return f"{arrow} {pct:+.1f}%"


def _ci(r: MetricResult) -> str:
    if not r.ci or any(x != x for x in r.ci):
        return "–"
    lo, hi = (100 * (x - 1) for x in r.ci)
    return f"{lo:+.1f}% … {hi:+.1f}%"


def _p(r: MetricResult) -> str:
    return "–" if r.p_adjusted is None else f"{r.p_adjusted:.2g}"


def _row(r: MetricResult, gated: bool = True) -> str:
    # Reported-only rows get a neutral icon: a red dot there would read as a failure.
    icon = ICON[r.verdict] if gated else ICON[stats.NOT_GATED]
    verdict = (
        r.verdict.replace("_", " ") if r.verdict != stats.INCONCLUSIVE or not gated else "inconclusive ¹"
    )
    return (
        f"| {icon} | {r.series} | {LABEL[r.metric]} | {_value(r, r.base_value)} | "
        f"{_value(r, r.head_value)} | {_change(r)} | {_ci(r)} | {_p(r)} | {verdict} |"
    )


TABLE_HEAD = (
    "| | series | metric | base | head | change | CI | p (Holm) | verdict |\n"
    "|---|---|---|---|---|---|---|---|---|"
)


def _side(s) -> str:
    commit = f", {s.meta['commit'][:10]}" if s.meta.get("commit") else ""
    return f"`{s.label}` ({len(s.runs)} runs{commit})"


def markdown(c: Comparison) -> str:
    gated = [r for r in c.results if r.gated]
    # Error rates that stayed the same are one line, not a row per series.
    quiet_errors = [r for r in gated if r.metric == "errors" and r.verdict == stats.NO_CHANGE]
    rows = sorted((r for r in gated if r not in quiet_errors), key=lambda r: RANK[r.verdict])  # stable sort
    too_small = [r for r in c.results if r.verdict == stats.NOT_GATED and c.gates.metric(r.metric).gated]
    info = [r for r in c.results if not r.gated and r not in too_small]
    lines = [f"## {HEADLINE[c.status]}", ""]
    lines += [f"- **{msg}**" for msg in (check.fails() for check in c.checks()) if msg]
    lines += [
        "",
        f"Base {_side(c.base)} vs head {_side(c.head)}; ratio head/base with a "
        f"{round(100 * c.gates.confidence)}% bootstrap interval over whole runs, Mann-Whitney U on per-run "
        f"values, Holm-corrected; gates: `{c.gates.source}`.",
        "",
    ]
    if rows:
        lines += [TABLE_HEAD, *(_row(r) for r in rows), ""]
    elif not quiet_errors:
        lines += ["No gated metric could be tested (see below).", ""]
    if any(r.verdict == stats.INCONCLUSIVE for r in rows):
        lines += ["¹ the interval reaches the threshold or the runs are too few: more repeats can tell.", ""]
    if quiet_errors:
        series = ", ".join(r.series for r in quiet_errors)
        lines += [f"Error rate unchanged (within {c.gates.metric('errors').threshold:.1%}): {series}.", ""]
    if too_small:
        groups: dict[tuple[str, str], list[str]] = {}
        for r in too_small:
            groups.setdefault((LABEL[r.metric], r.reason or ""), []).append(r.series)
        items = "; ".join(
            f"{metric} of {', '.join(series)} ({reason})" for (metric, reason), series in groups.items()
        )
        lines += [f"**Not gated:** {items}.", ""]
    if info:
        lines += ["<details><summary>Reported only (not gated)</summary>", "", TABLE_HEAD]
        lines += [_row(r, gated=False) for r in info] + ["", "</details>", ""]
    return "\n".join(lines).replace("\n\n\n", "\n\n")


def print_console(c: Comparison) -> None:
    print(f"compare: {c.status.replace('_', ' ')} (exit {c.exit_code})")
    for r in c.results:
        if r.gated or r.verdict == stats.NOT_GATED and c.gates.metric(r.metric).gated:
            print(
                f"  {r.verdict:<12} {r.series:<24} {LABEL[r.metric]:<10} {_change(r):>10}  "
                f"CI {_ci(r):<22} p {_p(r):<8} {r.reason or ''}"
            )
