"""calibrate's calibration.md: the tallies, MDEs, effects, guards and the price of duet."""

from __future__ import annotations

from typing import Any

from ..answers import FASTER, IMPROVEMENT, NO_CHANGE

TITLE = {
    "aa": "A/A (same build)",
    "slow": "uniform slowdown",
    "stall": "tail-only stall",
    "after": "work after the reply",
    "contention": "cost only under concurrency",
}


def _pct(n: int, d: int) -> str:
    return f"{100 * n / d:.1f}% ({n}/{d})" if d else "–"


def seen_text(seen: float | None) -> str:
    """A kind's share that survives the design, in words."""
    if seen is None:
        return "no effect alone"
    if seen < 0:
        return f"sees {seen:.2f} of it: the opposite way"
    return f"sees {seen:.2f} of it"


def survival_lines(
    survival: dict[str, dict[str, dict[str, Any]]], rule: dict[str, float] | None
) -> list[str]:
    """What of each kind's effect, measured with each server alone, the design still shows;
    `rule` is the record's survival_rule (its interval's level and the magnification allowed)."""
    if not survival:
        return []
    # a record written before it kept its rule names neither number
    level = f"{100 * rule['confidence']:g} %" if rule else "stated"
    beyond = f"{rule['magnifies_beyond']:g}×" if rule else "a multiple of"
    least = f"{rule['min_pairs']}+" if rule and "min_pairs" in rule else "enough"
    lines = [
        "",
        "What of each kind survives the design (its effect with each server alone, one at a "
        f"time: each kind's run against the build's run just before it, with the {level} interval "
        "over those pairs; against the effect the design measured; 1 sees it whole, 0 not at all; "
        f'"not magnified" where {least} pairs show the design\'s effect within {beyond} the bottom of '
        "that interval: only a row not magnified for every kind is guarded):",
        "",
        f"| kind | series metric | alone | alone, {level} | in the design | this design |",
        "|---|---|---|---|---|---|",
    ]
    for kind, rows in survival.items():
        for key, r in rows.items():
            interval = f"×{r['alone_low']} … ×{r['alone_high']} ({r['pairs']} pairs)" if "pairs" in r else "–"
            shown = seen_text(r["seen"]) + (
                ": not magnified" if r.get("whole") else ": magnification not ruled out"
            )
            lines.append(f"| {TITLE[kind]} | {key} | ×{r['alone']} | {interval} | ×{r['design']} | {shown} |")
    return lines


def pool_lines(pool: dict[str, dict[str, Any]]) -> list[str]:
    """The whole A/A pool as one comparison: its own offset from 1, which every draw carries."""
    if not pool:
        return []
    rounds = next(iter(pool.values()))["rounds"]
    lines = [
        "",
        f"The whole A/A pool as one comparison ({rounds} rounds, the round test, p uncorrected): "
        "every draw above carries this offset, so a pool whose own p is below about 0.05 reads "
        "an exact interval's coverage short; one above it and a short coverage is an interval "
        "too narrow:",
        "",
    ]
    lines += [f"- {key}: ×{r['ratio']} (p {r['p']})" for key, r in pool.items()]
    return lines


def _passed(tally: dict[str, Any]) -> int:
    return sum(tally["statuses"].get(s, 0) for s in (NO_CHANGE, IMPROVEMENT, FASTER))


def as_judged_lines(judged: dict[str, dict[str, Any]]) -> list[str]:
    """The same draws judged as a verdict with this record judges them: Holm over the guarded
    rows only. Its false alarms, coverage, p-values and MDEs are the ones a verdict states."""
    aa = judged.get("aa")
    if not aa:
        return []
    keys = [k for k in sorted(aa["series_tested"]) if not k.endswith(" errors")]
    lines = [
        "",
        f"As a verdict with this record judges (Holm over its {len(keys)} guarded series × metrics, "
        "the same draws):",
        "",
        "| series metric | A/A false alarms | A/A interval held 1 | A/A p < 0.05 | MDE |",
        "|---|---|---|---|---|",
    ]
    for key in keys:
        n = aa["series_tested"][key]
        p = aa["series_p"].get(key) or {}
        below = f"{100 * p['below_0.05']:.1f} %" if p.get("n") else "–"
        mde = aa["mde"].get(key)
        lines.append(
            f"| {key} | {_pct(aa['series_regression'].get(key, 0), n)} | "
            f"{_pct(aa['series_covered'].get(key, 0), n)} | {below} | "
            f"{'–' if mde is None else f'{100 * (mde - 1):+.1f}%'} |"
        )
    lines += ["", "| comparison | flagged | passed with ✅ |", "|---|---|---|"]
    for kind, tally in judged.items():
        n = tally["comparisons"]
        lines.append(f"| {TITLE[kind]} | {_pct(tally['flagged'], n)} | {_pct(_passed(tally), n)} |")
    return lines


