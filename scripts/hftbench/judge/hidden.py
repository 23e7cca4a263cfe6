"""What a design hides, measured by calibrate: the price of duet (the same build alone and in a
duet), and what of each injected kind's effect survives the design (each server measured
alone, one at a time, against the design's own measurement of it). A duet makes both servers
share a CPU: work one side does after its reply is paid partly by the other, so the ratio
understates it, or turns it upside down; these numbers say by how much (pure functions of runs)."""

from __future__ import annotations

import math

from ..design_names import UNPAIRED
from ..results import Run
from ..series import Series
from .compare import compare_sides
from .gates import Gates
from .sides import side_from_runs

SURVIVAL_FLOOR = 0.02  # an effect alone smaller than ±2 % has no share to speak of
Pool = list[tuple[Run, Run]]  # a kind's rounds: (base run, head run)


def survival(
    effects: dict[str, dict[str, float]], solo: dict[str, list[Run]], gates: Gates
) -> dict[str, dict[str, dict[str, float | None]]]:
    """Per kind and series × metric: its effect alone (each server measured by itself, the
    kind's against the build's), its effect as the design measured it, and the share of the
    first the second shows (log against log: 1 sees it whole, 0 not at all, below 0 the
    opposite way). None where the effect alone is within ±SURVIVAL_FLOOR: nothing to survive."""
    if not solo.get("aa"):
        return {}
    alone_base = side_from_runs("solo", solo["aa"])
    out: dict[str, dict[str, dict[str, float | None]]] = {}
    for kind, runs in solo.items():
        if kind == "aa" or not runs or kind not in effects:
            continue
        alone = compare_sides(alone_base, side_from_runs(kind, runs), gates, design=UNPAIRED)
        rows = {}
        for r in alone.results:
            key = f"{r.series} {r.metric}"
            if r.ratio is None or key not in effects[kind] or not r.ratio > 0:
                continue
            design_ratio = effects[kind][key]
            seen = math.log(design_ratio) / math.log(r.ratio) if abs(r.ratio - 1) >= SURVIVAL_FLOOR else None
            rows[key] = {"alone": round(r.ratio, 3), "design": design_ratio,
                         "seen": None if seen is None else round(seen, 2)}  # fmt: skip
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
