"""A pool's legs judged as one test: each runner's test of a series × metric, as that leg's
own `ab` tested it (its design, its guards: rows.series_rows), added up across the runners
that gate it, each runner a stratum (strata.py: the round-level t's of `ab`'s designs as one
Student's t, with no floor on its p); the family, MDE and verdicts then follow as for one
runner (family.py). `hftbench combine` (commands/combine.py) reads the legs and writes the
verdict."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from .. import metrics
from ..answers import INVALID, NOT_GATED, REGRESSION
from ..errors import UsageError
from ..verdict import Alone, MetricResult, SeenRow, Verdict
from . import compare, family, strata
from . import memory as memory_stats
from .gates import Gates
from .rows import _tested, series_rows
from .sides import Side

COMPLETE, INTERRUPTED, FAILED, MISSING = "complete", "interrupted", "failed", "missing"
REFUSED = "refused"  # its artifact disagrees with what combine knows (legcheck.py): not judged
OTHER_REFS = "other refs"  # compared another base or head than the pool's: judged alone


@dataclass
class Leg:
    name: str
    state: str  # COMPLETE | INTERRUPTED | FAILED | MISSING | OTHER_REFS | REFUSED
    why: str | None = None
    doc: dict[str, Any] = field(default_factory=dict)  # the leg's own verdict.json (its PR code's to forge)
    base: Side | None = None
    head: Side | None = None
    # "series metric" -> the A/A MDE (a ratio) of this runner's calibration record, the one
    # pool.yaml's digest names (legcheck.trust): the pool's weights, fixed before the data.
    calibrated_mde: dict[str, float] = field(default_factory=dict)
    # What this runner guards, from that record (None: the base's gates.yaml `series`); never
    # the `guarded` list of the leg's verdict.json.
    guards: dict[str, str | None] | None = None
    calibration: str | None = None  # the record's sha256, as pool.yaml gives it
    trusted_design: str | None = None  # the design the base's config gives its cells (legcheck)
    optional: bool = False  # pool.yaml: the check may pass without this leg

    @property
    def measured(self) -> bool:
        return self.base is not None and self.head is not None

    @property
    def verdict(self) -> Verdict:
        """The leg's own verdict.json, typed (read when asked: combine may empty `doc`)."""
        return Verdict.from_json(self.doc)

    @property
    def design(self) -> str:
        if self.trusted_design:
            return self.trusted_design
        v = self.verdict
        return (v.ab.design if v.ab else None) or v.design.name


def same_refs(legs: list[Leg]) -> None:
    """Legs that compared other commits than the first measured leg (a runner whose stored
    baseline is older, after a leg of an earlier push failed) cannot be strata of one test:
    they are named, and their own verdict stands in their artifact."""
    refs = None
    for leg in legs:
        if not leg.measured:
            continue
        v = leg.verdict
        mine = (v.base.commit, v.head.commit)
        if refs is None:
            refs = mine
        elif mine != refs:
            leg.state, leg.base, leg.head = OTHER_REFS, None, None
            theirs, pools = (f"{str(b)[:10]} with {str(h)[:10]}" for b, h in (mine, refs))
            leg.why = f"compared {theirs}, not the pool's {pools}: judged alone (its own verdict)"


def leg_gates(gates: Gates, leg: Leg) -> Gates:
    """The gates as the runner judges: its calibration record's guards, when pool.yaml names
    one (legcheck.trust checked the record against its digest), else gates.yaml's series."""
    if leg.guards is None:
        return gates
    return replace(gates, guards=dict(leg.guards), calibration=leg.calibration)


def record_mdes(record: Any) -> dict[str, float]:
    """ "series metric" -> MDE from a calibration record (calibration.json: its `guards` rows);
    rows without a finite MDE above 1 are left out (no figure: that row's weights are equal)."""
    rows = record.get("guards") if isinstance(record, dict) else None
    out = {}
    for r in rows if isinstance(rows, list) else []:
        mde = r.get("mde") if isinstance(r, dict) else None
        named = isinstance(r, dict) and r.get("series") and r.get("metric")
        if named and isinstance(mde, (int, float)) and math.isfinite(mde) and mde > 1:
            out[f"{r['series']} {r['metric']}"] = float(mde)
    return out


@dataclass
class _Entry:  # one runner's row of one series × metric
    leg: str
    row: MetricResult
    test: Any  # designs.Tested, or None when the row was not tested


