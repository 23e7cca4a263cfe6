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

from .. import paths, samples
from ..absent import ABSENT
from ..answers import FASTER, IMPROVEMENT, INCONCLUSIVE, INVALID, NO_CHANGE, NOT_GATED, REGRESSION, SLOWER
from ..design_names import DUET, UNPAIRED
from ..series import Repeat, Series
from ..verdict import Design, DriftResult, Flag, MetricResult, SideRefs, Unguarded, Verdict
from . import clustered, designs, drift, failures, family, stats
from . import memory as memory_stats
from .gates import Gates, MetricGate
from .rules import RegressionCheck, worse_factor
from .sides import SeriesKey, Side, whole


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


def series_rows(
    key: SeriesKey,
    b: list[Repeat],
    h: list[Repeat],
    gates: Gates,
    rng,
    noise: dict[int, tuple],
    design: str,
    estimates_only: bool = False,
) -> list[MetricResult]:
    all_b, all_h = b, h  # every round, failed ones included: the failure row's
    b, h = whole(b), whole(h)  # the rounds that ran whole: the latency, throughput and CPU tests'
    with_hist = bool(b and h)
    sides = Series(*key, tuple(b)), Series(*key, tuple(h))  # the shown numbers (series.py)
    u = designs.units(design, b, h) if with_hist else None
    behind = _fell_behind(b, h) if design != DUET else None
    cpu_known = any(r.cpu_us_per_order is not None for r in (*b, *h))
    # Runs from before the server's memory was read carry neither a value nor why not.
    memory_known = any(r.memory_bytes_per_order is not None or r.memory_unread for r in (*b, *h))
    results = []
    for m in gates.metrics:
        if m.kind == "cpu" and not cpu_known:
            continue  # runs from before the server's CPU was recorded: nothing to show
        if m.kind == "memory" and not memory_known:
            continue
        why_not = gates.why_not_judged(*key, m.name)
        if m.kind == "errors":  # every round counts, failed ones first of all
            res = MetricResult(
                key[0],
                key[1],
                m.name,
                m.gated and why_not is None,
                len(all_b),
                len(all_h),
                min((r.ok + r.errors for r in (*all_b, *all_h)), default=0),
                threshold=m.threshold,
            )
            _failures(res, all_b, all_h)
            results.append(res)
            continue
        n = min((r.ok for r in (*b, *h)), default=0)  # latency counts the successful orders
        where = "in a run"
        if u is not None and u.pairs and m.kind == "quantile":
            n, where = _round_samples(b, h, m)
        res = MetricResult(
            scenario=key[0],
            client=key[1],
            metric=m.name,
            gated=m.gated and why_not is None,
            base_runs=len(b),
            head_runs=len(h),
            min_samples=n,
            threshold=m.threshold,
        )
        enough = n >= m.min_samples
        if m.kind == "quantile":
            spread = _quantile(res, m, u, sides, gates=gates, rng=rng, test=enough and not estimates_only)
        elif m.kind == "exceedance":
            spread = _exceedance(res, m, u, gates=gates, rng=rng, test=enough)
        elif m.kind == "throughput":
            spread = _throughput(res, *sides, gates, rng, design)
        elif m.kind == "memory":
            spread = _memory(res, b, h, gates, design)
        else:
            spread = _cpu(res, b, h, gates, rng, design)
        if spread is not None:
            noise[id(res)] = spread
        if res.verdict != NOT_GATED and not enough:
            res.verdict, res.reason = NOT_GATED, f"n too small: {n} samples {where} < {m.min_samples}"
        if res.verdict == NOT_GATED:
            res.gated = False
        if m.gated and why_not and res.reason is None:
            res.reason = why_not
        if res.gated and behind:  # the latency holds the client's delay: not the server's
            res.gated, res.reason = False, behind
        if m.gated and not res.gated:
            res.why_not_gated = res.reason
        results.append(res)
    return results


