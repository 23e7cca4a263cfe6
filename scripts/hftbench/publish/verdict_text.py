"""Every verdict text, from verdict.json alone: job summary, PR comment, main summary, issue body,
and the console lines.

One headline line first, then one row per gated series × metric with its minimum detectable
effect, then the detail folded away. Refs are named by branch and short sha, never by a
local path. Text that comes from outside (scenario, client, suite and branch names, reasons,
commit subjects) is made inert by mdsafe.py: no mention, issue link, tag, code span or line
break of its own. A body never exceeds GitHub's comment limit: detail is dropped first,
then rows, with a line saying how many.

    hftbench verdict-text VERDICT_JSON [--as summary|comment|issue] [--run-url URL] [--out FILE]
"""

from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path

from .. import answers, mdsafe, metrics
from ..errors import UsageError
from ..metrics import fmt_change
from ..verdict import MetricResult, SideRefs, Verdict
from . import bisect_text, method_text, pool_text, profile_text
from .verdict_cells import (
    ICON,
    MEMORY,
    Row,
    change,
    could_detect,
    detectable,
    interval,
    metric_cell,
    series_cell,
    table_head,
    table_row,
    value,
    verdict_cell,
)

GITHUB_BODY_LIMIT = 65_536  # characters in an issue or comment body
BODY_BUDGET = GITHUB_BODY_LIMIT - 1_536  # room for what the CI scripts wrap around it
STICKY_MARKER = "<!-- hft-bench-verdict -->"

HEADLINE = {
    answers.INVALID: "⛔ Invalid",
    answers.REGRESSION: "❌ Regression",
    answers.INCONCLUSIVE: "🟡 Inconclusive",
    answers.IMPROVEMENT: "✅ Improvement",
    answers.SLOWER: "⚠️ Slower, under the gate",
    answers.FASTER: "✅ Faster, under the gate",
    answers.NO_CHANGE: "✅ No change",
}
ORDER = (
    answers.INVALID,
    answers.REGRESSION,
    answers.INCONCLUSIVE,
    answers.SLOWER,
    answers.IMPROVEMENT,
    answers.FASTER,
)
RANK = {v: i for i, v in enumerate((*ORDER, answers.NO_CHANGE, answers.NOT_GATED))}


def ref_name(side: SideRefs) -> str:
    """`main` (1a2b3c4d5e): the branch or ref and the short sha; never a local path."""
    sha = mdsafe.sha(side.commit, 40)
    name = side.ref or side.branch or ""
    if name and len(name) >= 7 and sha.startswith(name):
        name = ""  # a ref given as a sha: the sha says it
    if name and sha:
        return f"`{mdsafe.code(name)}` ({sha[:10]})"
    if sha:
        return f"`{sha[:10]}`"
    return f"`{mdsafe.code(name)}`" if name else "(unknown)"


def drift_lines(doc: Verdict) -> list[str]:
    """The soak drift table (verdict.json `drift`: head's last tenth against its first); [] without."""
    rows = doc.drift or []
    if not rows:
        return []
    out = [
        "**Soak drift** (head's P99, last tenth of the soak against its first; intervals as runs):",
        "",
        "| | series | first tenth | last tenth | change | interval | could detect | RSS growth | verdict |",
        "|---|---|---:|---:|---:|---|---|---|---|",
    ]
    for r in sorted(rows, key=lambda r: RANK.get(r.verdict, 4)):
        icon = ICON[r.verdict] if r.gated else ICON[answers.NOT_GATED]
        growth = r.rss_growth_mib_per_h
        g_ci = r.rss_growth_ci or [None, None]
        rss = "–" if growth is None else f"{growth:+,.1f} MiB/h ({g_ci[0]:+,.1f} … {g_ci[1]:+,.1f})"
        verdict = "drifted" if r.verdict == answers.REGRESSION else verdict_cell(r)
        shown = r.reason and r.verdict != answers.REGRESSION
        why = f": {mdsafe.text(r.reason)}" if shown else ""
        out.append(
            f"| {icon} | {series_cell(r)} | {value('p99_us', r.first_value)} | "
            f"{value('p99_us', r.last_value)} | {change(r)} | {interval(r)} | {detectable(r)} | "
            f"{rss} | "
            f"{verdict}{why} |"
        )
    return [*out, ""]


