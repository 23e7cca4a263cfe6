"""`hftbench compare BASE HEAD`: every series × metric tested, one verdict, an exit status.

BASE and HEAD are run folders, folders of run folders, or (BASE only) a history store.
For each scenario × client present on both sides and each metric of gates.yaml:
ratio head/base of the pooled histograms, expanded bootstrap interval over runs,
permutation p over runs (Holm-corrected over the gated family), the minimum detectable
effect at this noise, verdict (verdict_rules.classify). Exit 1 when a gated metric regressed, else 0.
Why these statistics: stats.py.
"""

from __future__ import annotations

import json
import sys
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from . import drift, paths, stats, verdict_text
from .compare_gates import Gates, MetricGate, load_gates
from .compare_sides import SeriesKey, Side, is_store, load_side
from .fsio import write_atomic
from .series import Repeat, Series
from .verdict_rules import RegressionCheck, classify, detectable_effect, rounds_to_settle
from .verdicts import IMPROVEMENT, INCONCLUSIVE, NO_CHANGE, NOT_GATED, REGRESSION

VERDICT_SCHEMA_VERSION = 1


@dataclass
class MetricResult:
    scenario: str
    client: str
    metric: str  # gates.yaml name: "p99_us", "throughput_rps", "errors"
    gated: bool  # counts for the exit status (gates.yaml gated, enough samples, a gated scenario)
    base_runs: int
    head_runs: int
    min_samples: int  # fewest samples in one run, both sides
    threshold: float | None = None  # gates.yaml's smallest effect that matters, for the text
    verdict: str = INCONCLUSIVE  # REGRESSION | IMPROVEMENT | NO_CHANGE | INCONCLUSIVE | NOT_GATED
    ratio: float | None = None  # head / base (errors: head rate / base rate, None when base is 0)
    ci: tuple[float, float] | None = None  # bootstrap interval of the ratio (None: not computed)
    p_value: float | None = None  # permutation test over runs, two-sided, uncorrected
    p_adjusted: float | None = None  # Holm over the family (gated or reported-only)
    base_value: float | None = None  # pooled quantile (us), pooled throughput (series.py), mean error rate
    head_value: float | None = None
    reason: str | None = None  # why not gated / inconclusive, in words
    # Smallest worse factor this comparison would flag with 80 % power (1.06 = +6 %);
    # None when not tested, inf when these runs cannot reach significance at all.
    mde: float | None = None
    settle_runs: int | None = None  # inconclusive: runs per side that would likely decide it

    @property
    def series(self) -> str:
        return f"{self.scenario}/{self.client}"


@dataclass
class Comparison:
    base: Side
    head: Side
    gates: Gates
    results: list[MetricResult]
    # A soak's drift in head (drift.py): last tenth against first; gated like a metric.
    drift: list[drift.DriftResult] = field(default_factory=list)

    @property
    def status(self) -> str:
        """regression > inconclusive > improvement > no_change, over the gated metrics and drifts."""
        verdicts = {r.verdict for r in [*self.results, *self.drift] if r.gated}
        for status in (REGRESSION, INCONCLUSIVE, IMPROVEMENT):
            if status in verdicts:
                return status
        return NO_CHANGE

    @property
    def exit_code(self) -> int:
        return 1 if self.status == REGRESSION else 0

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
        """One message per gated metric that regressed (RegressionCheck.fails)."""
        return [msg for msg in (check.fails() for check in self.checks()) if msg]

    def needs_more_repeats(self) -> bool:
        return any(r.gated and r.verdict == INCONCLUSIVE for r in self.results)

    def to_json(self) -> dict[str, Any]:
        return {
            "schema_version": VERDICT_SCHEMA_VERSION,
            "status": self.status,
            "exit_code": self.exit_code,
            "gates": paths.shown(self.gates.source),
            "confidence": self.gates.confidence,
            "looks": self.gates.looks,
            "suite": self.head.meta.get("suite") or self.base.meta.get("suite"),
            "base": {"runs": len(self.base.runs), "run_ids": self.base.runs, **_plain_meta(self.base.meta)},
            "head": {"runs": len(self.head.runs), "run_ids": self.head.runs, **_plain_meta(self.head.meta)},
            "flags": [
                {
                    "scenario": r.scenario,
                    "client": r.client,
                    "metric": r.metric,
                    "ratio": r.ratio,
                    "verdict": r.verdict,
                }
                for r in self.results
                if r.gated and r.verdict in (REGRESSION, IMPROVEMENT)
            ]
            + [
                {
                    "scenario": r.scenario,
                    "client": r.client,
                    "metric": f"{r.metric}_drift",
                    "ratio": r.ratio,
                    "verdict": r.verdict,
                }
                for r in self.drift
                if r.gated and r.verdict == REGRESSION
            ],
            "results": [asdict(r) for r in self.results],
            "drift": [asdict(r) for r in self.drift],
        }


