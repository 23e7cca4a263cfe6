"""Inference at the level where the randomness enters: one log ratio per round, a t over rounds.

Why rounds. Base and head are measured in rounds (`ab`: duets or paired rounds). Inside a
round, orders and 0.1 s blocks are paired in time and the host's regimes cancel in their
ratios (paired.py). But some of the randomness is drawn once per round and shared by all
of its blocks: the two server processes (heap layout, ASLR, which worker took which
socket), their slots and start order, the CPU placement. A test over blocks treats those as
fixed and its interval leaves their variance out: on this VM, 11 A/A `ab` runs of one
binary had 6 of 22 gated "99 %" intervals miss 1, and in calibrate's stall draws the spread
of 8-round estimates was 2.8x the block bootstrap's (issue 35).

The unit is therefore the round: y_i = log(head_i / base_i) of round i's own statistic (its
whole quantile, throughput or CPU per order), which carries the round's within-round noise
and its between-round draw alike. The rounds are independent by construction (fresh
servers, fresh slot draw), so the classic summary-statistic answer for clustered data
applies: the estimate is the mean of y (the rounds' geometric mean ratio), its standard
error sd(y) / sqrt(k) with k - 1 degrees of freedom, and the interval and the test are
Student's t about that mean. Not about the ratio of the pooled rounds: its sampling spread
is not sd(y) / sqrt(k) (a pooled quantile moves with the rounds' levels, not only their
ratios), and centring the t on it left the load series' P50 intervals short: in 4 A/A pools
of 40 to 80 duet rounds, 12-round draws covered 1 in 95.6-97.7 % of the 98.33 % intervals
about the pooled ratio against 96.8-99.6 % about the mean (docs/measurements.md, 2026-11-28).
With few rounds t's quantiles are wide (k = 8: 4.0 at 99.75 % two-sided); that width is
the evidence's, and more rounds (ab's later looks) narrow it.

The duet's slot is a second factor of each round. Slot a's server is the older process and
its connections come first in the client's tables; in three A/A pools on this VM one slot's
load P99 read 5, 20 and 24 % above the other's, whichever build held it (slot b in one pool,
slot a in the others; `scripts/experiments/aa-pool.py`, docs/measurements.md, 2026-11-28).
Which build takes slot a is drawn per pair of rounds and swapped within the pair (rig.py), so
the slots are balanced, and the estimate is the mean of the two slots' mean log ratios with
the spread taken within each slot (`slot_adjusted`): the slot effect cancels out of the
estimate, as it did before, and now also out of its standard error (k - 2 degrees of
freedom). It is the two-period crossover's answer to a period effect. Rounds without a
slot (paired rounds), or a draw with every round in one slot, keep the plain mean.

What a round test cannot see is variance drawn once per *job* (the runner's whole day, a
build shared by both sides): that is what A/A calibration (`hftbench calibrate`) measures,
and it reports the coverage of these intervals, not only the false alarms.

`Tested` carries draws of the t distribution as its replicates and null, so a pool's
stratified combine (strata.py) adds rounds' tests up as it adds any runner's test.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy.special import stdtr, stdtrit

from ..histograms import Grid, quantile_rows


def round_quantiles(g: Grid, q: float) -> tuple[np.ndarray, np.ndarray]:
    """(base's, head's) q of each round (one grid row per round and side), ns."""
    return quantile_rows(g.values_ns, g.base, q), quantile_rows(g.values_ns, g.head, q)


def round_quantile_log_ratios(g: Grid, q: float) -> np.ndarray:
    """log(q of head's round / q of base's round) per round (one grid row per round)."""
    return round_value_log_ratios(*round_quantiles(g, q))


def round_value_log_ratios(base: np.ndarray, head: np.ndarray) -> np.ndarray:
    """log(head_i / base_i) of one scalar per round (throughput, CPU per order)."""
    b, h = np.asarray(base, dtype=float), np.asarray(head, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log(h / b)


def geometric_means(
    base: np.ndarray, head: np.ndarray, slots: Sequence[str | None] = ()
) -> tuple[float, float] | None:
    """Each side's geometric mean over the rounds whose log ratio is finite, weighted as the
    estimate weighs them (round_weights): the shown values whose ratio is the estimate. None
    when no round has a finite ratio."""
    b, h = np.asarray(base, dtype=float), np.asarray(head, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        y = np.log(h / b)
        keep = np.isfinite(y) & (b > 0) & (h > 0)
    if not keep.any():
        return None
    w = round_weights(np.where(keep, y, np.nan), slots)[keep]
    return float(np.exp(w @ np.log(b[keep]))), float(np.exp(w @ np.log(h[keep])))


def mean_log_ratio(log_ratios: np.ndarray) -> float:
    """The estimate: the mean of the finite round log ratios (nan when there is none)."""
    y = np.asarray(log_ratios, dtype=float)
    y = y[np.isfinite(y)]
    return float(y.mean()) if len(y) else float("nan")


def standard_error(log_ratios: np.ndarray) -> tuple[float, int]:
    """(sd / sqrt(k), k - 1) over the finite round log ratios; (inf, 0) below two rounds."""
    y = np.asarray(log_ratios, dtype=float)
    y = y[np.isfinite(y)]
    if len(y) < 2:
        return float("inf"), 0
    return float(np.std(y, ddof=1) / math.sqrt(len(y))), len(y) - 1


def round_estimate(log_ratios: np.ndarray, slots: Sequence[str | None] = ()) -> tuple[float, float, int]:
    """(estimate, its standard error, degrees of freedom) of the rounds' log ratios: slot-adjusted
    when every round carries a slot, each slot holds a finite round and there are three or
    more, else the plain mean (mean_log_ratio, standard_error)."""
    y = np.asarray(log_ratios, dtype=float)
    by_slot = _by_slot(y, slots)
    if by_slot is None:
        se, df = standard_error(y)
        return mean_log_ratio(y), se, df
    return slot_adjusted(*by_slot)


def slot_adjusted(in_a: np.ndarray, in_b: np.ndarray) -> tuple[float, float, int]:
    """(mean of the two slots' means, its standard error from the pooled within-slot variance,
    k - 2): the slot's own effect on the ratio leaves both the estimate and the spread."""
    k = len(in_a) + len(in_b)
    resid = np.concatenate([in_a - in_a.mean(), in_b - in_b.mean()])
    pooled_var = float(resid @ resid) / (k - 2)
    se = math.sqrt(pooled_var / 4.0 * (1.0 / len(in_a) + 1.0 / len(in_b)))
    return float((in_a.mean() + in_b.mean()) / 2.0), se, k - 2