def gated_rows(doc: Verdict) -> list[MetricResult]:
    """Gated series × metric, most important first (regressions, inconclusive, …)."""
    rows = [r for r in doc.results if r.gated and r.metric != "errors"]
    return sorted(rows, key=lambda r: RANK[r.verdict])


def reported_rows(doc: Verdict) -> list[MetricResult]:
    """Series × metric judged for information only (not gated), in verdict.json's order."""
    return [r for r in doc.results if not r.gated and r.verdict != answers.NOT_GATED]


def _hit(r: Row, esc) -> str:
    """A row of the headline: its series, metric and change; a pool's row that one runner's
    own regression decided names that runner (pooled.own_regressions), not the pooled change."""
    why = r.reason or ""
    if r.verdict == answers.REGRESSION and why.startswith("runner ") and " alone: " in why:
        return f"{series_cell(r, esc)} {esc(why.split(';')[0])}"
    return f"{series_cell(r, esc)} {metric_cell(r, esc)} {change(r).split(' ', 1)[-1]}"


def failure_rows(doc: Verdict, verdict: str) -> list[MetricResult]:
    """The gated failure rows (judge/failures.py) with this verdict."""
    return [r for r in doc.results if r.gated and r.metric == "errors" and r.verdict == verdict]


def beyond_threshold(doc: Verdict) -> list[MetricResult]:
    """Gated rows left undecided, worse for certain, whose estimate already lies beyond the
    threshold: they fail the check (judge/compare.py Comparison.beyond_threshold)."""
    out = []
    for r in gated_rows(doc):
        if r.verdict != answers.INCONCLUSIVE or not r.threshold or not r.ci:
            continue
        if r.metric == MEMORY:  # head keeps more for certain, its estimate past the bytes
            extra = None if r.base_value is None or r.head_value is None else r.head_value - r.base_value
            if extra is not None and extra >= r.threshold and min(r.ci) > 0:
                out.append(r)
            continue
        if r.ratio is None:
            continue
        if _worse(r, r.ratio) >= r.threshold and min(_worse(r, x) for x in r.ci) > 1.0:
            out.append(r)
    return out


def _worse(r: MetricResult, x: float) -> float:
    """A ratio as "how many times worse" (throughput: higher is better, so its inverse)."""
    return 1 / x if r.metric == "throughput_rps" and x else x


def warnings(doc: Verdict) -> list[MetricResult]:
    """Reported-only rows that are significant and beyond their threshold (not gated, said)."""
    return [
        r for r in doc.results if not r.gated and r.metric != "errors" and r.verdict == answers.REGRESSION
    ]


def headline(doc: Verdict, esc=mdsafe.text) -> str:
    """One line: the status and why, in words a reviewer reads first (`esc`: the outside
    names made inert for markdown, or for an issue title with mdsafe.title); a reported-only
    row beyond its threshold follows as a warning."""
    line = _headline(doc, esc)
    warned = [_hit(r, esc) for r in warnings(doc)]
    if warned:
        more = f" and {len(warned) - 2} more" if len(warned) > 2 else ""
        line += f" · ⚠️ reported only, beyond its threshold: {', '.join(warned[:2])}{more}"
    return line


