"""The family of a comparison's tests: each series × metric's row (MetricResult), Holm within
each family, the minimum detectable effect at the family's first Holm level, then each
metric's verdict (verdict_rules.classify).

The error rate is a correctness check, not a noisy measurement, so it is tested on its own
(uncorrected): a head that fails orders in every run must not hide behind the family.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..verdicts import IMPROVEMENT, INCONCLUSIVE, NO_CHANGE, NOT_GATED, REGRESSION, settle_text
from . import stats
from .verdict_rules import classify, detectable_effect, rounds_to_settle

if TYPE_CHECKING:
    from .gates import Gates, MetricGate


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
    # Why not gated, kept apart: an ungated row's verdict may put its own reason in `reason`.
    why_not_gated: str | None = None
    # Smallest worse factor this comparison would flag with 80 % power (1.06 = +6 %);
    # None when not tested, inf when these runs cannot reach significance at all.
    mde: float | None = None
    settle_runs: int | None = None  # inconclusive: runs per side that would likely decide it

    @property
    def series(self) -> str:
        return f"{self.scenario}/{self.client}"


def correct(results: list[MetricResult], gates: Gates, noise: dict[int, tuple]) -> None:
    """Holm within each family (gated latency/throughput, reported-only), the MDE, the verdicts."""
    testable = [r for r in results if r.p_value is not None and r.verdict != NOT_GATED]
    errors = [r for r in testable if r.metric == "errors"]
    families = [[r for r in testable if r.metric != "errors" and r.gated == g] for g in (True, False)]
    for family in families:
        for r, adj in zip(family, stats.holm([r.p_value for r in family]), strict=True):
            r.p_adjusted = adj
            if id(r) in noise:
                sd, smallest_p, *test = noise[id(r)]
                level = gates.metric(r.metric).alpha / len(family)
                df = test[0].df if test else 0
                r.mde = detectable_effect(sd, level, smallest_p=smallest_p, df=df)
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
    return verdict, f"the interval is not inside {band}: {settle_text(r.settle_runs)}"
