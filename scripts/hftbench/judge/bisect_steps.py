"""The bisect's decisions and its record, as pure functions (bisect.py measures, this decides).

A step measures a candidate commit interleaved with both ends of the original range and
compares it on one series × metric:

    vs good: good -> candidate   (is the candidate slower than the last known-good?)
    vs bad:  candidate -> bad    (is the bad end slower than the candidate?)

The candidate is bad when it is a regression against good (at least the threshold slower,
significantly): the first such commit is the culprit. It is good when it is not, and bad is
a regression against it: a slowdown of at least the threshold, shown in the same rounds,
lies after it. (Requiring "no change" against good instead would need an interval inside
±threshold, which a shared host's bimodal rounds rarely give, while the slowdown still
sits plainly after the candidate.) Neither shown: undecided, measured more, and if still
undecided the answer is the range, not a guess. A slowdown in several parts each below the
threshold is such a case: no commit is the culprit.

The record (bisect.json, verdict.json's `bisect`):
    {"status": "culprit"|"between", "good": sha, "bad": sha,
     "culprit": {"sha", "subject"} | null, "steps": [...], "reason": str,
     "series": "latency-1c/hft", "metric": "p50_us", "effect": {"ratio", "ci"} | null}
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from .. import answers, mdsafe, metrics
from ..bisect_record import BisectCulprit, BisectEffect, BisectRecord, BisectStep, StepComparison
from ..metrics import fmt_change
from ..verdict import Flag, MetricResult, Verdict

GOOD, BAD, UNDECIDED = "good", "bad", "undecided"
CULPRIT, BETWEEN = "culprit", "between"


@dataclass(frozen=True)
class Commit:
    sha: str
    subject: str

    def culprit(self) -> BisectCulprit:
        return BisectCulprit(self.sha, self.subject)


def side_of(vs_good: str, vs_bad: str) -> str:
    """The side a candidate falls on, from its two verdicts (answers.py names)."""
    if vs_good == answers.REGRESSION:
        return BAD
    if vs_bad == answers.REGRESSION:
        return GOOD
    return UNDECIDED


def why_undecided(vs_good: StepComparison, vs_bad: StepComparison, ends: StepComparison | None) -> str:
    """In words, why a candidate could not be placed (for the 'between' answer)."""
    g, b = vs_good.verdict, vs_bad.verdict
    parts = [f"against good {g.replace('_', ' ')}, against bad {b.replace('_', ' ')}"]
    if ends is not None and ends.verdict != answers.REGRESSION:
        parts.append(
            f"in the same rounds bad itself was {ends.verdict.replace('_', ' ')} against good "
            f"({fmt_change(ends.ratio)}): the slowdown is within this series' noise or below "
            "the threshold"
        )
    elif g == answers.NO_CHANGE and b == answers.NO_CHANGE:
        parts.append("the candidate is within the threshold of both ends: each part of the slowdown is small")
    elif g == answers.INCONCLUSIVE or b == answers.INCONCLUSIVE:
        parts.append("more rounds would be needed to tell")
    return "; ".join(parts)


def midpoint(lo: int, hi: int) -> int | None:
    """The next candidate's index between a known-good `lo` and a known-bad `hi`."""
    return (lo + hi) // 2 if hi - lo > 1 else None


def narrow(decision: str, mid: int, lo: int, hi: int) -> tuple[int, int]:
    """The range lo..hi after a step at `mid` decided `decision`."""
    if decision == BAD:
        return lo, mid
    if decision == GOOD:
        return mid, hi
    return lo, hi


def steps_left(lo: int, hi: int) -> int:
    """Steps still needed to narrow lo..hi to one commit (each halves the range)."""
    n, span = 0, hi - lo
    while span > 1:
        span = span - span // 2
        n += 1
    return n


def comparison(r: MetricResult | None) -> StepComparison:
    """The part of a MetricResult a step keeps."""
    if r is None:
        return StepComparison(answers.INCONCLUSIVE, None, None, reason="not measured")
    return StepComparison(r.verdict, r.ratio, r.ci, r.mde, r.reason)


