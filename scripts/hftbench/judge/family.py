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
from . import stats
from .rules import classify, detectable_effect, gate_detectable_effect, rounds_to_settle

if TYPE_CHECKING:
    from .gates import Gates, MetricGate


def correct(results: list[MetricResult], gates: Gates, noise: dict[int, tuple]) -> None:
    """Holm within each family (gated latency/throughput, reported-only), the MDE, the verdicts."""
    testable = [r for r in results if r.p_value is not None and r.verdict != NOT_GATED]
    families = [[r for r in testable if r.gated == g] for g in (True, False)]
    for family in families:
        for r, adj in zip(family, stats.holm([r.p_value for r in family]), strict=True):
            r.p_adjusted = adj
            if id(r) in noise:
                sd, smallest_p, *test = noise[id(r)]
                level = gates.metric(r.metric).alpha / len(family)
                df = test[0].df if test else 0
                r.mde = detectable_effect(sd, level, smallest_p=smallest_p, df=df)
                threshold = gates.metric(r.metric).threshold
                r.fails_at = gate_detectable_effect(sd, level, threshold, smallest_p=smallest_p, df=df)
    for r in testable:
        r.verdict, why = _verdict(r, gates.metric(r.metric))
        r.reason = why or r.reason


def _verdict(r: MetricResult, m: MetricGate) -> tuple[str, str | None]:
    if min(r.base_runs, r.head_runs) < m.min_repeats:
        return INCONCLUSIVE, f"{min(r.base_runs, r.head_runs)} repeats < min_repeats {m.min_repeats}"
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