def _plain_meta(meta: dict[str, Any]) -> dict[str, Any]:
    return {k: meta.get(k) for k in ("commit", "branch", "runner")}


def compare_sides(base: Side, head: Side, gates: Gates) -> Comparison:
    """Test every series present on both sides; series on one side only are reported, not gated."""
    out: list[MetricResult] = []
    noise: dict[int, tuple[float, float]] = {}  # id(result) -> (bootstrap log sd, smallest p): the MDE
    keys = [k for k in base.series if k in head.series]
    gates = _enough_splits(gates, sum(gates.gates_series(*k) for k in keys))
    for i, key in enumerate(keys):
        rng = np.random.default_rng([gates.seed, i])
        out.extend(_series(key, base.series[key], head.series[key], gates, rng, noise))
    for key in [*base.series, *head.series]:
        if key in base.series and key in head.series:
            continue
        where = "base" if key in base.series else "head"
        for m in gates.metrics:
            out.append(_missing(key, m, where, base.series.get(key, []), head.series.get(key, [])))
    _correct(out, gates, noise)
    order = {m.name: i for i, m in enumerate(gates.metrics)}
    out.sort(key=lambda r: (order[r.metric], r.scenario, r.client))
    return Comparison(base, head, gates, out, drift.soak_drift(head, gates))


def _enough_splits(gates: Gates, gated_series: int) -> Gates:
    """Gates whose permutation test can resolve the family's strictest level: a p-value is
    at least 1 / (1 + splits), so the splits must reach well below alpha / family size."""
    tested = [m for m in gates.metrics if m.gated and m.kind != "errors"]
    if not tested or not gated_series:
        return gates
    level = min(m.alpha for m in tested) / (gated_series * len(tested))
    return replace(gates, permutations=max(gates.permutations, int(np.ceil(2 / level))))


def _missing(key: SeriesKey, m: MetricGate, only: str, b: list[Repeat], h: list[Repeat]) -> MetricResult:
    scenario, client = key
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


def _series(
    key: SeriesKey, b: list[Repeat], h: list[Repeat], gates: Gates, rng, noise: dict[int, tuple[float, float]]
) -> list[MetricResult]:
    with_hist = all(r.histogram and r.ok > 0 for r in (*b, *h))
    sides = Series(*key, tuple(b)), Series(*key, tuple(h))  # the shown numbers (series.py)
    gated_series = gates.gates_series(*key)
    g = stats.grid([r.histogram for r in b], [r.histogram for r in h]) if with_hist else None
    results = []
    for m in gates.metrics:
        # Errors count every measured order; latency metrics only the successful ones.
        n = min(r.ok + r.errors if m.kind == "errors" else r.ok for r in (*b, *h))
        res = MetricResult(
            scenario=key[0],
            client=key[1],
            metric=m.name,
            gated=m.gated and gated_series,
            base_runs=len(b),
            head_runs=len(h),
            min_samples=n,
            threshold=m.threshold,
        )
        enough = n >= m.min_samples
        if m.kind == "quantile":
            spread = _quantile(res, m, g, sides, gates=gates, rng=rng, test=enough)
        elif m.kind == "throughput":
            spread = _throughput(res, *sides, gates, rng)
        else:
            spread = None
            _errors(res, b, h)
        if spread is not None:
            noise[id(res)] = spread
        if res.verdict != NOT_GATED and not enough:
            res.verdict, res.reason = NOT_GATED, f"n too small: {n} samples in a run < {m.min_samples}"
        if res.verdict == NOT_GATED:
            res.gated = False
        if m.gated and not gated_series and res.reason is None:
            res.reason = "reported only: the scenario measures the host, not the server (gates.yaml series)"
        results.append(res)
    return results


