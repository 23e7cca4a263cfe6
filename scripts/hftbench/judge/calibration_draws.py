"""calibrate's analysis (commands/calibrate.py measures): the rounds it measured, read back;
random draws of k rounds of each kind compared with the design's test, tallied per status and
per series × metric; what each kind's effect alone is and how much of it survives the design.
The record it feeds is calibration.py's."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path
from typing import cast

import numpy as np

from .. import metrics
from ..answers import FASTER, IMPROVEMENT, NO_CHANGE, REGRESSION
from ..design_names import DUET, PAIRED_ROUNDS
from ..errors import UsageError
from ..results import Run
from ..verdict import MetricResult
from . import calibration, designs, independence, memory
from .calibration_shapes import Analysis, Counting, Evidence, Lag1, PoolOffset, Tally
from .compare import Comparison, compare_sides
from .gates import Gates
from .hidden import MIN_SOLO_PAIRS, SOLO_CONFIDENCE, Pool, pair_log_ratios, survival
from .sides import load_runs, side_from_runs

KINDS = ("aa", "slow", "stall", "after", "contention", "leak", "width")
SHOWN = tuple(m.name for m in (metrics.P50, metrics.P99, metrics.P999))
# Metrics judged as a difference head − base in their own unit, not a ratio (judge/memory.py):
# their null is 0, their MDE and effect are in that unit (bytes per order).
DIFFERENCES = (metrics.MEMORY_PER_ORDER.name,)
# The effects calibrate reports, and so the rows whose magnification the solo pairs can show:
# the P99.9 exceedance too (a solo pair draws its line over both runs, as an unpaired verdict).
EFFECTS = (*SHOWN, metrics.P999_EXCEEDANCE.name, metrics.CPU_PER_ORDER.name, *DIFFERENCES)


def effect(r: MetricResult) -> float | None:
    """A row's effect, all rounds merged: head / base, or head − base for a difference metric
    (memory per order: the leak kind's, in bytes per order); None when the row has none."""
    if r.metric in DIFFERENCES:
        extra = memory.extra(r)
        return None if extra is None or not math.isfinite(extra) else round(extra, 1)
    return None if r.ratio is None else round(r.ratio, 3)


def solo_dir(kind: str) -> str:
    return "solo" if kind == "aa" else f"solo-{kind}"


def load_solo(source: Path) -> dict[str, list[Run]]:
    return {
        kind: load_runs(source / solo_dir(kind)) if (source / solo_dir(kind)).is_dir() else []
        for kind in KINDS
    }


def load_pools(source: Path) -> dict[str, Pool]:
    """Each kind's rounds, base and head run of the same round together (designs.round_key)."""
    pools: dict[str, Pool] = {}
    for kind in KINDS:
        sides = [source / kind / side for side in ("base", "head")]
        if not all(s.is_dir() for s in sides):
            pools[kind] = []
            continue
        base, head = (load_runs(s) for s in sides)
        by_round = {designs.round_key(r.run_id): r for r in head}
        pools[kind] = [(b, by_round[k]) for b in base if (k := designs.round_key(b.run_id)) in by_round]
    return pools


def design_of(pools: dict[str, Pool]) -> str:
    """A duet's runs name their server's slot (duet.py); anything else ran as paired rounds."""
    runs = [b for b, _ in pools.get("aa", [])]
    return DUET if runs and runs[0].duet_slot else PAIRED_ROUNDS


def _tally(gates: Gates) -> Counting:
    gated = [m.name for m in gates.metrics if m.gated]
    return {
        "comparisons": 0,
        "flagged": 0,
        "statuses": {},
        "regression": {m: 0 for m in gated},  # comparisons where this metric regressed somewhere
        "no_change": {m: 0 for m in gated},  # ... where every gated series said no change for it
        "mde": {},  # "series metric" -> list of minimum detectable effects
        "tested": {m: 0 for m in gated},  # comparisons where the metric was gated somewhere
        "series_regression": {},  # "series metric" -> comparisons where it regressed
        "series_tested": {},  # "series metric" -> comparisons where it was tested
        "series_no_change": {},  # "series metric" -> comparisons where it said "no change"
        "series_covered": {},  # "series metric" -> comparisons whose interval held 1 (A/A: coverage)
        "series_p": {},  # "series metric" -> the unadjusted p-values (A/A: should be uniform)
        "series_passed": {},  # "series metric" -> comparisons read "no change" or "improvement"
    }


def _count(t: Counting, c: Comparison) -> None:
    t["comparisons"] += 1
    t["flagged"] += c.exit_code
    t["statuses"][c.status] = t["statuses"].get(c.status, 0) + 1
    gated = [r for r in c.results if r.gated]
    for name in t["regression"]:
        rows = [r for r in gated if r.metric == name]
        t["tested"][name] += bool(rows)
        t["regression"][name] += any(r.verdict == REGRESSION for r in rows)
        t["no_change"][name] += bool(rows) and all(r.verdict == NO_CHANGE for r in rows)
    for r in gated:
        if r.metric == "errors":  # failures are counted on every series, never calibrated
            continue
        key = f"{r.series} {r.metric}"
        t["series_tested"][key] = t["series_tested"].get(key, 0) + 1
        t["series_regression"][key] = t["series_regression"].get(key, 0) + (r.verdict == REGRESSION)
        t["series_no_change"][key] = t["series_no_change"].get(key, 0) + (r.verdict == NO_CHANGE)
        passed = r.verdict in (NO_CHANGE, IMPROVEMENT, FASTER)
        t["series_passed"][key] = t["series_passed"].get(key, 0) + passed
        if r.ci is not None and all(np.isfinite(r.ci)):
            null = 0.0 if r.metric in DIFFERENCES else 1.0  # a difference's null is 0
            t["series_covered"][key] = t["series_covered"].get(key, 0) + (r.ci[0] <= null <= r.ci[1])
        if r.p_value is not None:
            t["series_p"].setdefault(key, []).append(float(r.p_value))
        if r.mde is not None and np.isfinite(r.mde):
            t["mde"].setdefault(key, []).append(r.mde)
    for r in c.results:  # gated by gates.yaml, left out here: the record says why (calibration.py)
        if not r.gated and r.why_not_gated and r.metric in t["regression"]:
            t.setdefault("series_why_not", {})[f"{r.series} {r.metric}"] = r.why_not_gated


def _finish(t: Counting) -> Tally:
    """The counts with each MDE list read as its median and each p-value list as its spread
    (the keys keep their places: the record's JSON is as before)."""
    mde = {k: round(float(np.median(v)), 4) for k, v in sorted(t["mde"].items())}
    spread = {k: calibration.p_spread(v) for k, v in sorted(t["series_p"].items())}
    return cast(Tally, {**t, "mde": mde, "series_p": spread})


def draw(pool: Pool, k: int, rng: np.random.Generator) -> Pool:
    """k rounds of the pool at random, as ab measures them: a duet's rounds half with base in
    slot a and half in slot b (rig.head_slot balances every pair of rounds), where the pool
    holds enough of each; else any k."""
    in_a = [r for r in pool if r[0].duet_slot == "a"]
    in_b = [r for r in pool if r[0].duet_slot == "b"]
    if len(in_a) >= k // 2 and len(in_b) >= k - k // 2:
        return [*_some(in_a, k // 2, rng), *_some(in_b, k - k // 2, rng)]
    return _some(pool, k, rng)


def _some(rounds: Pool, n: int, rng: np.random.Generator) -> Pool:
    return [rounds[i] for i in rng.choice(len(rounds), size=n, replace=False)]


def analyse(
    pools: dict[str, Pool],
    solo: dict[str, list[Run]],
    gates: Gates,
    comparisons: int,
    k: int,
    seed: int,
    design: str,
) -> Analysis:
    """Tallies over random draws of k rounds of each kind, compared with the design's test."""
    if len(pools["aa"]) < k:
        raise UsageError(
            f"A/A needs >= k = {k} rounds, have {len(pools['aa'])}; pass --runs or a smaller --k"
        )
    done = _draw_tallies(pools, gates, comparisons, k, seed, design)
    effects: dict[str, dict[str, float]] = {}
    for kind, pool in pools.items():
        if kind != "aa" and pool:
            rows = _compare(pool, kind, gates, design).results
            effects[kind] = {
                f"{r.series} {r.metric}": e
                for r in rows
                if r.metric in EFFECTS and (e := effect(r)) is not None
            }
    seen = survival(effects, solo, gates, calibration.MAX_AMPLIFICATION)
    guards = calibration.guard_rows(done["aa"], gates, seen)
    # The guards are decided in the whole suite's family; a verdict with this record tests only
    # the guarded rows (Holm over fewer), so the same draws judged that way are what it states.
    record = replace(gates, guards=calibration.guards_by_key(guards))
    return {
        "tallies": done,
        "aa_pool": pool_offsets(_compare(pools["aa"], "aa", gates, design), done["aa"]["series_tested"]),
        "effects": effects,
        "survival": seen,
        # what decided `whole`: the texts (no numpy there) read it from the record
        "survival_rule": {
            "confidence": SOLO_CONFIDENCE,
            "magnifies_beyond": calibration.MAX_AMPLIFICATION,
            "min_pairs": MIN_SOLO_PAIRS,
        },
        "confidence": gates.confidence,
        "guards": guards,
        "as_judged": _draw_tallies(pools, record, comparisons, k, seed, design),
        "independence": evidence(pools, gates, comparisons, k, design, set(done["aa"]["series_tested"])),
    }


def evidence(
    pools: dict[str, Pool], gates: Gates, comparisons: int, k: int, design: str, keys: set[str]
) -> dict[str, Evidence]:
    """How independent each kind's draws are (issue 62, item 5): the distinct draws its pool
    allows and whether a rate over them may be stated (pool >= 3k); the pool's contiguous
    windows of k rounds in the order measured, tallied as the draws are; and, per gated row,
    the lag-1 autocorrelation of the rounds' log ratios in that order."""
    out: dict[str, Evidence] = {}
    for kind, pool in pools.items():
        if len(pool) < k:
            continue
        tally = _tally(gates)
        for window in independence.time_windows(len(pool), k):
            _count(tally, _compare([pool[i] for i in window], kind, gates, design))
        lag1: dict[str, Lag1] = {}
        for key, logs in pair_log_ratios(pool, gates).items():
            a = independence.lag1_autocorrelation(logs) if key in keys else None
            if a is not None:
                lag1[key] = {"r": round(a.r, 4), "se": round(a.se, 4), "n": a.n, "significant": a.significant}
        out[kind] = {
            "pool": len(pool),
            "k": k,
            "distinct_draws": independence.distinct_draws(len(pool), k, comparisons),
            "rate": independence.rate_is_independent(len(pool), k),
            "windows": _finish(tally),
            "lag1": lag1,
        }
    return out


def pool_offsets(whole: Comparison, keys) -> dict[str, PoolOffset]:
    """ "series metric" -> the whole A/A pool judged as one comparison: its ratio, the round
    test's uncorrected p and the rounds. Every draw of k rounds carries the pool's own offset
    from 1, so a pool off by 2 standard errors reads an exact interval's coverage short
    (docs/measurements.md, 2026-11-29): this tells that apart from an interval too narrow."""
    rows = [r for r in whole.results if f"{r.series} {r.metric}" in keys and None not in (r.ratio, r.p_value)]
    return {
        f"{r.series} {r.metric}": {
            "ratio": round(r.ratio, 5),
            "p": round(r.p_value, 4),
            "rounds": len(whole.base.runs),
        }
        for r in rows
    }


def _compare(rounds: Pool, label: str, gates: Gates, design: str) -> Comparison:
    base = side_from_runs("base", [b for b, _ in rounds])
    return compare_sides(base, side_from_runs(label, [h for _, h in rounds]), gates, design=design)


def _draw_tallies(
    pools: dict[str, Pool], gates: Gates, comparisons: int, k: int, seed: int, design: str
) -> dict[str, Tally]:
    """Each kind's tally over `comparisons` random draws of k rounds (the same draws for the
    same seed), judged with `gates`."""
    rng = np.random.default_rng(seed)
    tallies = {kind: _tally(gates) for kind in KINDS if kind == "aa" or len(pools.get(kind, [])) >= k}
    for _ in range(comparisons):
        for kind in tallies:
            _count(tallies[kind], _compare(draw(pools[kind], k, rng), kind, gates, design))
    return {kind: _finish(t) for kind, t in tallies.items()}


def flag_value(runs: list[Run], name: str) -> int | float | None:
    """A numeric hft-server flag the runs' server was started with (from results.json): an int,
    or a float where the flag took a decimal (--inject-delay-us 0.5)."""
    flags = [str(f) for f in (runs[0].server.get("flags") or [])] if runs else []
    for i, flag in enumerate(flags):
        if flag.startswith(f"{name}="):
            return _number(flag.split("=", 1)[1])
        if flag == name and i + 1 < len(flags):
            return _number(flags[i + 1])
    return None


def _number(text: str) -> int | float:
    try:
        return int(text)
    except ValueError:
        return float(text)
