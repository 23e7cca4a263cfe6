"""Main's creep: its text (creep.md, the issue body) and its issue, from creep.json alone.

`hftbench creep` writes creep.json (judge/creep.py's chain, as plain JSON); this module renders
it and decides the issue, with the standard library only (the hosted job that holds the
token). The creep issue is a second issue beside the regression issue, found by its own
marker: it opens when a series × metric has crept past the gate since the reference, is
updated while it still has, and closes when none has any more (a fix, or a reference that
moved past the creep: the closing comment says which reference it was measured against).
"""

from __future__ import annotations

from typing import NotRequired, TypedDict

from .. import answers, mdsafe, metrics
from . import regression_issue
from .regression_issue import Action
from .verdict_cells import ICON
from .verdict_text import HEADLINE


class MakerJson(TypedDict):
    """judge/creep.py Maker in creep.json."""

    commit: str
    message: str
    ratio: float
    verdict: str


class CreepRowJson(TypedDict):
    """judge/creep.py CreepRow in creep.json."""

    key: str  # "latency-1c/hft p50_us"
    ratio: float
    ci: list[float]
    p_adjusted: float
    verdict: str
    measured_in: int
    makers: list[MakerJson]
    regressed_alone: NotRequired[bool]


class CreepReport(TypedDict):
    """creep.json: judge/creep.py Creep as plain JSON, with the suite and status."""

    suite: NotRequired[str | None]
    status: NotRequired[str]
    head: str
    reference: NotRequired[str | None]
    reference_date: NotRequired[str | None]
    stopped: str
    links: list[dict[str, object]]  # judge/creep.py Link: counted here, not read
    rows: list[CreepRowJson]


def marker(suite: str, keys: list[str]) -> str:
    return regression_issue.marker(suite, [k.replace(" ", ":") for k in keys], kind="creep")


def parse_marker(body: str) -> tuple[str, list[str]] | None:
    return regression_issue.parse_marker(body, kind="creep")


def creeping(doc: CreepReport) -> list[CreepRowJson]:
    """The rows past the gate that no single push regressed alone (judge/creep.py)."""
    return [r for r in doc["rows"] if r["verdict"] == answers.REGRESSION and not r.get("regressed_alone")]


def _key_text(key: str) -> str:
    series, _, metric = key.partition(" ")
    return f"{mdsafe.text(series)} {metrics.label(metric)}"


def _interval(ci: list[float]) -> str:
    return f"{metrics.fmt_change(ci[0])} … {metrics.fmt_change(ci[1])}"


def headline(doc: CreepReport) -> str:
    ref = mdsafe.sha(doc.get("reference"))
    crept = creeping(doc)
    if not crept:
        return f"✅ No creep on main since {ref}: every gated series × metric within the gate"
    worst = max(crept, key=lambda r: r["ratio"])
    more = f" and {len(crept) - 1} more" if len(crept) > 1 else ""
    return (
        f"❌ Creep on main since {ref}: {_key_text(worst['key'])} {metrics.fmt_change(worst['ratio'])} "
        f"(interval {_interval(worst['ci'])}){more}, past the gate"
    )


def markdown(doc: CreepReport) -> str:
    """creep.md: the headline, the chain's reach, one row per key, the pushes that made it slower."""
    links = doc["links"]
    lines = [
        f"## {headline(doc)}",
        "",
        f"{len(links)} pushes to main chained from {mdsafe.sha(doc['head'])} back to "
        f"{mdsafe.sha(doc.get('reference'))}: {mdsafe.text(doc['stopped'])}. Each push was measured "
        "against the push before it in one run; their ratios multiply, their variances add.",
        "",
        f"| Series × metric | Since {mdsafe.sha(doc.get('reference'))} | Interval | Pushes measured "
        "| Verdict |",
        "|---|---|---|---|---|",
    ]
    for r in doc["rows"]:
        shown = f"{ICON.get(r['verdict'], '')} {r['verdict'].replace('_', ' ')}".strip()
        if r.get("regressed_alone") and r["verdict"] == answers.REGRESSION:
            shown += " (one push was a regression alone: the regression issue has it)"
        lines.append(
            f"| {_key_text(r['key'])} | {metrics.fmt_change(r['ratio'])} | {_interval(r['ci'])} | "
            f"{r['measured_in']} of {len(links)} | {mdsafe.text(shown)} |"
        )
    crept = creeping(doc)
    if crept:
        lines += ["", "### The pushes that made it slower", ""]
        for r in crept:
            makers = [
                f"{mdsafe.sha(m['commit'])} {metrics.fmt_change(m['ratio'])} "
                f"({HEADLINE.get(m['verdict'], mdsafe.text(m['verdict']))} alone"
                f"{': ' + mdsafe.text(m['message']) if m.get('message') else ''})"
                for m in r["makers"]
            ]
            lines.append(f"- {_key_text(r['key'])}: " + ("; ".join(makers) or "none slower alone"))
        lines += [
            "",
            "Measured without the chain's added noise, head against the reference in one run:",
            "",
            f"    hftbench ab --base {mdsafe.sha(doc.get('reference'), 40)} "
            f"--head {mdsafe.sha(doc['head'], 40)} --suite {mdsafe.text(doc.get('suite') or 'pr')}",
        ]
    return "\n".join(lines) + "\n"


def issue_action(doc: CreepReport, open_issue: regression_issue.GitHubIssue | None) -> Action:
    """What to do with the creep issue (pure: tested without a network)."""
    suite = doc.get("suite") or "unknown"
    crept = [r["key"] for r in creeping(doc)]
    body = f"{marker(suite, crept)}\n{markdown(doc)}"
    if crept and open_issue is None:
        title = f"Latency creep on main: {headline(doc).removeprefix('❌ Creep on main')}"
        return Action("open", "creep past the gate", mdsafe.title(title)[:250], body)
    if crept:
        _, listed = parse_marker(open_issue["body"]) or (suite, [])
        now = sorted(parse_marker(marker(suite, crept))[1])
        comment = (
            None
            if sorted(listed) == now
            else f"The creep changed at {mdsafe.sha(doc['head'])}: {headline(doc)}"
        )
        return Action("update", "still creeping", body=body, comment=comment)
    if open_issue is not None:
        comment = (
            f"Within the gate again at {mdsafe.sha(doc['head'])}, measured back to "
            f"{mdsafe.sha(doc.get('reference'))}.\n\n{markdown(doc)}"
        )
        return Action("close", "no creep", comment=comment)
    return Action("none", "no creep and no open creep issue")