def _headline(doc: Verdict, esc) -> str:
    status = doc.status
    rows = gated_rows(doc)
    lead = HEADLINE.get(status, status)
    if doc.partial:
        lead += f" (partial: {pool_text.partial_why(doc)})"
    if doc.build_timeout:  # ab: a side's build killed at --build-timeout, nothing measured
        return f"{lead}: {esc(doc.build_timeout.why)}"
    if status == answers.INVALID:
        parts = [f"{series_cell(r, esc)}: {esc(r.reason or '')}" for r in failure_rows(doc, answers.INVALID)]
        parts += [esc(why) for why in doc.unjudged or []]
        return f"{lead}: {'; '.join(parts[:2])}{f' and {len(parts) - 2} more' if len(parts) > 2 else ''}"
    hit = [r for r in rows if r.verdict == status]
    errors = failure_rows(doc, status)
    drifted = [r for r in doc.drift or [] if r.gated and r.verdict == status]
    if status in (answers.SLOWER, answers.FASTER) and hit:
        parts = [f"{series_cell(r, esc)} {metric_cell(r, esc)} {change(r).split(' ', 1)[-1]}" for r in hit]
        more = f" and {len(parts) - 3} more" if len(parts) > 3 else ""
        within = _band(hit[0])
        null = "0" if hit[0].metric == MEMORY else "1"  # a difference's no change, or a ratio's
        named = ", ".join(parts[:3])
        return f"{lead} of {within}: {named}{more} (the whole interval under it, and excluding {null})"
    if status in (answers.REGRESSION, answers.IMPROVEMENT) and (hit or errors or drifted):
        parts = [f"{series_cell(r, esc)} {esc(r.reason or 'orders failed')}" for r in errors]
        parts += [_hit(r, esc) for r in hit]
        parts += [
            f"{series_cell(r, esc)} {metric_cell(r, esc)} drifted {change(r).split(' ', 1)[-1]} over the soak"
            for r in drifted
        ]
        more = f" and {len(parts) - 3} more" if len(parts) > 3 else ""
        return f"{lead}: {', '.join(parts[:3])}{more}"
    if status == answers.NO_CHANGE and rows:
        # The band most rows share leads; a metric with a band of its own (P99.9 exceedance's
        # x1.5, memory's bytes) is named with its band and what it could have seen.
        ratios = [r for r in rows if r.metric != MEMORY]
        common = Counter(r.threshold for r in ratios).most_common(1)[0][0] if ratios else None
        lead_rows = [r for r in ratios if r.threshold == common]
        worst = max((could_detect(r) or 1.0 for r in lead_rows), default=1.0)
        within = f"±{_band(lead_rows[0] if lead_rows else rows[0])}"
        own = {}
        for r in rows:
            if r.metric == MEMORY or r.threshold != common:
                seen = own.setdefault(r.metric, [r, 1.0])
                seen[1] = max(seen[1], could_detect(r) or 1.0)
        if own and lead_rows:
            named = [
                f"{metric_cell(r, esc)}: ±{_band(r)}"
                + (f", fails at {fmt_change(w)}" if r.metric != MEMORY and math.isfinite(w) else "")
                for r, w in own.values()
            ]
            within += f" ({'; '.join(named)})"
        sees = f"; each would have failed at {fmt_change(worst)} or more" if math.isfinite(worst) else ""
        counted = ", no order failed" if failure_rows(doc, answers.NO_CHANGE) else ""
        return f"{lead}: all {len(rows)} gated series × metrics within {within}{sees}{counted}"
    if status == answers.INCONCLUSIVE:
        open_rows = [r for r in rows if r.verdict == answers.INCONCLUSIVE]
        settle = [r.settle_runs for r in open_rows if r.settle_runs]
        what = f"; {answers.settle_text(max(settle))}" if settle else ""
        beyond = beyond_threshold(doc)
        fails = ""
        if beyond:
            named = ", ".join(
                f"{series_cell(r, esc)} {metric_cell(r, esc)} {change(r).split(' ', 1)[-1]}"
                for r in beyond[:2]
            )
            fails = f"; fails: the estimate is beyond the threshold ({named})"
        return f"{lead}: {len(open_rows)} of {len(rows)} gated series × metrics undecided{what}{fails}"
    return lead


def _band(r: MetricResult) -> str:
    """A row's threshold in words: 10% (a ratio's) or 32 B/order (memory's)."""
    if r.metric == MEMORY:
        return f"{r.threshold or 0:,.0f} B/order"
    return f"{(r.threshold or 1.1) - 1:.0%}"


def _sides(doc: Verdict) -> str:
    base, head = doc.base, doc.head
    parts = [f"Base {ref_name(base)} vs head {ref_name(head)}"]
    if doc.suite:
        parts.append(f"suite `{mdsafe.code(doc.suite)}`")
    ab = doc.ab
    if ab and ab.rounds_per_side:
        how = "duet rounds (both servers at once)" if ab.design == "duet" else "interleaved rounds a side"
        parts.append(f"{ab.rounds_per_side} {how}, measured in {ab.measure_s or 0:.0f} s")
    else:
        parts.append(f"{base.runs} vs {head.runs} runs")
    return " · ".join(parts) + "."


