"""Creep on main: several pushes that each passed the gate, added up against a fixed reference.

Every push to main is measured against the push before it, interleaved in one run (main-bench),
and the store keeps that verdict with the run. Five pushes at +5 % each pass one by one and
cost +28 % together. The creep watch chains those measured ratios from the newest push back to
a reference (the baseline a set number of days back, or a commit the user names, e.g. a
release tag's): the cumulative change of a series × metric is the product of its links'
ratios, and its variance the sum of theirs, since each link was measured in its own run (its
randomness is its own). Every factor was a ratio measured within one run, never a level
compared across days, so the host's day-to-day regime cancels link by link.

What it cannot see: a push that was not compared (the first run, a baseline that did not build,
a push not in the store) breaks the chain, and the watch then reaches only that far back (it
says so); a series not gated at some push has no link there (the row says how many pushes
measured it); the noise of a long chain grows with its length (the interval says how much), so
a creep of many tiny steps is seen later than one of a few larger ones. A direct A/B of the
head against the reference (`hftbench ab --base REF --head main`) measures the same question
without the chain's added noise; the report prints that command.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime
from statistics import NormalDist

from ..answers import NO_CHANGE, REGRESSION
from ..store_shapes import RunEntry
from ..stored_verdict import StoredVerdict, read_any
from ..verdict import Verdict
from . import stats
from .gates import Gates
from .rules import classify

_STD_NORMAL = NormalDist()


@dataclass(frozen=True)
class Step:
    """One series × metric of one push, as its verdict measured it against the push before."""

    ratio: float
    se: float  # of the log ratio, from the stored interval
    verdict: str


@dataclass(frozen=True)
class Link:
    """One push to main and its verdict against the push before it (its `base`)."""

    commit: str
    base: str
    date: str | None
    message: str
    steps: dict[str, Step]  # "scenario/client metric" -> its step


@dataclass(frozen=True)
class Maker:
    """A push that made a creeping series × metric slower."""

    commit: str
    message: str
    ratio: float
    verdict: str  # what the gate said of it alone


@dataclass(frozen=True)
class CreepRow:
    key: str  # "latency-1c/hft p50_us"
    ratio: float  # cumulative: head against the reference
    ci: tuple[float, float]
    p_adjusted: float
    verdict: str  # classify's, with the gate's threshold and alpha
    measured_in: int  # pushes whose verdict gated this key
    makers: list[Maker]  # the pushes that made it slower, largest first
    # A push of the chain was a regression of this key alone: the regression issue has it, so
    # the creep watch does not report it twice.
    regressed_alone: bool = False


@dataclass
class Creep:
    head: str
    reference: str | None  # the commit the chain reaches back to
    reference_date: str | None
    stopped: str  # why the chain ends where it does, in words
    links: list[Link]
    rows: list[CreepRow] = field(default_factory=list)

    @property
    def status(self) -> str:
        return REGRESSION if self.creeping() else NO_CHANGE

    def creeping(self) -> list[CreepRow]:
        """Keys past the gate since the reference that no single push regressed alone."""
        return [r for r in self.rows if r.verdict == REGRESSION and not r.regressed_alone]


def level(verdict: Verdict | StoredVerdict) -> float:
    """The two-sided level of a verdict's intervals: its `confidence`, which is already the level
    its intervals were drawn at (widened for the looks and the gated family where ab drew them:
    compare.Comparison.confidence). Widening it again for the looks read every link's spread too
    small, and the chain's interval too narrow."""
    return float(verdict.confidence or 0.99)


