"""The family of a comparison's tests: each series × metric's row (verdict.py's MetricResult), Holm within
each family, the minimum detectable effect at the family's first Holm level, then each
metric's verdict (rules.classify).

The failure row (failures.py) is a count, not a test: it never enters the family, and its
verdict is set where it is counted (compare.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..answers import INCONCLUSIVE, NOT_GATED, settle_text
from ..verdict import MetricResult
from . import clustered, stats
from . import memory as memory_stats
from .rules import classify, detectable_effect, gate_detectable_effect, rounds_to_settle

if TYPE_CHECKING:
    from .gates import Gates, MetricGate


def correct(results: list[MetricResult], gates: Gates, noise: dict[int, tuple]) -> float | None:
    """Holm within each family (gated latency/throughput, reported-only), the MDE, the
    intervals the decision uses, the verdicts. Returns the intervals' confidence (None: no
    row tested).

    The interval shown is the decision's: at the gated family's Bonferroni level, 1 - alpha /
    (rows in the family) after the looks, for every tested row (one level, one label). An
    interval that excludes 1 is then significant after Holm too, so "no change" (the interval
    inside the band and holding 1) is never said of a row the test finds changed, and an
    interval at the looks' level alone (1 - 0.05 / 3) no longer reads "+2.5 % (+1.0 … +4.1 %)
    no change" (issue 60)."""
    testable = [r for r in results if r.p_value is not None and r.verdict != NOT_GATED]
    families = [[r for r in testable if r.gated == g] for g in (True, False)]
    leading = next((f for f in families if f), [])
    shown = gates.metric(leading[0].metric).alpha / len(leading) if leading else None
    for family in families:
        for r, adj in zip(family, stats.holm([r.p_value for r in family]), strict=True):
            r.p_adjusted = adj
            if id(r) in noise and gates.metric(r.metric).kind == "memory":
                _memory_bars(r, noise[id(r)][2], gates.metric(r.metric), len(family), shown, gates)
            elif id(r) in noise:
                sd, smallest_p, *test = noise[id(r)]
                level = gates.metric(r.metric).alpha / len(family)
                df = test[0].df if test else 0
                r.mde = detectable_effect(sd, level, smallest_p=smallest_p, df=df)
                threshold = gates.metric(r.metric).threshold
                r.fails_at = gate_detectable_effect(sd, level, threshold, smallest_p=smallest_p, df=df)
                if test and shown is not None:
                    r.ci = decision_interval(test[0], 1.0 - shown) or r.ci
    for r in testable:
        r.verdict, why = _verdict(r, gates.metric(r.metric))
        r.reason = why or r.reason
    return None if shown is None else 1.0 - shown


def _memory_bars(
    r: MetricResult, d, m: MetricGate, family_size: int, shown: float | None, gates: Gates
) -> None:
    """A memory row's MDE and "could detect" in bytes per order (memory.detectable) and its
    interval at the decision's level: a difference, where the other rows' are ratios."""
    level = m.alpha / family_size
    r.mde = memory_stats.detectable(d.se, d.df, level)
    r.fails_at = memory_stats.detectable(d.se, d.df, level, m.threshold)
    confidence = 1.0 - shown if shown is not None else gates.confidence
    r.ci = memory_stats.interval(d, confidence) or r.ci


def decision_interval(t, confidence: float) -> tuple[float, float] | None:
    """A test's interval at `confidence`: Student's about a round-level t's estimate, or the
    bootstrap replicates' expanded percentiles (designs.Tested); None when it carries neither."""
    if getattr(t, "df", 0) > 0:
        return clustered.t_interval(t.observed, t.se, t.df, confidence)
    replicates = getattr(t, "replicates", None)
    if replicates is None or not len(replicates):
        return None
    return stats.ratio_interval(replicates, confidence, t.n)


def _verdict(r: MetricResult, m: MetricGate) -> tuple[str, str | None]:
    if min(r.base_runs, r.head_runs) < m.min_repeats:
        return INCONCLUSIVE, f"{min(r.base_runs, r.head_runs)} repeats < min_repeats {m.min_repeats}"
    if m.kind == "memory":
        return _memory_verdict(r, m)
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
    return verdict, f"the interval is not inside {band}: {settle_text(r.settle_runs)}"


def _memory_verdict(r: MetricResult, m: MetricGate) -> tuple[str, str | None]:
    """A memory row's answer: head − base bytes per order against ±threshold (memory.classify)."""
    extra = memory_stats.extra(r)
    if extra is None or r.ci is None:
        return INCONCLUSIVE, "too few rounds with the server's memory read on both sides"
    # min_samples: the fewest orders a run measured, a little under the cell's (warm-up too)
    grain = memory_stats.resolution(r.min_samples)
    verdict = memory_stats.classify(
        extra, r.ci, r.p_adjusted, threshold=m.threshold, alpha=m.alpha, resolution=grain
    )
    if verdict != INCONCLUSIVE:
        return verdict, None
    r.settle_runs = memory_stats.rounds_to_settle(extra, r.ci, m.threshold, min(r.base_runs, r.head_runs))
    if r.settle_runs is None:
        return verdict, "the difference sits on the threshold: no number of rounds can settle it"
    band = f"±{m.threshold:,.0f} B/order"
    return verdict, f"the interval is not inside {band}: {settle_text(r.settle_runs)}"
