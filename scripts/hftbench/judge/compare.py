"""`hftbench compare BASE HEAD`: every series × metric tested, one verdict, an exit status.

BASE and HEAD are run folders, folders of run folders, or (BASE only) a history store.
For each scenario × client present on both sides and each metric of gates.yaml:
ratio head/base of the pooled histograms, expanded bootstrap interval over runs,
permutation p over runs (Holm-corrected over the gated family), the minimum detectable
effect at this noise, verdict (rules.classify). Exit 1 when a gated metric regressed, else 0.
Why these statistics: stats.py.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from .. import paths
from ..absent import ABSENT
from ..answers import FASTER, IMPROVEMENT, INCONCLUSIVE, INVALID, NO_CHANGE, NOT_GATED, REGRESSION, SLOWER
from ..design_names import DUET, UNPAIRED
from ..series import Repeat
from ..verdict import Design, DriftResult, Flag, MetricResult, SideRefs, Unguarded, Verdict
from . import designs, drift, family
from . import memory as memory_stats
from .gates import Gates, MetricGate
from .rows import _failures, series_rows
from .rules import RegressionCheck, worse_factor
from .sides import SeriesKey, Side


@dataclass
class Comparison:
    base: Side
    head: Side
    gates: Gates
    results: list[MetricResult]
    # A soak's drift in head (drift.py): last tenth against first; gated like a metric.
    drift: list[DriftResult] = field(default_factory=list)
    design: str = UNPAIRED  # how base and head were measured: the units of the tests
    # Gated series that no row judged, and why ("latency-8c/hft: n too small …"): each makes
    # the comparison invalid (what is not judged cannot be green).
    unjudged: list[str] = field(default_factory=list)
    # The rows' interval level (family.correct: the gated family's Bonferroni level); None: the
    # gates' own (no row was tested).
    confidence: float | None = None

    @property
    def status(self) -> str:
        """invalid > regression > inconclusive > slower > improvement > faster > no_change, over
        the gated metrics and drifts: a head slower on one row and faster on another is "slower";
        a base that failed, or a gated series nothing judged, makes the whole comparison invalid."""
        verdicts = {r.verdict for r in [*self.results, *self.drift] if r.gated}
        if self.unjudged:
            verdicts.add(INVALID)
        for status in (INVALID, REGRESSION, INCONCLUSIVE, SLOWER, IMPROVEMENT, FASTER):
            if status in verdicts:
                return status
        return NO_CHANGE

    @property
    def exit_code(self) -> int:
        """1: a regression, an invalid comparison, or an undecided row whose estimate already
        lies beyond its threshold (unknown is not green; beyond the line is not a pass)."""
        if self.status in (REGRESSION, INVALID):
            return 1
        return 1 if self.beyond_threshold() else 0

    def beyond_threshold(self) -> list[MetricResult]:
        """Gated rows left undecided that are worse for certain (the shown interval excludes 1)
        and whose point estimate is at least the threshold worse: a change known in direction,
        unknown only in size, already past the line. An estimate past the line with an
        interval holding 1 is noise as likely as change (an A/A's P99 on a busy host): neutral."""

        def beyond(r: MetricResult) -> bool:
            m = self.gates.metric(r.metric)
            if m.kind == "errors" or r.ci is None:
                return False
            if m.kind == "memory":  # a difference in bytes per order: head keeps more for certain
                extra = memory_stats.extra(r)
                return extra is not None and extra >= m.threshold and min(r.ci) > 0
            if r.ratio is None:
                return False
            worse = sorted(worse_factor(x, m.lower_is_better) for x in r.ci)
            return worse_factor(r.ratio, m.lower_is_better) >= m.threshold and worse[0] > 1.0

        return [r for r in self.results if r.gated and r.verdict == INCONCLUSIVE and beyond(r)]

    def warnings(self) -> list[MetricResult]:
        """Reported-only rows that are significant and beyond their threshold: said in the
        headline and, on main, carried to the regression issue; they do not fail the gate."""
        return [r for r in self.results if not r.gated and r.verdict == REGRESSION and r.metric != "errors"]

    def checks(self) -> list[RegressionCheck]:
        return [
            RegressionCheck(
                series=r.series,
                metric=r.metric,
                ratio=r.ratio,
                interval=r.ci,
                p_adjusted=r.p_adjusted,
                threshold=self.gates.metric(r.metric).threshold,
                verdict=r.verdict,
            )
            for r in self.results
            if r.gated and r.ratio is not None and r.ci is not None and r.p_adjusted is not None
        ] + [
            RegressionCheck(
                series=r.series,
                metric=f"{r.metric} drift",
                ratio=r.ratio,
                interval=r.ci,
                p_adjusted=r.p_adjusted,
                threshold=r.threshold,
                verdict=r.verdict,
            )
            for r in self.drift
            if r.gated and r.ratio is not None and r.ci is not None and r.p_adjusted is not None
        ]

    def failures(self) -> list[str]:
        """One message per reason the check fails: each failure row that failed (a regression,
        or invalid), each gated series nothing judged, each gated metric that regressed
        (RegressionCheck.fails), each undecided row whose estimate is beyond its threshold."""
        failed = (REGRESSION, INVALID)
        out = [
            f"{r.series} {r.verdict}: {r.reason}"
            for r in self.results
            if r.metric == "errors" and r.verdict in failed
        ]
        out += [f"invalid: {why}" for why in self.unjudged]
        out += [msg for msg in (check.fails() for check in self.checks()) if msg]
        out += [
            memory_stats.fails(r, self.gates.metric(r.metric).threshold)
            for r in self.results
            if r.gated and r.verdict == REGRESSION and self.gates.metric(r.metric).kind == "memory"
        ]
        out += [
            memory_stats.fails(r, self.gates.metric(r.metric).threshold, undecided=True)
            if self.gates.metric(r.metric).kind == "memory"
            else f"{r.series} {r.metric}: head/base = {r.ratio:.3f} beyond the threshold "
            f"{self.gates.metric(r.metric).threshold:.2f}, undecided: {r.reason or 'inconclusive'}"
            for r in self.beyond_threshold()
        ]
        return out

    def needs_more_repeats(self) -> bool:
        """More rounds could change the answer: some gated row is undecided, and no row is
        already a regression at its adjusted level, nor the comparison invalid (a certain
        regression ends the session at the first look that shows it)."""
        if self.status in (REGRESSION, INVALID):
            return False
        return any(r.gated and r.verdict == INCONCLUSIVE for r in self.results)

    def verdict(self) -> Verdict:
        """verdict.json of this comparison (a command adds its sections: verdict.py)."""
        return Verdict(
            status=self.status,
            exit_code=self.exit_code,
            gates=paths.shown(self.gates.source),
            confidence=self.confidence if self.confidence is not None else self.gates.confidence,
            looks=self.gates.looks,
            design=Design(self.design, designs.DESCRIBE[self.design]),
            calibration=self.gates.calibration,
            survival=self.gates.survival or ABSENT,
            guarded=sorted({f"{r.series} {r.metric}" for r in self.results if r.gated}),
            unguarded=[
                Unguarded(r.series, r.metric, r.why_not_gated)
                for r in self.results
                if not r.gated and self.gates.metric(r.metric).gated and r.why_not_gated
            ],
            suite=self.head.meta.get("suite") or self.base.meta.get("suite"),
            base=_refs(self.base),
            head=_refs(self.head),
            flags=[
                Flag(r.scenario, r.client, r.metric, r.ratio, r.verdict)
                for r in self.results
                if r.gated and r.verdict in (REGRESSION, IMPROVEMENT, SLOWER, FASTER)
            ]
            + [
                Flag(r.scenario, r.client, f"{r.metric}_drift", r.ratio, r.verdict)
                for r in self.drift
                if r.gated and r.verdict == REGRESSION
            ],
            results=list(self.results),
            drift=list(self.drift),
            unjudged=list(self.unjudged) if self.unjudged else ABSENT,
        )

    def to_json(self) -> dict[str, Any]:
        return self.verdict().to_json()


def _refs(side: Side) -> SideRefs:
    meta = side.meta
    return SideRefs(len(side.runs), side.runs, meta.get("commit"), meta.get("branch"), meta.get("runner"))


def compare_sides(
    base: Side, head: Side, gates: Gates, design: str = UNPAIRED, *, estimates_only: bool = False
) -> Comparison:
    """Test every series present on both sides with the test `design` calls for (designs.py);
    series on one side only are reported, not gated. `estimates_only`: the rows' values and
    ratios without the quantile rows' permutation tests, the costly part (calibrate's log ratio
    of each round or solo pair alone, hidden.pair_log_ratios, reads only those)."""
    out: list[MetricResult] = []
    noise: dict[int, tuple] = {}  # id(result) -> (bootstrap log sd, smallest p, test): the MDE
    keys = [k for k in base.series if k in head.series]
    judged = sum(any(gates.why_not_judged(*k, m.name) is None for m in gates.metrics) for k in keys)
    gates = enough_splits(gates, judged)
    for i, key in enumerate(keys):
        rng = np.random.default_rng([gates.seed, i])
        out.extend(
            series_rows(key, base.series[key], head.series[key], gates, rng, noise, design, estimates_only)
        )
    for key in [*base.series, *head.series]:
        if key in base.series and key in head.series:
            continue
        where = "base" if key in base.series else "head"
        for m in gates.metrics:
            out.append(_missing(key, m, where, base.series.get(key, []), head.series.get(key, [])))
    confidence = family.correct(out, gates, noise)
    order = {m.name: i for i, m in enumerate(gates.metrics)}
    out.sort(key=lambda r: (order[r.metric], r.scenario, r.client))
    # A duet's .hlog is cut into blocks, not a soak's intervals: it has no drift to test.
    drifts = drift.soak_drift(head, gates) if design != DUET else []
    return Comparison(base, head, gates, out, drifts, design, unjudged(out, gates), confidence)


def unjudged(rows: list[MetricResult], gates: Gates, judges=None) -> list[str]:
    """Gated series that nothing judged although nothing failed: "series: why" for each. A
    series whose failure row already failed the check (a regression, invalid) is said there.
    `judges(key, metric)`: whether some judge gates that row (default: `gates`; a pool: any
    runner's own calibrated gates), so a row no runner's calibration guards is reported, not
    wanted."""
    if judges is None:

        def judges(key, metric):
            return gates.why_not_judged(*key, metric) is None

    by_series: dict[tuple[str, str], list[MetricResult]] = {}
    for r in rows:
        by_series.setdefault((r.scenario, r.client), []).append(r)
    out = []
    for key, series_rows_ in by_series.items():
        failure_row = [r for r in series_rows_ if r.metric == "errors"]
        if failure_row and failure_row[0].verdict in (REGRESSION, INVALID):
            continue
        wanted = [
            r
            for r in series_rows_
            if r.metric != "errors" and gates.metric(r.metric).gated and judges(key, r.metric)
        ]
        if wanted and not any(r.gated and r.verdict != NOT_GATED for r in wanted):
            whys = sorted({r.reason or r.why_not_gated or "not judged" for r in wanted})
            out.append(f"{key[0]}/{key[1]}: no gated row was judged ({'; '.join(whys)})")
    return out


def enough_splits(gates: Gates, gated_series: int) -> Gates:
    """Gates whose permutation test can resolve the family's strictest level: a p-value is
    at least 1 / (1 + splits), so the splits must reach well below alpha / family size."""
    tested = [m for m in gates.metrics if m.gated and m.kind != "errors"]
    if not tested or not gated_series:
        return gates
    level = min(m.alpha for m in tested) / (gated_series * len(tested))
    return replace(gates, permutations=max(gates.permutations, int(np.ceil(2 / level))))


def _missing(key: SeriesKey, m: MetricGate, only: str, b: list[Repeat], h: list[Repeat]) -> MetricResult:
    """A series measured on one side only: its failure row fails (missing on head: a
    regression; on base: invalid); its other rows are not gated."""
    scenario, client = key
    if m.kind == "errors":
        res = MetricResult(scenario, client, m.name, m.gated, len(b), len(h), 0, threshold=m.threshold)
        _failures(res, b, h)
        return res
    return MetricResult(
        scenario=scenario,
        client=client,
        metric=m.name,
        gated=False,
        base_runs=len(b),
        head_runs=len(h),
        min_samples=0,
        threshold=m.threshold,
        verdict=NOT_GATED,
        reason=f"only in {only}",
    )
