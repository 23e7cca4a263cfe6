"""The verdict text's sections for a bisect and a differential profile (verdict.json's
`bisect` and `profile`), for the job summary, the PR comment and the regression issue.
Standard library only, like verdict_text.py."""

from __future__ import annotations

from typing import Any

from . import bisect_steps as bs
from . import metrics
from .metrics import fmt_change


def _esc(text: str) -> str:
    return str(text).replace("@", "@\u200b").replace("|", "\\|").replace("<", "&lt;").replace("\n", " ")


def bisect_headline(doc: dict[str, Any]) -> str:
    """'First bad commit: 1a2b3c4d5e "subject" (P99 +23.0%, 95% interval +18.1% … +27.9%)'
    or 'Between 1a2b… and 3c4d…: reason'."""
    metric = metrics.label(doc.get("metric", ""))
    if doc["status"] == bs.CULPRIT and doc.get("culprit"):
        c = doc["culprit"]
        eff = doc.get("effect") or {}
        ci = eff.get("ci")
        size = ""
        if eff.get("ratio") is not None:
            band = f", interval {fmt_change(ci[0])} … {fmt_change(ci[1])}" if ci and None not in ci else ""
            size = f" ({doc.get('series', '')} {metric} {fmt_change(eff['ratio'])}{band})"
        return f"First bad commit: `{c['sha'][:10]}` “{_esc(c['subject'])}”{size}"
    return f"Between `{doc['good'][:10]}` (good) and `{doc['bad'][:10]}` (bad): {_esc(doc.get('reason', ''))}"


def bisect_markdown(doc: dict[str, Any] | None) -> list[str]:
    if not doc:
        return []
    out = ["### Bisect", "", bisect_headline(doc) + ".", ""]
    steps = doc.get("steps") or []
    if steps:
        out += [
            f"{len(steps)} steps, each measuring the candidate interleaved with both ends "
            "(*vs good*: the candidate against good; *vs bad*: bad against the candidate):",
            "",
            bs.TABLE_HEAD,
            *(bs.table_row(i, s) for i, s in enumerate(steps, 1)),
            "",
        ]
    return out


def bisect_lines(doc: dict[str, Any]) -> list[str]:
    """The console's closing lines of `hftbench bisect`."""
    lines = [bisect_headline(doc).replace("`", "")]
    if doc["status"] == bs.CULPRIT:
        steps = len(doc.get("steps") or [])
        lines.append(f"  last good {doc['good'][:10]}, first bad {doc['bad'][:10]}; {steps} steps")
    return lines


def profile_markdown(doc: dict[str, Any] | None, run_url: str | None = None) -> list[str]:
    if not doc:
        return []
    if doc.get("skipped"):
        return ["### Where the time went", "", f"No profile: {_esc(doc['skipped'])}", ""]
    where = f" in [the run's artifact]({run_url})" if run_url else ""
    out = [
        "### Where the time went",
        "",
        f"Differential flame graph (head against base, one uncounted round a side): "
        f"`{_esc(doc['svg'])}`{where}. Top functions by added self time:",
        "",
        "| function | base self | head self | added |",
        "|---|---|---|---|",
    ]
    for r in doc.get("top") or []:
        out.append(
            f"| `{_esc(r['function'])[:100]}` | {r['base_self_pct']:.1f}% | {r['head_self_pct']:.1f}% | "
            f"{r['added_self_pct']:+.1f} pt |"
        )
    if not doc.get("top"):
        out.append("| (no function gained self time) | | | |")
    return [*out, ""]