def compare_legs(
    legs: list[Leg], gates: Gates, looks: int
) -> tuple[compare.Comparison, dict[str, list[SeenRow]], list[Alone]]:
    """The pooled comparison, each runner's own rows (name -> rows) for the texts, and the
    complete legs' own regressions (own_regressions). `looks`: the pool's (pool.yaml `rounds`),
    never a leg's own figure."""
    used = [leg for leg in legs if leg.measured]
    if not used:
        why = "; ".join(f"{leg.name} {leg.state}: {leg.why}" for leg in legs)
        raise UsageError(
            f"no leg of the pool measured a round that can be judged ({why}); see each leg's log"
        )
    gates = gates.for_looks(looks)
    keys = list(dict.fromkeys(k for leg in used for k in leg.base.series if k in leg.head.series))
    own = {leg.name: leg_gates(gates, leg) for leg in used}
    judged = sum(
        any(own[leg.name].why_not_judged(*k, m.name) is None for leg in used for m in gates.metrics)
        for k in keys
    )
    gates = compare.enough_splits(gates, judged)
    own = {name: replace(g, permutations=gates.permutations) for name, g in own.items()}
    out, noise, seen = [], {}, {leg.name: [] for leg in legs}
    calibrated = {leg.name: leg.calibrated_mde for leg in used}
    for i, key in enumerate(keys):
        entries: list[list[_Entry]] = [[] for _ in gates.metrics]
        for j, leg in enumerate(used):
            if key not in leg.base.series or key not in leg.head.series:
                continue
            # The first runner draws as its own ab did: a pool of one is that runner's verdict.
            rng = np.random.default_rng([gates.seed, i] if j == 0 else [gates.seed, i, j])
            tests: dict[int, tuple] = {}
            b, h = leg.base.series[key], leg.head.series[key]
            rows = series_rows(key, b, h, own[leg.name], rng, tests, leg.design)
            for k, row in enumerate(rows):
                entries[k].append(_Entry(leg.name, row, tests[id(row)][2] if id(row) in tests else None))
        for m, metric_entries in zip(gates.metrics, entries, strict=True):
            if metric_entries:
                row, spread, weights, basis = _pooled(m, metric_entries, gates, calibrated)
                out.append(row)
                if spread is not None:
                    noise[id(row)] = spread
                for e, w in zip(metric_entries, weights, strict=True):
                    seen[e.leg].append(
                        SeenRow(e.row.series, e.row.metric, e.row.ratio, e.row.gated, round(w, 4), basis)
                    )
    confidence = family.correct(out, gates, noise)
    alone = own_regressions(legs, out)
    order = {m.name: i for i, m in enumerate(gates.metrics)}
    out.sort(key=lambda r: (order[r.metric], r.scenario, r.client))
    merged = [_merged(side, used) for side in ("base", "head")]
    comparison = compare.Comparison(
        merged[0], merged[1], gates, out, [], used[0].design, confidence=confidence
    )
    # a series some runner gates and none judged (a row no runner's calibration guards is reported)
    comparison.unjudged = compare.unjudged(
        out,
        gates,
        lambda key, metric: any(own[leg.name].why_not_judged(*key, metric) is None for leg in used),
    )
    return comparison, seen, alone


def own_regressions(legs: list[Leg], rows: list[MetricResult]) -> list[Alone]:
    """A complete leg's own regression is not averaged away. Where a complete leg's own
    verdict (its `ab`'s test of a series × metric it gates: significant at the family level
    it used alone, and a point estimate at least the threshold) is a regression, the pool's
    gated row of that series × metric is a regression too, whatever the pooled estimate, and
    its reason names the runner ("runner b alone: P99 +30.0%"). One record per runner and
    row, `decided` when the pooled test alone would not have said regression."""
    by_key = {(r.scenario, r.client, r.metric): r for r in rows if r.gated}
    found: list[tuple[MetricResult, Alone]] = []
    for leg in legs:
        if leg.state != COMPLETE or not leg.measured:
            continue
        for own in leg.verdict.results:
            row = by_key.get((own.scenario, own.client, own.metric))
            if row is None or not own.gated or own.verdict != REGRESSION:
                continue
            ci = list(own.ci) if own.ci is not None else None
            found.append(
                (
                    row,
                    Alone(
                        leg.name,
                        row.series,
                        row.metric,
                        own.ratio,
                        ci,
                        own.p_adjusted,
                        row.ratio,
                        row.verdict,
                        decided=row.verdict != REGRESSION,
                    ),
                )
            )
    for row, _ in found:
        named = [a for r, a in found if r is row]
        if row.verdict == REGRESSION:
            continue
        row.verdict, row.settle_runs = REGRESSION, None
        pooled = f"; pooled over the runners {metrics.fmt_change(row.ratio)}" if row.ratio is not None else ""
        row.reason = "; ".join(alone_text(a) for a in named) + pooled
    return [a for _, a in found]


def alone_text(a: Alone) -> str:
    """ "runner b alone: P99 +30.0%": a runner's own regression, in the pool's words."""
    change = metrics.fmt_change(a.ratio) if a.ratio is not None else "regressed"
    return f"runner {a.runner} alone: {metrics.label(a.metric)} {change}"