def _quantile(
    res: MetricResult,
    m: MetricGate,
    g: stats.Grid | None,
    sides: tuple[Series, Series],
    *,
    gates: Gates,
    rng,
    test: bool,
) -> tuple[float, float] | None:
    """Pooled quantiles (series.py) and their ratio; the test and the interval (over g's
    per-run counts) only when `test`. Returns the noise for the MDE: (bootstrap sd of log
    ratio, the test's smallest p)."""
    if g is None:
        res.verdict, res.reason = NOT_GATED, "a run recorded no latency (every order failed)"
        return None
    qb, qh = (s.quantile_us(m.quantile) for s in sides)
    res.base_value, res.head_value, res.ratio = qb, qh, qh / qb
    if not test:
        return None
    perm = stats.permutation_quantile_test(g, m.quantile, n_perm=gates.permutations, rng=rng)
    res.p_value = perm.p_value
    reps = stats.bootstrap_ratio_replicates(g, m.quantile, n_boot=gates.bootstrap, rng=rng)
    res.ci = stats.ratio_interval(reps, gates.confidence, min(len(g.base), len(g.head)))
    return stats.log_sd(reps), perm.smallest_p


def _throughput(res: MetricResult, base: Series, head: Series, gates: Gates, rng) -> tuple[float, float]:
    """The shown values and ratio are each side's pooled throughput (series.py); the test and
    the interval are over the per-run rates (stats.py: runs are the unit of replication)."""
    mb, mh = base.throughput_rps() or 0.0, head.throughput_rps() or 0.0
    res.base_value, res.head_value = mb, mh
    res.ratio = mh / mb if mb > 0 else None
    b, h = base.repeat_throughputs(), head.repeat_throughputs()
    perm = stats.permutation_mean_test(b, h, n_perm=gates.permutations, rng=rng)
    res.p_value = perm.p_value
    reps = stats.bootstrap_mean_replicates(b, h, n_boot=gates.bootstrap, rng=rng)
    res.ci = stats.ratio_interval(reps, gates.confidence, min(len(b), len(h)))
    return stats.log_sd(reps), perm.smallest_p


def _errors(res: MetricResult, b: list[Repeat], h: list[Repeat]) -> None:
    rb = [r.errors / max(1, r.ok + r.errors) for r in b]
    rh = [r.errors / max(1, r.ok + r.errors) for r in h]
    res.base_value, res.head_value = float(np.mean(rb)), float(np.mean(rh))
    res.ratio = res.head_value / res.base_value if res.base_value > 0 else None
    res.p_value = stats.mann_whitney_p(rb, rh)


def _correct(results: list[MetricResult], gates: Gates, noise: dict[int, tuple[float, float]]) -> None:
    """Holm within each family (gated latency/throughput, reported-only), the minimum
    detectable effect at the family's first Holm level, then the verdicts.

    The error rate is a correctness check, not a noisy measurement, so it is tested on its
    own (uncorrected): a head that fails orders in every run must not hide behind the family.
    """
    testable = [r for r in results if r.p_value is not None and r.verdict != NOT_GATED]
    errors = [r for r in testable if r.metric == "errors"]
    families = [[r for r in testable if r.metric != "errors" and r.gated == g] for g in (True, False)]
    for family in families:
        for r, adj in zip(family, stats.holm([r.p_value for r in family]), strict=True):
            r.p_adjusted = adj
            if id(r) in noise:
                sd, smallest_p = noise[id(r)]
                level = gates.metric(r.metric).alpha / len(family)
                r.mde = detectable_effect(sd, level, smallest_p=smallest_p)
    for r in errors:
        r.p_adjusted = r.p_value
    for r in testable:
        r.verdict, why = _verdict(r, gates.metric(r.metric))
        r.reason = why or r.reason