def round_weights(log_ratios: np.ndarray, slots: Sequence[str | None] = ()) -> np.ndarray:
    """Each round's weight in the estimate (0 for a round without a finite ratio): 1 / k for
    the plain mean, 1 / (2 k_slot) slot-adjusted. The shown geometric means use them, so that
    their ratio is the estimate."""
    y = np.asarray(log_ratios, dtype=float)
    finite = np.isfinite(y)
    w = np.zeros(len(y))
    if _by_slot(y, slots) is None:
        w[finite] = 1.0 / max(int(finite.sum()), 1)
        return w
    labels = np.asarray(slots, dtype=object)
    for slot in ("a", "b"):
        mask = finite & (labels == slot)
        w[mask] = 0.5 / mask.sum()
    return w


def _by_slot(y: np.ndarray, slots: Sequence[str | None]) -> tuple[np.ndarray, np.ndarray] | None:
    """The finite log ratios of slot a's rounds and of slot b's, or None when the slot model
    cannot be fitted: no slots, a round without one, a slot without a round, under 3 rounds."""
    if len(slots) != len(y) or any(s not in ("a", "b") for s in slots):
        return None
    labels = np.asarray(slots, dtype=object)
    finite = np.isfinite(y)
    in_a, in_b = y[finite & (labels == "a")], y[finite & (labels == "b")]
    if len(in_a) == 0 or len(in_b) == 0 or len(in_a) + len(in_b) < 3:
        return None
    return in_a, in_b


def t_p_value(observed: float, se: float, df: int) -> float:
    """Two-sided p of Student's t for observed / se; 1 when it cannot be computed. A zero
    spread (every round gave the same ratio) with a non-zero estimate is p = 0."""
    if df < 1 or not np.isfinite(observed) or not np.isfinite(se):
        return 1.0
    if se == 0:
        return 1.0 if observed == 0 else 0.0
    return float(2.0 * stdtr(df, -abs(observed) / se))


def t_interval(observed: float, se: float, df: int, confidence: float) -> tuple[float, float]:
    """exp(observed ± t_{df, (1 + confidence) / 2} · se): the ratio's interval."""
    if df < 1 or not (np.isfinite(observed) and np.isfinite(se)):
        return float("nan"), float("nan")
    half = float(stdtrit(df, 0.5 + confidence / 2.0)) * se
    return float(np.exp(observed - half)), float(np.exp(observed + half))


def t_draws(se: float, df: int, n: int, rng: np.random.Generator) -> np.ndarray:
    """n draws of se · T_df: the estimate's sampling distribution about its centre."""
    if df < 1 or not np.isfinite(se):
        return np.array([])
    return se * rng.standard_t(df, size=n)
