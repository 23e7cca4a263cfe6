"""How independent calibrate's evidence is (issue 62, item 5): how many distinct draws of k
rounds a pool holds, contiguous windows in the order measured, the lag-1 autocorrelation of
the rounds' log ratios, and the dispersion of independent A/A sessions' z-scores. Pure
functions; calibration_draws.py and calibrate_text.py say what they found."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.special import chdtri, ndtri  # scipy.stats' chi2 and norm, without its import cost

# A rate over draws means something only when draws can differ enough: at n >= 3k two random
# draws share on average a third of their rounds; at n == k every draw is the same set.
MIN_POOL_PER_DRAW = 3


def distinct_draws(n: int, k: int, comparisons: int) -> int:
    """How many different sets `comparisons` random draws of k of n rounds can be, at most:
    C(n, k), bounded by the draws made. 1 when n == k: every draw is the whole pool."""
    if k > n or k < 1:
        return 0
    return min(math.comb(n, k), comparisons)


def rate_is_independent(n: int, k: int) -> bool:
    """A detection rate over draws is reported as a rate only from a pool >= 3x the draw."""
    return k >= 1 and n >= MIN_POOL_PER_DRAW * k


def time_windows(n: int, k: int) -> list[range]:
    """Contiguous windows of k rounds in the order measured, not overlapping: n // k of them
    (the rounds past the last whole window are left out)."""
    if k < 1:
        return []
    return [range(start, start + k) for start in range(0, n - k + 1, k)]


@dataclass(frozen=True)
class Autocorrelation:
    """Lag-1 autocorrelation of a sequence in time order, with its standard error under no
    correlation (1 / sqrt(n)) and whether it lies beyond the two-sided `confidence` bound."""

    r: float
    se: float
    n: int
    significant: bool


def lag1_autocorrelation(values: Sequence[float], confidence: float = 0.95) -> Autocorrelation | None:
    """Neighbouring rounds that share a host state (a busy core, a warm cache) correlate;
    random draws hide it, and intervals built as if rounds were independent are too narrow."""
    x = np.asarray(values, dtype=float)
    n = len(x)
    if n < 3:
        return None
    d = x - x.mean()
    denom = float(d @ d)
    if denom == 0.0:
        return None
    r = float(d[:-1] @ d[1:]) / denom
    se = 1.0 / math.sqrt(n)
    return Autocorrelation(r=r, se=se, n=n, significant=bool(abs(r) > ndtri(0.5 + confidence / 2) * se))


@dataclass(frozen=True)
class NeighbourTest:
    """Lag-1 autocorrelation of rounds against its null where the rounds carry structure of
    their own: `null_mean` and `null_sd` over shuffles of the rounds within their groups (a
    session's slot a rounds, its slot b rounds), `p` one-sided for neighbours more alike than
    the groups explain (the direction that narrows an interval too much)."""

    r: float
    null_mean: float
    null_sd: float
    p: float
    n: int


def lag1_within_groups(
    values: Sequence[float], groups: Sequence[object], *, shuffles: int, rng: np.random.Generator
) -> NeighbourTest | None:
    """Each group centred on its own mean (a session's offset, a duet slot's effect), then the
    lag-1 autocorrelation of the whole sequence in time order, against shuffles of the values
    within each group that keep every round's place. Centring and alternating slots alone make
    lag-1 negative (about -1/(group size)); the shuffles carry that, so only the neighbours'
    likeness beyond it reads as correlation."""
    x = np.asarray(values, dtype=float)
    g = np.asarray([str(v) for v in groups], dtype=object)
    if len(x) < 3 or len(g) != len(x):
        return None
    members = [np.flatnonzero(g == label) for label in dict.fromkeys(g.tolist())]
    for idx in members:
        x[idx] -= x[idx].mean()

    def lag1(y: np.ndarray) -> float:
        denom = float(y @ y)
        return float(y[:-1] @ y[1:]) / denom if denom else 0.0

    if float(x @ x) == 0.0:
        return None
    observed = lag1(x)
    null = np.empty(shuffles)
    for i in range(shuffles):
        y = x.copy()
        for idx in members:
            y[idx] = x[rng.permutation(idx)]
        null[i] = lag1(y)
    p = (1 + int(np.count_nonzero(null >= observed))) / (1 + shuffles)
    return NeighbourTest(observed, float(null.mean()), float(null.std(ddof=1)), p, len(x))


@dataclass(frozen=True)
class Dispersion:
    """The sd of independent sessions' z-scores and its chi-square interval. An interval that
    is right at the session level gives sd ~ 1; `too_narrow` when the interval's low end is
    above 1 (sessions vary more than each one's interval says)."""

    sd: float
    low: float
    high: float
    sessions: int
    too_narrow: bool


def session_z(log_ratio: float, se: float) -> float:
    """A session's z: its log ratio over its standard error (A/A: the truth is 0)."""
    return log_ratio / se


def se_from_ci(ratio_low: float, ratio_high: float, confidence: float) -> float:
    """The standard error of a log ratio from its two-sided interval on the ratio scale."""
    return (math.log(ratio_high) - math.log(ratio_low)) / (2 * ndtri(0.5 + confidence / 2))


def z_dispersion(zs: Sequence[float], confidence: float = 0.95) -> Dispersion | None:
    """sd of the z's about 0 (A/A: the true effect is 0, so n degrees of freedom) and its
    chi-square interval: sum z^2 / sd^2 ~ chi2(n)."""
    z = np.asarray(zs, dtype=float)
    n = len(z)
    if n < 2:
        return None
    ss = float(z @ z)
    tail = (1 - confidence) / 2
    low = math.sqrt(ss / chdtri(n, tail))
    high = math.sqrt(ss / chdtri(n, 1 - tail))
    return Dispersion(sd=math.sqrt(ss / n), low=low, high=high, sessions=n, too_narrow=bool(low > 1.0))


def z_from_p(log_ratio: float, p_value: float) -> float:
    """A session's z from its two-sided p and the sign of its estimate: the normal score with
    the same p. A round-level t with few rounds has a wider quantile than the normal's, so a
    z taken as log ratio over an se read off its interval would read too wide; p does not."""
    p = min(max(p_value, 1e-300), 1.0)
    return math.copysign(float(ndtri(1 - p / 2)), log_ratio)


def sessions_z(verdicts: Sequence[dict]) -> dict[str, list[float]]:
    """ "series metric" -> each A/A session's z for its gated rows with a ratio and a p (from
    each session's verdict.json "results"); memory's rows are differences, not ratios."""
    out: dict[str, list[float]] = {}
    for doc in verdicts:
        for row in doc.get("results") or []:
            ratio, p = row.get("ratio"), row.get("p_value")
            if not row.get("gated") or ratio is None or p is None or ratio <= 0:
                continue
            if row.get("metric") in ("errors", "memory_bytes_per_order"):
                continue
            key = f"{row['scenario']}/{row['client']} {row['metric']}"
            out.setdefault(key, []).append(z_from_p(math.log(ratio), p))
    return out