def disagreements(doc: Verdict) -> list[str]:
    """Series whose latency reads faster while the head's own server CPU per order rose: two
    views that disagree. In a duet the servers share a CPU, so work the head does outside the
    order's path (after the reply, in the background) is paid by base too, and the latency
    ratio can turn upside down; the CPU per order is each process's own."""
    rows = {(r.scenario, r.client, r.metric): r for r in doc.results if r.gated}
    out = []
    for (scenario, client, metric), cpu in rows.items():
        if metric != "cpu_us_per_order" or cpu.verdict not in (answers.REGRESSION, answers.SLOWER):
            continue
        faster = [
            r
            for (s, c, m), r in rows.items()
            if (s, c) == (scenario, client)
            and m.endswith("_us")
            and m != metric
            and r.verdict in (answers.IMPROVEMENT, answers.FASTER)
        ]
        if faster:
            lat = ", ".join(f"{metric_cell(r)} {change(r).split(' ', 1)[-1]}" for r in faster)
            out.append(
                f"⚠️ **Two views disagree on {series_cell(cpu)}:** its latency reads faster ({lat}) while the "
                f"head's own server CPU per order is {change(cpu).split(' ', 1)[-1]}. Both servers shared "
                "the CPU, so base paid for work the head does outside the order's path; the CPU per "
                "order is the view the sharing cannot blur."
            )
    return out


def _details(doc: Verdict) -> list[str]:
    out = []
    for line in disagreements(doc):
        out += [line, ""]
    conf = doc.shown_confidence
    undecided = [r for r in gated_rows(doc) if r.verdict == answers.INCONCLUSIVE and r.reason]
    if undecided:
        out += ["**Undecided:**", ""]
        out += [f"- {series_cell(r)} {metric_cell(r)}: {mdsafe.text(r.reason)}" for r in undecided]
        out.append("")
    failed = [r for r in doc.results if r.gated and r.metric == "errors" and r.verdict != answers.NO_CHANGE]
    if failed:
        out += ["**Failures** (every order of every round counted; judge/failures.py):", ""]
        out += [
            f"- {series_cell(r)}: {r.verdict.replace('_', ' ')}: {mdsafe.text(r.reason or '')}"
            for r in failed
        ]
        out.append("")
    clean = [
        series_cell(r)
        for r in doc.results
        if r.gated and r.metric == "errors" and r.verdict == answers.NO_CHANGE
    ]
    if clean:
        out += [f"No order failed on either side: {', '.join(clean)}.", ""]
    if doc.unjudged:
        out += ["**Not judged** (a gated series nothing judged makes the comparison invalid):", ""]
        out += [f"- {mdsafe.text(why)}" for why in doc.unjudged] + [""]
    too_small = [r for r in doc.results if r.verdict == answers.NOT_GATED and r.reason]
    if too_small:
        groups: dict[tuple[str, str], list[str]] = {}
        for r in too_small:
            groups.setdefault((metric_cell(r), mdsafe.text(r.reason)), []).append(series_cell(r))
        items = "; ".join(f"{m} of {', '.join(s)} ({why})" for (m, why), s in groups.items())
        out += [f"**Not gated:** {items}.", ""]
    info = reported_rows(doc)
    if info:
        out += ["<details><summary>Reported only (not gated)</summary>", "", table_head(conf)]
        out += [table_row(r) for r in info] + ["", "</details>", ""]
    out += method_text.guard_lines(doc)
    method = method_text.method(doc) + method_text.survival_sentence(doc)
    out += ["<details><summary>How this was decided</summary>", "", method, "", "</details>", ""]
    return out