def _round_samples(b: list[Repeat], h: list[Repeat], m: MetricGate) -> tuple[int, str]:
    """The samples a round design's quantile rests on, and where they are counted: the rounds,
    not one run, carry them (the test is over the rounds' own quantiles), so the fewer of the
    two sides' totals over the rounds; but a round with fewer than DISPLAY_MIN_BEYOND samples
    beyond the quantile counts as its own size (its quantile would be one of a handful of
    orders). P99.9 of latency-1c, 50,000 orders a round, is judged from 16 rounds (800,000)
    where one run could never reach it."""
    each = samples.min_samples(100 * (m.quantile or 0.5))
    thin = min(r.ok for r in (*b, *h))
    if thin < each:
        return thin, f"in a round (each needs ≥ {each:,})"
    return min(sum(r.ok for r in b), sum(r.ok for r in h)), "over the rounds"


def _fell_behind(b: list[Repeat], h: list[Repeat]) -> str | None:
    """Why a series is not gated when its open-loop generator fell behind (lateness.py) on
    base's side: the host could not carry the schedule, so neither side's latency is the
    server's. Behind on head's side only is not a reason: a head that overloads its server
    would otherwise take its own series out of the gate, and its latency (measured from the
    intended send time) already holds what its users would wait.

    Not asked of a duet: there one generator's schedule feeds both servers, each order's side
    drawn at random, so a slipping schedule delays both sides alike within every round. The
    client's delay then dilutes the ratio toward 1 (less power: the interval says so), never
    biases it, and a head that slows the generator makes its own latency worse, not ungated."""
    late = [r.behind_p99_us for r in b if r.behind_p99_us is not None]
    if not late:
        return None
    return (
        f"the load generator fell behind in {len(late)} of {len(b)} of base's runs (send lateness "
        f"P99 up to {max(late):,.0f} µs > 10 % of a connection's send interval): not gated"
    )


def _quantile(
    res: MetricResult,
    m: MetricGate,
    u: designs.Units | None,
    sides: tuple[Series, Series],
    *,
    gates: Gates,
    rng,
    test: bool,
) -> tuple[float, float] | None:
    """Pooled quantiles (series.py) and their ratio; the test and the interval (over the
    design's units) only when `test`. Returns the noise for the MDE: (bootstrap sd of log
    ratio, the test's smallest p)."""
    if u is None:
        why = "a run recorded no latency (every order failed)"
        if any(s.repeats for s in sides) and all(r.histogram for s in sides for r in s.repeats):
            why = "no round measured on both sides: nothing to pair"
        res.verdict, res.reason = NOT_GATED, why
        return None
    qb, qh = (s.quantile_us(m.quantile) for s in sides)
    res.base_value, res.head_value, res.ratio = qb, qh, qh / qb
    if not test:
        return None
    t = designs.quantile_test(u, m.quantile, n_perm=gates.permutations, n_boot=gates.bootstrap, rng=rng)
    return _tested(res, t, gates)


def _exceedance(
    res: MetricResult, m: MetricGate, u: designs.Units | None, *, gates: Gates, rng, test: bool
) -> tuple[float, float, designs.Tested] | None:
    """Head's share of its orders past the P99.9 of both sides' orders over base's share
    (exceedance.py): shown as each side's share, the rounds' geometric means (or the runs'
    means, unpaired); tested only when every run holds `min_samples` orders, so each line has
    orders past it to count."""
    if u is None:
        res.verdict, res.reason = (
            NOT_GATED,
            "a run recorded no latency, or no round was measured on both sides",
        )
        return None
    if not test:
        return None
    t = designs.exceedance_test(u, m.quantile, n_perm=gates.permutations, n_boot=gates.bootstrap, rng=rng)
    if t.df == 0 and t.shown is not None:  # unpaired: each side's mean share over its runs
        res.base_value, res.head_value = t.shown
        res.ratio = res.head_value / res.base_value if res.base_value > 0 else None
    return _tested(res, t, gates)


def _throughput(res: MetricResult, base: Series, head: Series, gates: Gates, rng, design: str):
    """The shown values and ratio are each side's pooled throughput (series.py); the test and
    the interval are over per-run rates (runs, or round pairs: designs.mean_test)."""
    mb, mh = base.throughput_rps() or 0.0, head.throughput_rps() or 0.0
    res.base_value, res.head_value = mb, mh
    res.ratio = mh / mb if mb > 0 else None
    t = designs.mean_test(
        design, base.repeats, head.repeats, n_perm=gates.permutations, n_boot=gates.bootstrap, rng=rng
    )
    return _tested(res, t, gates)


