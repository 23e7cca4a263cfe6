"""What a design hides, measured by calibrate: the price of duet (the same build alone and in a
duet), and what of each injected kind's effect survives the design (each server measured
alone, one at a time, against the design's own measurement of it). A duet makes both servers
share a CPU: work one side does after its reply is paid partly by the other, so the ratio
understates it, or turns it upside down; these numbers say by how much (pure functions of runs)."""

from __future__ import annotations

import math
import re

import numpy as np
from scipy.special import stdtrit

from ..design_names import UNPAIRED
from ..results import Run
from ..series import Series
from .calibration_shapes import Survival, SurvivalRow
from .compare import compare_sides
from .gates import Gates
from .sides import side_from_runs

SURVIVAL_FLOOR = 0.02  # an effect alone smaller than ±2 % has no share to speak of
# The solo runs are few and the host's level moves between them (about 20 % within minutes on the
# 2-core VM): each kind's run is paired with the build's run measured just before it, and the
# effect alone is stated with a Student's interval over those pairs at this level.
SOLO_CONFIDENCE = 0.95
# Fewer pairs than this show nothing whole: with 4, Student's t at 95 % is 3.2 and one moved
# host level decides the interval (2026-11-29: latency-8c's pairs scattered from -15 to +60 %).
MIN_SOLO_PAIRS = 8
Pool = list[tuple[Run, Run]]  # a kind's rounds: (base run, head run)
_SOLO = re.compile(r"_solo(\d+)(?:_[0-9a-f]{6})?$")


def solo_pairs(build: list[Run], kind: list[Run]) -> list[tuple[Run, Run]]:
    """The build's and the kind's solo runs of the same index (calibrate.measure runs them back
    to back, run_<stamp>_soloNN_<hex>), in the build's order."""
    by_index = {m.group(1): r for r in kind if (m := _SOLO.search(r.run_id))}
    return [
        (b, by_index[m.group(1)]) for b in build if (m := _SOLO.search(b.run_id)) and m.group(1) in by_index
    ]


def pair_log_ratios(pairs: list[tuple[Run, Run]], gates: Gates) -> dict[str, list[float]]:
    """ "series metric" -> log(second / first) of each (first, second) pair of runs compared
    alone, in order: a solo pair (alone_effects) or one round (calibration_draws' lag-1). Only
    the rows' ratios are read, so the quantile rows' permutation tests are skipped."""
    logs: dict[str, list[float]] = {}
    for first, second in pairs:
        one, other = side_from_runs("base", [first]), side_from_runs("head", [second])
        for r in compare_sides(one, other, gates, design=UNPAIRED, estimates_only=True).results:
            if r.ratio is not None and r.ratio > 0:
                logs.setdefault(f"{r.series} {r.metric}", []).append(math.log(r.ratio))
    return logs


def alone_effects(pairs: list[tuple[Run, Run]], gates: Gates) -> dict[str, tuple[float, float, float, int]]:
    """ "series metric" -> (mean, low, high, pairs): the kind's log effect with each server alone,
    one log ratio per solo pair, and its SOLO_CONFIDENCE interval (Student's t over the pairs;
    low = high = mean with a single pair)."""
    logs = pair_log_ratios(pairs, gates)
    out = {}
    for key, values in logs.items():
        n, mean = len(values), float(np.mean(values))
        half = 0.0
        if n > 1:
            half = float(stdtrit(n - 1, 0.5 + SOLO_CONFIDENCE / 2) * np.std(values, ddof=1) / math.sqrt(n))
        out[key] = (mean, mean - half, mean + half, n)
    return out


def shown_whole(design_log: float, alone_low: float, pairs: int, most: float) -> bool:
    """Whether the solo pairs show the design's effect whole: no more than `most` times (log
    against log) the bottom of the effect's interval alone, or, where that interval reaches
    below SURVIVAL_FLOOR, no more than `most` times the floor (an effect under +3 % cannot make
    a change cross a 10 % gate), over at least MIN_SOLO_PAIRS pairs. The burden of proof lies
    with the design: a few noisy solo runs leave a wide interval, and a row they do not show
    whole is reported, not guarded (a design that fails a sub-threshold change breaks the
    threshold's promise as surely as one that passes a big one)."""
    return pairs >= MIN_SOLO_PAIRS and design_log <= most * max(alone_low, math.log1p(SURVIVAL_FLOOR))


def seen_interval(
    design_log: float, alone_low: float, alone_high: float
) -> tuple[float, float | None] | None:
    """The interval of the share the design shows (its magnification): the design's log effect
    over each end of the effect alone's interval, log against log. Only for a design's effect
    above 1 whose effect alone may be too (its interval's top above 1); None otherwise. The top
    is None where the effect alone's interval reaches 1: the share could be any size."""
    if design_log <= 0 or alone_high <= 0:
        return None
    return design_log / alone_high, design_log / alone_low if alone_low > 0 else None


def survival(
    effects: dict[str, dict[str, float]], solo: dict[str, list[Run]], gates: Gates, most: float
) -> Survival:
    """Per kind and series × metric: its effect alone (each server measured by itself, the
    kind's run against the build's run just before it, and the interval over those pairs), its
    effect as the design measured it, and the share of the first the second shows (log against
    log: 1 sees it whole, 0 not at all, below 0 the opposite way; None where the effect alone is
    within ±SURVIVAL_FLOOR: nothing to survive); `whole` where the solo pairs show that the
    design does not magnify it (shown_whole)."""
    if not solo.get("aa"):
        return {}
    out: Survival = {}
    for kind, runs in solo.items():
        if kind == "aa" or not runs or kind not in effects:
            continue
        rows: dict[str, SurvivalRow] = {}
        for key, (mean, low, high, n) in alone_effects(solo_pairs(solo["aa"], runs), gates).items():
            if key not in effects[kind]:
                continue
            design_ratio = effects[kind][key]
            design_log = math.log(design_ratio)
            seen = design_log / mean if abs(math.expm1(mean)) >= SURVIVAL_FLOOR else None
            row: SurvivalRow = {
                "alone": round(math.exp(mean), 3),
                "alone_low": round(math.exp(low), 3),
                "alone_high": round(math.exp(high), 3),
                "pairs": n,
                "design": design_ratio,
                "seen": None if seen is None else round(seen, 2),
                "whole": shown_whole(design_log, low, n, most),
            }
            if seen is not None and (span := seen_interval(design_log, low, high)) is not None:
                row["seen_low"] = round(span[0], 2)
                row["seen_high"] = None if span[1] is None else round(span[1], 2)
            rows[key] = row
        out[kind] = rows
    return out


def price_of_duet(pools: dict[str, Pool], solo: list[Run]) -> dict[str, dict[str, float]]:
    """Per series: absolute P50 of the build alone against the same build in a duet (the
    A/A rounds' base side): what the other server (on the same CPU by default, placement.py)
    and a client that serves both cost each."""
    alone = side_from_runs("solo", solo).series if solo else {}
    paired = side_from_runs("duet", [b for b, _ in pools.get("aa", [])]).series
    out = {}
    for key in alone.keys() & paired.keys():
        a, d = (Series(*key, tuple(x[key])).quantile_us(0.5) for x in (alone, paired))
        if a and d:
            out["/".join(key)] = {
                "solo_p50_us": round(a, 2),
                "duet_p50_us": round(d, 2),
                "ratio": round(d / a, 3),
            }
    return out
