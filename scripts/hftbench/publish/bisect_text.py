"""The verdict text's bisect section (verdict.json's `bisect`: the culprit or the range,
and each step) and bisect's closing console lines. Standard library only, like verdict_text.py."""

from __future__ import annotations

from .. import mdsafe, metrics
from ..bisect_record import BisectRecord
from ..judge import bisect_steps as bs
from ..metrics import fmt_change


def bisect_headline(doc: BisectRecord) -> str:
    """'First bad commit: 1a2b3c4d5e "subject" (P99 +23.0%, 95% interval +18.1% … +27.9%)'
    or 'Between 1a2b… and 3c4d…: reason'."""
    metric = mdsafe.text(metrics.label(doc.metric or ""))
    if doc.status == bs.CULPRIT and doc.culprit:
        c, eff = doc.culprit, doc.effect
        size = ""
        if eff is not None and eff.ratio is not None:
            ci = eff.ci
            band = f", interval {fmt_change(ci[0])} … {fmt_change(ci[1])}" if ci and None not in ci else ""
            size = f" ({mdsafe.text(doc.series or '')} {metric} {fmt_change(eff.ratio)}{band})"
        return f"First bad commit: `{mdsafe.sha(c.sha)}` “{mdsafe.text(c.subject)}”{size}"
    good, bad = mdsafe.sha(doc.good), mdsafe.sha(doc.bad)
    return f"Between `{good}` (good) and `{bad}` (bad): {mdsafe.text(doc.reason or '')}"


def bisect_markdown(doc: BisectRecord | None) -> list[str]:
    if not doc:
        return []
    out = ["### Bisect", "", bisect_headline(doc) + ".", ""]
    steps = doc.steps or []
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


def bisect_lines(doc: BisectRecord) -> list[str]:
    """The console's closing lines of `hftbench bisect`."""
    lines = [bisect_headline(doc).replace("`", "")]
    if doc.status == bs.CULPRIT:
        lines.append(f"  last good {doc.good[:10]}, first bad {doc.bad[:10]}; {len(doc.steps or [])} steps")
    return lines