def _verdict(r: MetricResult, m: MetricGate) -> tuple[str, str | None]:
    if min(r.base_runs, r.head_runs) < m.min_repeats:
        return INCONCLUSIVE, f"{min(r.base_runs, r.head_runs)} repeats < min_repeats {m.min_repeats}"
    if m.kind == "errors":
        diff = r.head_value - r.base_value
        if r.p_adjusted < m.alpha and abs(diff) >= m.threshold:
            return (REGRESSION if diff > 0 else IMPROVEMENT), None
        if abs(diff) < m.threshold:
            return NO_CHANGE, None
        return INCONCLUSIVE, "error rates differ but not significantly"
    if r.ratio is None or r.ci is None:
        return INCONCLUSIVE, "base value is zero"
    verdict = classify(
        r.ratio, r.ci, r.p_adjusted, threshold=m.threshold, alpha=m.alpha, lower_is_better=m.lower_is_better
    )
    if verdict != INCONCLUSIVE:
        return verdict, None
    runs = min(r.base_runs, r.head_runs)
    r.settle_runs = rounds_to_settle(r.ratio, r.ci, m.threshold, runs, lower_is_better=m.lower_is_better)
    if r.settle_runs is None:
        return verdict, "the ratio sits on the threshold: no number of runs can settle it"
    band = f"{100 * (1 / m.threshold - 1):+.1f}% … {100 * (m.threshold - 1):+.1f}%"
    return verdict, f"the interval is not inside {band}: about {r.settle_runs} runs a side would settle it"


def run_compare(
    base_path: Path,
    head_path: Path,
    gates: Gates,
    *,
    branch: str | None = "main",
    runner: str | None = None,
    last: int = 10,
) -> Comparison:
    """Load both sides (a store BASE takes suite and runner from HEAD) and compare."""
    head = load_side(head_path)
    if is_store(base_path):
        base = load_side(
            base_path,
            suite=head.meta.get("suite"),
            branch=branch,
            runner=runner or head.meta.get("runner"),
            last=last,
        )
    else:
        base = load_side(base_path)
    return compare_sides(base, head, gates)


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "compare",
        help="compare two sets of runs (or a run against the history store): verdict, exit 1 on regression",
        description=__doc__,
    )
    p.add_argument("base", type=Path, help="run folder, folder of run folders, or history store")
    p.add_argument("head", type=Path, help="run folder or folder of run folders")
    p.add_argument("--gates", type=Path, default=None, help="gates file (default bench-config/gates.yaml)")
    p.add_argument("--summary", type=Path, help="write the markdown summary here (job summary, PR comment)")
    p.add_argument("--json", type=Path, dest="json_out", help="write verdict.json here")
    p.add_argument("--branch", default="main", help="store baseline: runs of this branch (default main)")
    p.add_argument("--runner", help="store baseline: runner fingerprint id (default: the head run's)")
    p.add_argument(
        "--last", type=int, default=10, help="store baseline: the last N matching runs (default 10)"
    )
    p.set_defaults(func=main)


def main(args) -> int:
    comparison = run_compare(
        args.base, args.head, load_gates(args.gates), branch=args.branch, runner=args.runner, last=args.last
    )
    doc = comparison.to_json()
    if args.json_out:
        write_atomic(args.json_out, json.dumps(doc, indent=2) + "\n")
    if args.summary:
        write_atomic(args.summary, verdict_text.markdown(doc))
    verdict_text.print_console(doc)
    for message in comparison.failures():
        print(f"hftbench compare: {message}", file=sys.stderr)
    return comparison.exit_code
