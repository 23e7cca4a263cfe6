"""The verdict text's sections for a bisect and a differential profile (verdict.json's
`bisect` and `profile`), and what the design could not see (the calibration record's
`survival`), for the job summary, the PR comment and the regression issue.
Standard library only, like verdict_text.py."""

from __future__ import annotations

from typing import Any

from .. import mdsafe, metrics
from ..judge import bisect_steps as bs
from ..metrics import fmt_change
from ..verdict import Verdict


def bisect_headline(doc: dict[str, Any]) -> str:
    """'First bad commit: 1a2b3c4d5e "subject" (P99 +23.0%, 95% interval +18.1% … +27.9%)'
    or 'Between 1a2b… and 3c4d…: reason'."""
    metric = mdsafe.text(metrics.label(doc.get("metric", "")))
    if doc["status"] == bs.CULPRIT and doc.get("culprit"):
        c = doc["culprit"]
        eff = doc.get("effect") or {}
        ci = eff.get("ci")
        size = ""
        if eff.get("ratio") is not None:
            band = f", interval {fmt_change(ci[0])} … {fmt_change(ci[1])}" if ci and None not in ci else ""
            size = f" ({mdsafe.text(doc.get('series', ''))} {metric} {fmt_change(eff['ratio'])}{band})"
        return f"First bad commit: `{mdsafe.sha(c['sha'])}` “{mdsafe.text(c['subject'])}”{size}"
    good, bad = mdsafe.sha(doc["good"]), mdsafe.sha(doc["bad"])
    return f"Between `{good}` (good) and `{bad}` (bad): {mdsafe.text(doc.get('reason', ''))}"


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
        return ["### Where the time went", "", f"No profile: {mdsafe.text(doc['skipped'])}", ""]
    where = f" in [the run's artifact]({run_url})" if run_url else ""
    out = [
        "### Where the time went",
        "",
        f"Differential flame graph (head against base, one uncounted round a side): "
        f"`{mdsafe.code(doc['svg'])}`{where}. Top functions by added self time:",
        "",
        "| function | base self | head self | added |",
        "|---|---|---|---|",
    ]
    for r in doc.get("top") or []:
        out.append(
            f"| `{mdsafe.code(r['function'][:100])}` | {r['base_self_pct']:.1f}% | "
            f"{r['head_self_pct']:.1f}% | {r['added_self_pct']:+.1f} pt |"
        )
    if not doc.get("top"):
        out.append("| (no function gained self time) | | | |")
    return [*out, ""]


def survival_sentence(doc: Verdict) -> str:
    """What of each kind of change this runner's design showed when calibrate measured it
    (the record's `survival`): the share of its effect with each server alone; "" without one."""
    from .calibrate_text import TITLE

    parts = []
    for kind, rows in (doc.survival or {}).items():
        seen = [f"{v:.2f} on {mdsafe.text(k.split(' ', 1)[0])} {metrics.label(k.split(' ', 1)[1])}"
                for k, v in rows.items() if v is not None]  # fmt: skip
        if seen:
            parts.append(f"{TITLE.get(kind, mdsafe.text(kind))}: {', '.join(seen)}")
    if not parts:
        return ""
    return (
        " Of each kind of change calibrate injected, this runner's design showed this share of its "
        "effect with each server alone (1 all of it, 0 none, below 0 the opposite way): "
        + "; ".join(parts)
        + "."
    )
