"""The verdict text's account of its method: how base and head were measured and tested
(by the comparison's design, designs.py), what this runner guards (calibration.py), what its
design could not see (the calibration record's `survival`), where the head's code ran and
whether the pull request changes the harness."""

from __future__ import annotations

from .. import mdsafe, metrics
from ..verdict import Verdict

ROUNDS = (
    "each round's own ratio is one unit, and the interval is Student's {conf}% t over rounds "
    "(the servers, their slots and placement are drawn once per round, so a test over blocks would "
    "leave that variance out); significance is the same t. Each server's own CPU time per order "
    "is gated beside its latency: a duet's servers share a CPU, so work one side does after its "
    "replies slows both, and only its CPU per order says which. A change whose whole interval is "
    "under the threshold, and that is significant or whose interval excludes 1, is named *slower* or "
    "*faster, under the gate*, never *no change*"
)
UNITS = {
    "duet": "Base and head were served at once, each order sent to both in a random order (or, "
    "under load, to one drawn at random); " + ROUNDS,
    "paired-rounds": "Rounds ran base, head, head, base, …; " + ROUNDS,
    "unpaired": "The interval is a {conf}% bootstrap over whole runs (expanded for few runs); "
    "significance is a permutation test over runs",
}


def guard_lines(doc: Verdict) -> list[str]:
    """What this runner judged and, from its calibration record, what it cannot and why."""
    if not doc.calibration:
        return []

    def name(series: str, metric: str) -> str:
        return f"{metrics.label(metric)} of {mdsafe.text(series)}"

    shown = ", ".join(name(*g.rsplit(" ", 1)) for g in doc.guarded) or "nothing"
    out = [f"**Guarded on this runner** (calibration `{mdsafe.code(doc.calibration)}`): {shown}."]
    out += [f"- not guarded: {name(u.series, u.metric)}: {mdsafe.text(u.why)}" for u in doc.unguarded]
    return [*out, ""]


def method(doc: Verdict) -> str:
    conf = f"{100 * doc.shown_confidence:.4g}"
    units = UNITS[doc.design.name or "unpaired"].format(conf=conf)
    looks = doc.shown_looks
    sequential = (
        f" Rounds were added while undecided, so each of the {looks} possible looks uses alpha / {looks}; "
        f"the {conf}% interval is the decision's (alpha / looks / the gated rows)."
        if looks > 1
        else ""
    )
    paired = (doc.design.name or "unpaired") != "unpaired"
    values = (
        "Each value is the geometric mean over the rounds of that round's percentile (its whole "
        "HDR histogram); the change is their ratio, the rounds' mean log ratio. "
        if paired
        else "Each value is the percentile of the pooled HDR histograms of a side's runs. "
    )
    return (
        f"{values}{units}, Holm-corrected over the gated family.{sequential} Every order of "
        "every round counts: a head that fails orders base does not, or whose server dies or "
        "hangs, is a regression; a base that fails makes the comparison invalid; a gated series "
        "nothing judged fails the check. A regression needs significance and at least the "
        "threshold; *no change* means the whole interval shown lies within ±threshold and holds "
        "1; an undecided row worse for certain whose estimate is already beyond the threshold "
        "fails; *could detect* "
        "is the slowdown for which the gate fails with 80% power (significant and beyond the "
        f"threshold). Gates: `{mdsafe.code(doc.gates or 'gates.yaml')}`.{memory_sentence(doc)}"
        f"{sandbox_sentence(doc)}"
    )


def memory_sentence(doc: Verdict) -> str:
    """How memory per order was judged, where the verdict has its row: a difference, not a ratio."""
    rows = [r for r in doc.results if r.metric == metrics.MEMORY_PER_ORDER.name and r.ci is not None]
    if not rows:
        return ""
    return (
        " Memory per order is each server's anonymous resident memory grown over a cell, over the "
        "orders it answered (its cgroup's, else /proc's); it is judged as head − base in bytes per "
        f"order, Student's t over the {'rounds' if doc.design.name != 'unpaired' else 'runs'}, "
        f"against ±{rows[0].threshold or 0:,.0f} B/order: base keeps about nothing per order, so a "
        "ratio would divide noise by noise."
    )


def sandbox_sentence(doc: Verdict) -> str:
    """Where the head's code ran (ab's `sandbox`, measure/sandbox.py); "" for a verdict without."""
    box = doc.ab.sandbox if doc.ab else None
    if box is None:
        return ""
    note = mdsafe.text(box.note)
    if box.head == "bubblewrap":
        return f" Isolation: {note}."
    return f" ⚠️ **The head ran unsandboxed** ({note}): its build and server could write the harness."


HARNESS_SHOWN = 8  # harness files named in the note; the rest are counted


def harness_lines(doc: Verdict) -> list[str]:
    """A pull request that changes the harness (`harness_changes`, listed by hftbench pr-leg):
    it was judged by the base's harness, so its own gates, suites, scripts or clients take
    effect after merge. File names are the PR's text: made inert."""
    changed = [str(p) for p in doc.harness_changes or []]
    if not changed:
        return []
    names = ", ".join(f"`{mdsafe.code(p)}`" for p in changed[:HARNESS_SHOWN])
    more = f" and {len(changed) - HARNESS_SHOWN} more" if len(changed) > HARNESS_SHOWN else ""
    note = (
        f"⚠️ **This pull request changes the harness** ({names}{more}): it was judged by the "
        "base's gates, scenarios, scripts and clients; the change takes effect after merge."
    )
    if any(p.startswith(".github/") for p in changed):  # GitHub runs the PR's own workflow file
        note += " A workflow file under `.github/` is read from the PR itself: code owners review it."
    return [note, ""]


def survival_sentence(doc: Verdict) -> str:
    """What of each kind of change this runner's design showed when calibrate measured it
    (the record's `survival`): the share of its effect with each server alone; "" without one."""
    from .calibrate_text import TITLE

    parts = []
    for kind, rows in (doc.survival or {}).items():
        seen = [
            f"{v:.2f} on {mdsafe.text(k.split(' ', 1)[0])} {metrics.label(k.split(' ', 1)[1])}"
            for k, v in rows.items()
            if v is not None
        ]
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