def _cpu(res: MetricResult, b: list[Repeat], h: list[Repeat], gates: Gates, rng, design: str):
    """The server's own CPU per order: each side's mean over its runs, tested over rounds
    (paired designs) or runs. A run without the reading is left out of its side."""
    rb = [r.cpu_us_per_order for r in b if r.cpu_us_per_order is not None]
    rh = [r.cpu_us_per_order for r in h if r.cpu_us_per_order is not None]
    if not rb or not rh:
        res.verdict, res.reason = (
            NOT_GATED,
            f"the server's CPU was not recorded on {'base' if not rb else 'head'}",
        )
        return None
    res.base_value, res.head_value = float(np.mean(rb)), float(np.mean(rh))
    res.ratio = res.head_value / res.base_value if res.base_value > 0 else None
    t = designs.value_test(
        design, b, h, lambda r: r.cpu_us_per_order, n_perm=gates.permutations, n_boot=gates.bootstrap, rng=rng
    )
    return _tested(res, t, gates)


def _memory(res: MetricResult, b: list[Repeat], h: list[Repeat], gates: Gates, design: str):
    """The server's resident memory grown per order: each side's mean, and head − base tested
    over the rounds (paired designs) or runs (memory.py: a difference, not a ratio; `ratio`
    stays None and `ci` holds the difference's interval in bytes per order). A run whose
    memory could not be read is left out of its side, and the row says why."""
    unread = sorted(
        {r.memory_unread for r in (*b, *h) if r.memory_bytes_per_order is None and r.memory_unread}
    )
    missing = f"; memory not read in some runs: {unread[0]}" if unread else ""
    if design != UNPAIRED:
        matched = [
            (x, y)
            for x, y in designs.pairs(b, h)
            if x.memory_bytes_per_order is not None and y.memory_bytes_per_order is not None
        ]
        rb = [x.memory_bytes_per_order for x, _ in matched]
        rh = [y.memory_bytes_per_order for _, y in matched]
    else:
        rb = [x.memory_bytes_per_order for x in b if x.memory_bytes_per_order is not None]
        rh = [y.memory_bytes_per_order for y in h if y.memory_bytes_per_order is not None]
    if not rb or not rh:
        res.verdict, res.reason = NOT_GATED, (unread[0] if unread else "the server's memory was not read")
        return None
    if design != UNPAIRED:
        d = memory_stats.paired_difference(rb, rh, tuple(x.slot for x, _ in matched))
    else:
        d = memory_stats.unpaired_difference(rb, rh)
    res.base_value, res.head_value = d.base_mean, d.head_mean
    res.p_value = d.p_value
    res.ci = memory_stats.interval(d, gates.confidence)
    res.reason = missing[2:] or None
    return d.se, 0.0, d


def _tested(res: MetricResult, t: designs.Tested, gates: Gates) -> tuple[float, float, designs.Tested]:
    """The row's p and interval; the noise for the MDE, and the test itself (a pool's combine
    adds the runners' tests up: strata.py). A round-level t (t.df > 0) gives Student's
    interval about its estimate and its standard error as the noise; its estimate is the
    rounds' geometric mean ratio, shown with each side's geometric mean (clustered.py)."""
    res.p_value = t.p_value
    if t.df > 0:
        if t.shown is not None:
            (res.base_value, res.head_value), res.ratio = t.shown, float(np.exp(t.observed))
        res.ci = clustered.t_interval(t.observed, t.se, t.df, gates.confidence)
        return t.se, t.smallest_p, t
    res.ci = stats.ratio_interval(t.replicates, gates.confidence, t.n)
    return stats.log_sd(t.replicates), t.smallest_p, t


def _failures(res: MetricResult, b: list[Repeat], h: list[Repeat]) -> None:
    """The failure row (failures.py): each side's failure rate over every round, the verdict
    and its reason; no test (a failed order is a fact, not a sample)."""
    j = failures.judge(b, h)
    res.base_value, res.head_value = j.base.rate, j.head.rate
    res.ratio = res.head_value / res.base_value if res.base_value > 0 else None
    res.verdict, res.reason = j.verdict, j.reason