def markdown(doc: Verdict, *, run_url: str | None = None, budget: int = BODY_BUDGET) -> str:
    """The verdict as markdown: headline, refs, gated table, folded detail; within `budget`."""
    rows = gated_rows(doc)
    head = [
        f"## {headline(doc)}",
        "",
        _sides(doc),
        "",
        *method_text.harness_lines(doc),
        *pool_text.pool_lines(doc),
    ]
    links = [f"[Run folders and logs]({run_url})", ""] if run_url else []
    for a in doc.attachments or []:
        links += [f"- {mdsafe.text(a['title'])}: `{mdsafe.code(a['path'])}`"]
    none = ["No gated metric could be tested (see below).", ""]
    if doc.build_timeout:
        bt = doc.build_timeout
        killed = f"{mdsafe.text(bt.side)}'s build was killed at its limit of {bt.timeout_s:g} s"
        none = [f"Nothing was measured: {killed}; its output is in `{mdsafe.code(bt.log)}` of the run.", ""]
    table = [table_head(doc.shown_confidence), *(table_row(r) for r in rows), ""] if rows else none
    # The soak's drift, where the time went and which commit: right under the table, kept when
    # detail is cut.
    sections = drift_lines(doc)
    sections += profile_text.profile_markdown(doc.profile, run_url)
    sections += bisect_text.bisect_markdown(doc.bisect)
    text = "\n".join(head + table + sections + _details(doc) + links)
    if len(text) <= budget:
        return text
    note = ["<sub>Detail left out: the body would exceed GitHub's limit.</sub>"]
    text = "\n".join(head + table + sections + links + note)
    if len(text) <= budget:
        return text
    keep = list(table)  # [table head, rows…, ""]: drop rows from the end (the least important)
    while len(keep) > 2 and len("\n".join(head + keep + sections + links)) > budget - 200:
        keep.pop(-2)
    dropped = len(rows) - (len(keep) - 2)
    note = [f"<sub>{dropped} more rows left out (GitHub's size limit); see verdict.json.</sub>"]
    return "\n".join(head + keep + note + sections + links)


def comment(doc: Verdict, *, run_url: str | None = None) -> str:
    """The sticky pull-request comment: the marker that finds it again, then the verdict."""
    return (
        f"{STICKY_MARKER}\n"
        + markdown(doc, run_url=run_url)
        + ("\nUpdated for every push to this pull request.\n")
    )


def issue(doc: Verdict, *, run_url: str | None = None) -> str:
    """A regression issue's body (regression_issue.py puts its marker in front)."""
    head = doc.head
    intro = (
        f"Main at {ref_name(head)} is slower than {ref_name(doc.base)}, measured "
        "interleaved in one job. Later pushes update this issue; the push that recovers closes it."
    )
    return f"{intro}\n\n" + markdown(doc, run_url=run_url)


def console_lines(doc: Verdict) -> list[str]:
    lines = [f"compare: {doc.status.replace('_', ' ')} (exit {doc.exit_code})"]
    for r in doc.results:
        if r.gated or r.verdict == answers.NOT_GATED:
            lines.append(
                f"  {r.verdict:<12} {series_cell(r, str):<24} {metric_cell(r, str):<10} {change(r):>10}  "
                f"CI {interval(r):<22} detect {detectable(r):<10} {r.reason or ''}"
            )
    for r in doc.drift or []:
        lines.append(
            f"  {r.verdict:<12} {series_cell(r, str):<24} {metrics.label(r.metric) + ' drift':<10} "
            f"{change(r):>10}  "
            f"CI {interval(r):<22} detect {detectable(r):<10} {r.reason or ''}"
        )
    return lines


def print_console(doc: Verdict) -> None:
    print("\n".join(console_lines(doc)))


RENDERERS = {"summary": markdown, "comment": comment, "issue": issue}


def load(path: Path) -> Verdict:
    try:
        doc = json.loads(Path(path).read_text())
    except FileNotFoundError:
        raise UsageError(
            f"{path}: no such verdict file; pass the verdict.json that compare or ab wrote"
        ) from None
    except json.JSONDecodeError as exc:
        raise UsageError(f"{path}: not JSON ({exc}); pass the verdict.json that compare or ab wrote") from exc
    if not isinstance(doc, dict) or "status" not in doc or "results" not in doc:
        raise UsageError(f"{path}: not a verdict (no status / results); pass what compare or ab wrote")
    return Verdict.from_json(doc)