def link_from_verdict(
    v: Verdict | StoredVerdict | None, *, commit: str, date: str | None, message: str
) -> Link | None:
    """A push's link from its verdict (verdict.json, or the store's copy of it: a store entry's is
    read by stored_verdict.read_any); None when the push was not compared (no verdict, a partial
    one, or no base commit)."""
    if v is None:
        return None
    base = v.base.commit if isinstance(v, Verdict) else v.base
    if not base or v.partial:
        return None
    z = _STD_NORMAL.inv_cdf(0.5 + level(v) / 2.0)
    rows = v.gated_results() if isinstance(v, Verdict) else (v.gated or [])
    steps: dict[str, Step] = {}
    for r in rows:
        ratio, ci = r.ratio, r.ci
        if not ratio or not ci or not all(isinstance(x, int | float) and x > 0 for x in (ratio, *ci)):
            continue
        lo, hi = ci
        se = (math.log(hi) - math.log(lo)) / (2.0 * z)
        # A t interval read back with z's quantile gives a wider se: a chain errs towards quiet.
        steps[f"{r.series} {r.metric}"] = Step(float(ratio), se, str(r.verdict))
    return Link(commit, str(base), date, message, steps)


def chain(
    head: Link,
    entries: list[RunEntry],
    *,
    since: datetime | None = None,
    reference: str | None = None,
) -> Creep:
    """Follow each link's base through the store's entries back to the reference: the commit
    named, else the first base stored at or before `since`."""
    by_commit = {e["commit"]: e for e in entries if e.get("commit")}  # newest wins (oldest first)
    links, seen = [head], {head.commit}
    while True:
        base = links[-1].base
        entry = by_commit.get(base)
        date = entry.get("date") if entry else None
        if reference and (base.startswith(reference) or reference.startswith(base)):
            return Creep(head.commit, base, date, f"reached the reference {base[:10]}", links)
        if entry is None:
            why = f"the store has no run of {base[:10]}: the watch reaches back to it, not further"
            return Creep(head.commit, base, None, why, links)
        if since is not None and not reference and date and _parse(date) <= since:
            return Creep(
                head.commit, base, date, f"reached the baseline of {since:%Y-%m-%d} ({base[:10]})", links
            )
        stored = entry.get("verdict")
        link = link_from_verdict(
            read_any(stored) if stored else None, commit=base, date=date, message=entry.get("message") or ""
        )
        if link is None or link.base in seen:
            why = f"{base[:10]} was not compared with the push before it: the watch reaches back to it"
            return Creep(head.commit, base, date, why, links)
        links.append(link)
        seen.add(base)


def judge(creep: Creep, gates: Gates) -> Creep:
    """Each key's cumulative ratio, interval and verdict (Holm over the keys, the gate's rules)."""
    # errors: a rate, not a factor; an exceedance: each comparison draws its own line (the
    # round's P99.9 over both sides), so its ratios are not steps of one scale and do not chain
    named = {m.name for m in gates.metrics if m.name != "errors" and m.kind != "exceedance"}
    keys = sorted({k for link in creep.links for k in link.steps if k.split(" ", 1)[1] in named})
    sums = []
    for key in keys:
        steps = [(link, link.steps[key]) for link in creep.links if key in link.steps]
        log_ratio = sum(math.log(s.ratio) for _, s in steps)
        se = math.sqrt(sum(s.se**2 for _, s in steps))
        sums.append((key, steps, log_ratio, se))
    p = [2.0 * (1.0 - _STD_NORMAL.cdf(abs(lr) / se)) if se > 0 else 1.0 for _, _, lr, se in sums]
    adjusted = stats.holm(p) if p else []
    z = _STD_NORMAL.inv_cdf(0.5 + gates.confidence / 2.0)
    rows = []
    for (key, steps, lr, se), p_adj in zip(sums, adjusted, strict=True):
        gate = gates.metric(key.split(" ", 1)[1])
        ci = (math.exp(lr - z * se), math.exp(lr + z * se))
        verdict = classify(math.exp(lr), ci, p_adj, threshold=gate.threshold, alpha=gate.alpha)
        makers = [Maker(ln.commit, ln.message, s.ratio, s.verdict) for ln, s in steps if s.ratio > 1.0]
        makers.sort(key=lambda m: m.ratio, reverse=True)
        alone = any(s.verdict == REGRESSION for _, s in steps)
        rows.append(CreepRow(key, math.exp(lr), ci, p_adj, verdict, len(steps), makers, alone))
    creep.rows = rows
    return creep


def _parse(date: str) -> datetime:
    return datetime.fromisoformat(date.replace("Z", "+00:00"))
