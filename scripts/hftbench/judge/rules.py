"""From a comparison's numbers to a verdict (stats.py computes the numbers): the minimum
detectable effect, the runs that would settle an inconclusive ratio, the three answers
(`classify`) and the failure message of a regression (`RegressionCheck.fails`). Pure."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import ndtri, stdtrit

from ..answers import FASTER, IMPROVEMENT, INCONCLUSIVE, NO_CHANGE, REGRESSION, SLOWER

POWER_Z = 0.8416  # one-sided normal quantile of 80 % power


def detectable_effect(noise_log_sd: float, level: float, smallest_p: float = 0.0, df: int = 0) -> float:
    """Smallest worse factor (1.06 = +6 %) a comparison with this noise flags with 80 % power.

    `noise_log_sd` is the bootstrap's standard deviation of log(ratio): each side resampled on
    its own, so it measures the noise whether or not there is an effect (a permutation null
    mixes the sides and would inflate it under a real effect). `level` is the p-value a flag
    must beat (alpha / family size: Holm's first step); the effect must clear the two-sided
    critical value plus 0.84 standard deviations. Infinite when these runs cannot reach
    `level` at all (`smallest_p`, the permutation test's floor). A round-level t (`df` > 0,
    clustered.py) takes Student's quantiles with its degrees of freedom for both.
    """
    if smallest_p >= level or not np.isfinite(noise_log_sd):
        return float("inf")
    if df > 0:
        critical, power = float(stdtrit(df, 1.0 - level / 2.0)), float(stdtrit(df, 0.8))
        return float(np.exp((critical + power) * noise_log_sd))
    critical = float(ndtri(1.0 - level / 2.0))
    return float(np.exp((critical + POWER_Z) * noise_log_sd))


def gate_detectable_effect(
    noise_log_sd: float, level: float, threshold: float, smallest_p: float = 0.0, df: int = 0
) -> float:
    """Smallest worse factor the *gate fails* with 80 % power: the estimate must be both
    significant at `level` and at least `threshold`, so the true effect must clear the larger
    of the two bars by the power quantile (exp(max(log threshold, critical * sd) + power * sd)).
    This is what "could detect" means in a verdict; detectable_effect is only the bar of
    significance, below the threshold whenever the noise is small."""
    if smallest_p >= level or not np.isfinite(noise_log_sd):
        return float("inf")
    if df > 0:
        critical, power = float(stdtrit(df, 1.0 - level / 2.0)), float(stdtrit(df, 0.8))
    else:
        critical, power = float(ndtri(1.0 - level / 2.0)), POWER_Z
    bar = max(float(np.log(threshold)), critical * noise_log_sd)
    return float(np.exp(bar + power * noise_log_sd))


def rounds_to_settle(
    ratio: float, interval: tuple[float, float], threshold: float, runs: int, *, lower_is_better: bool = True
) -> int | None:
    """Runs per side that would make an interval like this one clear the threshold.

    The interval's half-width (log scale) shrinks as 1/sqrt(runs); it must fit between the
    point estimate and the nearer bound (threshold or 1/threshold). None when the point sits
    on a bound: no number of runs can settle a ratio equal to the threshold.
    """
    if not (np.isfinite(ratio) and all(np.isfinite(interval))) or runs < 1:
        return None
    w = np.log(worse_factor(ratio, lower_is_better))
    lo, hi = sorted(np.log(worse_factor(x, lower_is_better)) for x in interval)
    half = max(hi - w, w - lo)
    bound = np.log(threshold)
    margin = min(abs(bound - w), abs(-bound - w))
    if margin <= 1e-9 or half <= 0:
        return None
    needed = int(np.ceil(runs * (half / margin) ** 2))
    return max(needed, runs + 1)


def worse_factor(ratio: float, lower_is_better: bool) -> float:
    """head/base turned into 'how many times worse' (> 1 is worse) for either direction."""
    return ratio if lower_is_better else (1.0 / ratio if ratio else float("inf"))


def classify(
    ratio: float,
    interval: tuple[float, float],
    p_adjusted: float,
    *,
    threshold: float,
    alpha: float,
    lower_is_better: bool = True,
) -> str:
    """Verdict for one series × metric.

    threshold: the minimal effect that matters, as a "worse" factor >= 1 (p99: 1.10 means
    head 10% slower; throughput: 1.10 means head 10% less throughput).
    """
    if not (np.isfinite(ratio) and all(np.isfinite(interval))):
        return INCONCLUSIVE
    w = worse_factor(ratio, lower_is_better)
    w_lo, w_hi = sorted(worse_factor(x, lower_is_better) for x in interval)
    significant = p_adjusted < alpha
    if significant and w >= threshold:
        return REGRESSION
    if significant and w <= 1.0 / threshold:
        return IMPROVEMENT
    if w_hi < threshold and w_lo > 1.0 / threshold:
        # Inside the band; a change is named, never called "no change": significant after the
        # family's correction, or the shown interval itself excluding 1 (the words match it).
        if (significant or w_lo > 1.0) and w > 1.0:
            return SLOWER
        if (significant or w_hi < 1.0) and w < 1.0:
            return FASTER
        return NO_CHANGE
    return INCONCLUSIVE


@dataclass(frozen=True)
class RegressionCheck:
    """One gated series × metric after the test (pytest-benchmark style: `fails()` says why)."""

    series: str  # "large/rust"
    metric: str  # "p99_us"
    ratio: float  # head / base
    interval: tuple[float, float]
    p_adjusted: float
    threshold: float
    verdict: str

    def fails(self) -> str | None:
        """The message when this check is a regression, else None."""
        if self.verdict != REGRESSION:
            return None
        lo, hi = self.interval
        return (
            f"{self.series} {self.metric}: head/base = {self.ratio:.3f} "
            f"(CI {lo:.3f}..{hi:.3f}, adjusted p = {self.p_adjusted:.2g}) "
            f"beyond the threshold {self.threshold:.2f}"
        )