def render(doc: dict[str, Any]) -> str:
    t = doc["tallies"]
    metrics = [m for m in t["aa"]["regression"] if t["aa"]["tested"].get(m)]
    runs = doc["runs"]
    lines = [
        "# Gate calibration",
        "",
        f"Suite `{doc['suite']}` ({doc['date']}), design `{doc['design']}`: {runs['aa']} A/A rounds, "
        f"{runs.get('slow', 0)} against `--inject-delay-us {doc.get('inject_delay_us')}`, "
        f"{runs.get('stall', 0)} against `--inject-stall-us {doc.get('inject_stall_us')} "
        f"--inject-stall-every {doc.get('inject_stall_every')}`, "
        f"{runs.get('after', 0)} against `--inject-after-reply-us {doc.get('inject_after_reply_us')}`, "
        f"{runs.get('contention', 0)} against `--inject-contention-us {doc.get('inject_contention_us')}`; "
        f"{t['aa']['comparisons']} random draws "
        f"of {doc['k']} rounds of each kind, judged as one of {doc.get('looks', 1)} looks "
        f"(alpha / looks); gates `{doc['gates']}`.",
        "",
        "| comparison | flagged (suite) | no change (suite) | passed with ✅ (suite) | "
        + " | ".join(f"{m} regressed" for m in metrics)
        + " | "
        + " | ".join(f"{m} no change" for m in metrics)
        + " |",
        "|---|---|---|---|" + "---|" * (2 * len(metrics)),
    ]
    for kind, tally in t.items():
        n = tally["comparisons"]
        same = tally["statuses"].get(NO_CHANGE, 0)
        cells = [_pct(tally["flagged"], n), _pct(same, n), _pct(_passed(tally), n)]
        cells += [_pct(tally["regression"][m], n) for m in metrics]
        cells += [_pct(tally["no_change"][m], n) for m in metrics]
        lines.append(f"| {TITLE[kind]} | " + " | ".join(cells) + " |")
    keys = sorted(t["aa"].get("series_tested", {}))
    if keys:
        lines += [
            "",
            "Per series × metric: regressed / no change, of the comparisons of each kind:",
            "",
            "| series metric | " + " | ".join(TITLE[k] for k in t) + " |",
            "|---|" + "---|" * len(t),
        ]
        for key in keys:
            counts = [(x.get("series_regression", {}), x.get("series_no_change", {})) for x in t.values()]
            cells = [f"{reg.get(key, 0)} / {same.get(key, 0)}" for reg, same in counts]
            lines.append(f"| {key} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "Comparisons overlap (drawn from one pool of rounds): each rate is an estimate from the real "
        "rounds above, not from independent experiments.",
        "",
        "Minimum detectable effect (median over the A/A comparisons; 80% power at the gate's level):",
        "",
    ]
    lines += [f"- {name}: {100 * (v - 1):+.1f}%" for name, v in t["aa"]["mde"].items()]
    for kind, eff in doc["effects"].items():
        lines += ["", f"Effect of the {TITLE[kind]} (all its rounds, head / base, merged):", ""]
        lines += [f"- {name}: ×{ratio}" for name, ratio in eff.items()]
    lines += ["", "What this runner guards (the record `--calibration` hands the gate):", ""]
    lines += [
        f"- {g['series']} {g['metric']}: guarded (MDE {100 * (g['mde'] - 1):+.1f} %)"
        if g["guarded"]
        else f"- {g['series']} {g['metric']}: {g['why_not']}"
        for g in doc["guards"]
    ]
    honest = [g for g in doc["guards"] if g.get("coverage") is not None]
    if honest:
        conf = doc.get("confidence")
        stated = f" (they state {100 * conf:.2f} %)" if conf else ""
        lines += [
            "",
            "Are the intervals as wide as their evidence? A/A draws whose interval held "
            f"1{stated}, and how the A/A p-values spread (uniform when the test is sound: "
            "about 1 % below 0.01; D is the largest gap from the uniform CDF):",
            "",
        ]
        for g in honest:
            p = g.get("p_values") or {}
            spread = (
                (
                    f"; p < 0.01 in {100 * p['below_0.01']:.1f} %, p < 0.05 in "
                    f"{100 * p['below_0.05']:.1f} %, D {p['ks_d']:.3f}"
                )
                if p.get("n")
                else ""
            )
            lines.append(f"- {g['series']} {g['metric']}: {100 * g['coverage']:.1f} %{spread}")
    lines += pool_lines(doc.get("aa_pool") or {})
    lines += as_judged_lines(doc.get("as_judged") or {})
    lines += survival_lines(doc.get("survival") or {}, doc.get("survival_rule"))
    for series, p in (doc.get("price_of_duet") or {}).items():
        lines += [
            "",
            f"Price of duet, {series}: P50 {p['solo_p50_us']} µs alone, {p['duet_p50_us']} µs "
            f"in a duet (×{p['ratio']}): the other server and a shared client's cost.",
        ]
    return "\n".join(lines) + "\n"
