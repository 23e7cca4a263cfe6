"""`hftbench compare BASE HEAD`: every series × metric tested, one verdict, an exit status.

BASE and HEAD are run folders, folders of run folders, or (BASE only) a history store.
For each scenario × client present on both sides and each metric of gates.yaml:
ratio head/base, bootstrap interval, Mann-Whitney p (Holm-corrected over the gated family),
verdict (stats.classify). Exit 1 when a gated metric regressed, else 0.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from . import stats
from .compare_gates import Gates, MetricGate, load_gates
from .compare_sides import Repeat, SeriesKey, Side, is_store, load_side
from .history_store import write_atomic

VERDICT_SCHEMA_VERSION = 1


@dataclass
class MetricResult:
    scenario: str
    client: str
    metric: str  # gates.yaml name: "p99_us", "throughput_rps", "errors"
    gated: bool  # counts for the exit status (gates.yaml gated and enough samples)
    base_runs: int
    head_runs: int
    min_samples: int  # fewest samples in one run, both sides
    verdict: str = stats.INCONCLUSIVE  # REGRESSION | IMPROVEMENT | NO_CHANGE | INCONCLUSIVE | NOT_GATED
    ratio: float | None = None  # head / base (errors: head rate / base rate, None when base is 0)
    ci: tuple[float, float] | None = None  # bootstrap interval of the ratio (None: not computed)
    p_value: float | None = None  # Mann-Whitney two-sided, uncorrected
    p_adjusted: float | None = None  # Holm over the family (gated or reported-only)
    base_value: float | None = None  # merged-histogram quantile (us), mean throughput, mean error rate
    head_value: float | None = None
    reason: str | None = None  # why not gated / inconclusive, in words

    @property
    def series(self) -> str:
        return f"{self.scenario}/{self.client}"


@dataclass
class Comparison:
    base: Side
    head: Side
    gates: Gates
    results: list[MetricResult]

    @property
    def status(self) -> str:
        """regression > inconclusive > improvement > no_change, over the gated metrics."""
        verdicts = {r.verdict for r in self.results if r.gated}
        for status in (stats.REGRESSION, stats.INCONCLUSIVE, stats.IMPROVEMENT):
            if status in verdicts:
                return status
        return stats.NO_CHANGE

    @property
    def exit_code(self) -> int:
        return 1 if self.status == stats.REGRESSION else 0

    def checks(self) -> list[stats.RegressionCheck]:
        return [
            stats.RegressionCheck(
                r.series,
                r.metric,
                r.ratio,
                r.ci,
                r.p_adjusted,
                self.gates.metric(r.metric).threshold,
                r.verdict,
            )
            for r in self.results
            if r.gated and r.ratio is not None and r.ci is not None and r.p_adjusted is not None
        ]

    def needs_more_repeats(self) -> bool:
        return any(r.gated and r.verdict == stats.INCONCLUSIVE for r in self.results)

    def to_json(self) -> dict[str, Any]:
        return {
            "schema_version": VERDICT_SCHEMA_VERSION,
            "status": self.status,
            "exit_code": self.exit_code,
            "gates": self.gates.source,
            "base": {"label": self.base.label, "runs": self.base.runs, **_plain_meta(self.base.meta)},
            "head": {"label": self.head.label, "runs": self.head.runs, **_plain_meta(self.head.meta)},
            "flags": [
                {
                    "scenario": r.scenario,
                    "client": r.client,
                    "metric": r.metric,
                    "ratio": r.ratio,
                    "verdict": r.verdict,
                }
                for r in self.results
                if r.gated and r.verdict in (stats.REGRESSION, stats.IMPROVEMENT)
            ],
            "results": [asdict(r) for r in self.results],
        }


def _plain_meta(meta: dict[str, Any]) -> dict[str, Any]:
    return {k: meta.get(k) for k in ("suite", "commit", "branch", "runner")}


def compare_sides(base: Side, head: Side, gates: Gates) -> Comparison:
    """Test every series present on both sides; series on one side only are reported, not gated."""
    out: list[MetricResult] = []
    keys = [k for k in base.series if k in head.series]
    for i, key in enumerate(keys):
        out.extend(
            _series(key, base.series[key], head.series[key], gates, np.random.default_rng([gates.seed, i]))
        )
    for key in [*base.series, *head.series]:
        if key in base.series and key in head.series:
            continue
        where = "base" if key in base.series else "head"
        for m in gates.metrics:
            out.append(_missing(key, m, where, base.series.get(key, []), head.series.get(key, [])))
    _correct(out, gates)
    order = {m.name: i for i, m in enumerate(gates.metrics)}
    out.sort(key=lambda r: (order[r.metric], r.scenario, r.client))
    return Comparison(base, head, gates, out)


def _missing(key: SeriesKey, m: MetricGate, only: str, b: list[Repeat], h: list[Repeat]) -> MetricResult:
    return MetricResult(*key, m.name, False, len(b), len(h), 0, stats.NOT_GATED, reason=f"only in {only}")


def _series(key: SeriesKey, b: list[Repeat], h: list[Repeat], gates: Gates, rng) -> list[MetricResult]:
    with_hist = all(r.histogram and r.ok > 0 for r in (*b, *h))
    g = stats.grid([r.histogram for r in b], [r.histogram for r in h]) if with_hist else None
    results = []
    for m in gates.metrics:
        # Errors count every measured order; latency metrics only the successful ones.
        n = min(r.ok + r.errors if m.kind == "errors" else r.ok for r in (*b, *h))
        res = MetricResult(*key, m.name, m.gated, len(b), len(h), n)
        enough = n >= m.min_samples
        if m.kind == "quantile":
            _quantile(res, m, g, gates, rng, test=enough)
        elif m.kind == "throughput":
            _scalar(res, [r.throughput_rps for r in b], [r.throughput_rps for r in h], gates, rng)
        else:
            _errors(res, b, h)
        if res.verdict != stats.NOT_GATED and not enough:
            res.verdict, res.reason = stats.NOT_GATED, f"n too small: {n} samples in a run < {m.min_samples}"
        if res.verdict == stats.NOT_GATED:
            res.gated = False
        results.append(res)
    return results


def _quantile(res: MetricResult, m: MetricGate, g: stats.Grid | None, gates: Gates, rng, test: bool) -> None:
    """Merged quantiles and their ratio; the test and the interval only when `test`."""
    if g is None:
        res.verdict, res.reason = stats.NOT_GATED, "a run recorded no latency (every order failed)"
        return
    qb = stats.merged_quantile(g.values_ns, g.base, m.quantile)
    qh = stats.merged_quantile(g.values_ns, g.head, m.quantile)
    res.base_value, res.head_value, res.ratio = qb / 1000.0, qh / 1000.0, qh / qb
    if not test:
        return
    res.p_value = stats.mann_whitney_p(
        stats.per_run_quantiles(g.values_ns, g.base, m.quantile),
        stats.per_run_quantiles(g.values_ns, g.head, m.quantile),
    )
    res.ci = stats.bootstrap_quantile_ratio(
        g, m.quantile, n_boot=gates.bootstrap, confidence=gates.confidence, rng=rng
    )


def _scalar(res: MetricResult, b: list[float], h: list[float], gates: Gates, rng) -> None:
    mb, mh = float(np.mean(b)), float(np.mean(h))
    res.base_value, res.head_value = mb, mh
    res.ratio = mh / mb if mb > 0 else None
    res.p_value = stats.mann_whitney_p(b, h)
    res.ci = stats.bootstrap_mean_ratio(b, h, n_boot=gates.bootstrap, confidence=gates.confidence, rng=rng)


def _errors(res: MetricResult, b: list[Repeat], h: list[Repeat]) -> None:
    rb = [r.errors / max(1, r.ok + r.errors) for r in b]
    rh = [r.errors / max(1, r.ok + r.errors) for r in h]
    res.base_value, res.head_value = float(np.mean(rb)), float(np.mean(rh))
    res.ratio = res.head_value / res.base_value if res.base_value > 0 else None
    res.p_value = stats.mann_whitney_p(rb, rh)


def _correct(results: list[MetricResult], gates: Gates) -> None:
    """Holm within each family (gated latency/throughput, reported-only), then the verdicts.

    The error rate is a correctness check, not a noisy measurement, so it is tested on its
    own (uncorrected): a head that fails orders in every run must not hide behind the family.
    """
    testable = [r for r in results if r.p_value is not None and r.verdict != stats.NOT_GATED]
    errors = [r for r in testable if r.metric == "errors"]
    families = [[r for r in testable if r.metric != "errors" and r.gated == g] for g in (True, False)]
    for family in families:
        for r, adj in zip(family, stats.holm([r.p_value for r in family]), strict=True):
            r.p_adjusted = adj
    for r in errors:
        r.p_adjusted = r.p_value
    for r in testable:
        r.verdict, r.reason = _verdict(r, gates.metric(r.metric))


def _verdict(r: MetricResult, m: MetricGate) -> tuple[str, str | None]:
    if min(r.base_runs, r.head_runs) < m.min_repeats:
        return stats.INCONCLUSIVE, f"{min(r.base_runs, r.head_runs)} repeats < min_repeats {m.min_repeats}"
    if m.kind == "errors":
        diff = r.head_value - r.base_value
        if r.p_adjusted < m.alpha and abs(diff) >= m.threshold:
            return (stats.REGRESSION if diff > 0 else stats.IMPROVEMENT), None
        if abs(diff) < m.threshold:
            return stats.NO_CHANGE, None
        return stats.INCONCLUSIVE, "error rates differ but not significantly"
    if r.ratio is None or r.ci is None:
        return stats.INCONCLUSIVE, "base value is zero"
    verdict = stats.classify(
        r.ratio, r.ci, r.p_adjusted, threshold=m.threshold, alpha=m.alpha, lower_is_better=m.lower_is_better
    )
    reason = (
        "interval reaches the threshold; more repeats can tell" if verdict == stats.INCONCLUSIVE else None
    )
    return verdict, reason


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
    from .compare_render import markdown, print_console

    comparison = run_compare(
        args.base, args.head, load_gates(args.gates), branch=args.branch, runner=args.runner, last=args.last
    )
    if args.json_out:
        write_atomic(args.json_out, json.dumps(comparison.to_json(), indent=2) + "\n")
    if args.summary:
        write_atomic(args.summary, markdown(comparison))
    print_console(comparison)
    return comparison.exit_code