def result(
    commits: list[Commit],
    lo: int,
    hi: int,
    steps: list[BisectStep],
    *,
    reason: str | None,
    series: str,
    metric: str,
) -> BisectRecord:
    """The record: a culprit when lo and hi are adjacent and nothing stopped the search,
    else the narrowest range measured and why it is not narrower."""
    found = reason is None and hi - lo == 1
    culprit = commits[hi] if found else None
    return BisectRecord(
        status=CULPRIT if found else BETWEEN,
        good=commits[lo].sha,
        bad=commits[hi].sha,
        culprit=culprit.culprit() if culprit else None,
        steps=list(steps),
        reason=reason or f"{commits[hi].sha[:10]} is the first commit slower than {commits[0].sha[:10]}",
        series=series,
        metric=metric,
        effect=effect(steps, culprit.sha) if culprit else None,
    )


def effect(steps: list[BisectStep], sha: str) -> BisectEffect | None:
    """The culprit's slowdown against good with its interval: from the step that measured it
    as a candidate, else (the bad end itself) from the last step's good-vs-bad comparison."""
    for s in reversed(steps):
        if s.commit == sha and s.vs_good is not None and s.vs_good.ratio is not None:
            return BisectEffect(s.vs_good.ratio, s.vs_good.ci, "candidate vs good")
    for s in reversed(steps):
        if s.ends is not None and s.ends.ratio is not None and s.bad == sha:
            return BisectEffect(s.ends.ratio, s.ends.ci, "bad vs good")
    return None


def table_row(i: int, s: BisectStep) -> str:
    """One markdown row of the step table (console and verdict texts)."""

    def cell(c: StepComparison | None) -> str:
        if c is None:
            return "–"
        band = f" ({fmt_change(c.ci[0])} … {fmt_change(c.ci[1])})" if c.ci and None not in c.ci else ""
        return f"{fmt_change(c.ratio)}{band} {c.verdict.replace('_', ' ')}"

    subject = mdsafe.text((s.subject or "")[:60])
    return (
        f"| {i} | `{mdsafe.sha(s.commit)}` {subject} | {s.rounds} | {cell(s.vs_good)} | "
        f"{cell(s.vs_bad)} | {s.decision} |"
    )


TABLE_HEAD = (
    "| step | candidate | rounds a side | vs good (interval) | vs bad (interval) | decision |\n"
    "|---|---|---|---|---|---|"
)


def regressions_by_slowdown(flags: list[Flag]) -> list[Flag]:
    """The verdict's gated regressions, the one that slowed its series most first. A drift
    flag is left out: it is a trend within runs, not a metric the steps can compare."""
    slowdowns = []
    for flag in flags:
        metric = metrics.BY_NAME.get(flag.metric)
        ratio = flag.ratio
        if flag.verdict == answers.REGRESSION and metric is not None and ratio:
            slowdowns.append((ratio if metric.lower_is_better else 1 / ratio, flag))
    return [flag for _, flag in sorted(slowdowns, key=lambda pair: -pair[0])]


@dataclass(frozen=True)
class Target:
    """What a bisect looks for: from which commit to which, on which series × metric (its
    flags, or filled from an ab verdict by from_verdict)."""

    good: str | None  # a commit without the slowdown
    bad: str | None  # a later commit with it
    series: str | None  # scenario/client; None: bisect's default
    metric: str | None  # a gates.yaml metric; None: bisect's default
    suite: str | None = None  # the suite whose plan measures it


def from_verdict(doc: Verdict, given: Target) -> tuple[Target, str | None]:
    """`given` filled from an ab verdict: its base, its head, its suite and its worst regression
    (among those of the given series / metric); and the line saying which regression that is,
    where the flags did not name both."""
    found = [
        f
        for f in regressions_by_slowdown(doc.flags)
        if given.series in (None, f"{f.scenario}/{f.client}") and given.metric in (None, f.metric)
    ]
    series, metric, picked = given.series, given.metric, None
    if found:
        worst = found[0]
        if not (given.series and given.metric):
            more = ""
            if len(found) > 1:
                more = f", the largest of {len(found)} regressions; --series/--metric pick another"
            picked = (
                f"bisecting {worst.scenario}/{worst.client} {metrics.label(worst.metric)} "
                f"({fmt_change(worst.ratio)} in the verdict){more}"
            )
        series = series or f"{worst.scenario}/{worst.client}"
        metric = metric or worst.metric
    filled = replace(
        given,
        good=given.good or doc.base.commit,
        bad=given.bad or doc.head.commit,
        series=series,
        metric=metric,
        suite=doc.suite or given.suite,
    )
    return filled, picked