def _pooled(
    m, entries: list[_Entry], gates: Gates, calibrated: dict[str, dict[str, float]]
) -> tuple[MetricResult, tuple | None, list[float], str]:
    """One series × metric over the runners: judged by the runners that gate it (all that
    tested it, when none does); the weights each runner got (0: not used) and where they came
    from (strata.CALIBRATED: each judge's calibrated MDE; strata.EQUAL)."""
    judges = [e for e in entries if e.row.gated] or [e for e in entries if e.test is not None] or entries
    first = entries[0].row
    row = MetricResult(
        scenario=first.scenario,
        client=first.client,
        metric=first.metric,
        gated=any(e.row.gated for e in entries),
        base_runs=sum(e.row.base_runs for e in judges),
        head_runs=sum(e.row.head_runs for e in judges),
        min_samples=min(e.row.min_samples for e in judges),
        threshold=first.threshold,
    )
    if m.gated and not row.gated:
        row.why_not_gated = row.reason = "; ".join(
            f"{e.leg}: {e.row.why_not_gated or e.row.reason}" for e in entries
        )
    weights = [0.0] * len(entries)
    if m.kind == "errors":
        runs = np.array([e.row.base_runs + e.row.head_runs for e in judges], dtype=float)
        row.base_value = float(np.average([e.row.base_value for e in judges], weights=runs))
        row.head_value = float(np.average([e.row.head_value for e in judges], weights=runs))
        row.ratio = row.head_value / row.base_value if row.base_value > 0 else None
        # The failure row (failures.py) is a count, not a test: the pool's is its worst runner's
        # (a base that failed anywhere: invalid; else a head that failed anywhere: regression),
        # each such runner named.
        worst = min(judges, key=lambda e: _FAILURE_ORDER.get(e.row.verdict, 2))
        row.verdict = worst.row.verdict
        said = [f"{e.leg}: {e.row.reason}" for e in judges if e.row.verdict == row.verdict and e.row.reason]
        row.reason = "; ".join(said) or row.reason
        if row.verdict == NOT_GATED:
            row.gated = False
        weights = [float(e in judges) / len(judges) for e in entries]
        return row, None, weights, "runs"
    if m.kind == "memory" and all(isinstance(e.test, memory_stats.Difference) for e in judges):
        # Differences in bytes per order, not log ratios: one weighted mean of the runners'
        # differences (memory.pooled), its weights fixed before the data as the ratios' are
        # (each runner's calibrated MDE, in bytes per order here; else equal).
        key = f"{first.series} {first.metric}"
        fixed, basis = strata.fixed_weights([calibrated.get(e.leg, {}).get(key) for e in judges])
        d = memory_stats.pooled([e.test for e in judges], [float(x) for x in fixed])
        for e, wi in zip(judges, fixed, strict=True):
            weights[entries.index(e)] = float(wi)
        row.base_value, row.head_value, row.p_value = d.base_mean, d.head_mean, d.p_value
        row.ci = memory_stats.interval(d, gates.confidence)
        return row, (d.se, 0.0, d), weights, basis
    tests = [e.test for e in judges]
    if any(t is None for t in tests):
        untested = [e for e in judges if e.test is None]
        row.verdict = (
            NOT_GATED if all(e.row.verdict == NOT_GATED for e in untested) else untested[0].row.verdict
        )
        row.reason = row.reason or "; ".join(f"{e.leg}: {e.row.reason}" for e in untested)
        if row.verdict == NOT_GATED:
            row.gated = False
        _shown(row, judges, [1.0 / len(judges)] * len(judges))
        return row, None, weights, strata.EQUAL
    key = f"{first.series} {first.metric}"
    mdes = [calibrated.get(e.leg, {}).get(key) for e in judges]
    c = strata.combine(tests, [math.log(x) if x else None for x in mdes])
    for e, w in zip(judges, c.weights, strict=True):
        weights[entries.index(e)] = w
    _shown(row, judges, c.weights)
    # p, interval and MDE noise as one runner's row gets them: a pool of one is that runner's
    # verdict; several round-level t's are one t (strata.t_sum: the weighted estimate, its
    # standard error, Welch–Satterthwaite's degrees of freedom), whose Student's interval and
    # p agree and whose shown values are the same weighted geometric means as _shown's;
    # permutation strata: the product of their nulls and the stratified bootstrap.
    spread = _tested(row, c.tested, gates)
    return row, spread, weights, c.basis


# The failure row's verdicts, worst first (no change: 2); not gated only where none judged it.
_FAILURE_ORDER = {INVALID: 0, REGRESSION: 1, NOT_GATED: 3}


def _shown(row: MetricResult, entries: list[_Entry], weights) -> None:
    """The pool's shown values: the runners' values, averaged as the test weighs them."""
    row.base_value = strata.weighted_geomean([e.row.base_value for e in entries], weights)
    row.head_value = strata.weighted_geomean([e.row.head_value for e in entries], weights)
    if row.base_value and row.head_value is not None:
        row.ratio = row.head_value / row.base_value


def _merged(side: str, legs: list[Leg]) -> Side:
    """Every runner's runs of one side; the commit and suite are the legs' (the same)."""
    out = Side(side)
    for leg in legs:
        s = leg.base if side == "base" else leg.head
        out.runs += s.runs
        out.meta = out.meta or dict(s.meta)
    return out
