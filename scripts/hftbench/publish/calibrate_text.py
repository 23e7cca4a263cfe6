"""calibrate's calibration.md: the tallies, MDEs, effects, guards and the price of duet."""

from __future__ import annotations

from .. import metrics
from ..answers import FASTER, IMPROVEMENT, NO_CHANGE
from ..judge.calibration_shapes import (
    CalibrationRecord,
    Evidence,
    PoolOffset,
    Survival,
    SurvivalRow,
    SurvivalRule,
    Tally,
)

TITLE = {
    "aa": "A/A (same build)",
    "slow": "uniform slowdown",
    "stall": "tail-only stall",
    "after": "work after the reply",
    "contention": "cost only under concurrency",
    "leak": "memory kept per order",
    "width": "cost only past some width",
}


def _difference(key: str) -> bool:
    """Whether a "series metric" row is judged as a difference in its own unit (memory per
    order, bytes), not a ratio: its MDE and effect are bytes per order."""
    m = metrics.BY_NAME.get(key.rsplit(" ", 1)[-1])
    return m is not None and m.kind == metrics.MEMORY


def mde_text(key: str, mde: float, percent: str = "%") -> str:
    """An MDE as its row reads: +1.2% for a ratio (`percent` its sign), 12.5 B/order for a
    difference."""
    return f"{mde:,.1f} B/order" if _difference(key) else f"{100 * (mde - 1):+.1f}{percent}"


def effect_text(key: str, value: float) -> str:
    """An effect, all rounds merged: ×1.3 for a ratio, +64.0 B/order for a difference."""
    return f"{value:+,.1f} B/order" if _difference(key) else f"×{value}"


def _pct(n: int, d: int) -> str:
    return f"{100 * n / d:.1f}% ({n}/{d})" if d else "–"


def draws_text(ev: Evidence | None) -> str:
    """How many distinct draws a kind's counts rest on (issue 62, item 5): a pool of exactly k
    rounds is one comparison however often it is drawn."""
    if not ev:
        return "–"
    if ev["distinct_draws"] == 1:
        return f"one comparison ({ev['pool']} rounds, k {ev['k']})"
    text = f"{ev['distinct_draws']} distinct draws of {ev['pool']} rounds"
    return text if ev["rate"] else f"{text} (pool < 3k: not a rate)"


def count_text(n: int, d: int, ev: Evidence | None) -> str:
    """A count over draws: a rate only where the pool holds >= 3k rounds; else the count
    alone, or, from a single set of rounds, what that one comparison said."""
    if ev and ev["distinct_draws"] == 1 and n in (0, d):
        return "yes" if n else "no"
    if ev and not ev["rate"]:
        return f"{n}/{d}"
    return _pct(n, d)


def independence_lines(ev: dict[str, Evidence]) -> list[str]:
    """Coverage in time order: contiguous windows of k rounds as measured, and the lag-1
    autocorrelation of the rounds' log ratios (neighbouring rounds that share a host state)."""
    if not ev:
        return []
    lines = [
        "",
        "In the order measured: contiguous windows of k rounds (not overlapping), judged as the draws are:",
        "",
        "| comparison | windows | flagged | passed with ✅ |",
        "|---|---|---|---|",
    ]
    for kind, e in ev.items():
        w = e["windows"]
        lines.append(
            f"| {TITLE[kind]} | {w['comparisons']} | {w['flagged']}/{w['comparisons']} | "
            f"{_passed(w)}/{w['comparisons']} |"
        )
    aa = (ev.get("aa") or {}).get("windows") or {}
    for key in sorted(aa.get("series_tested", {})):
        n = aa["series_tested"][key]
        lines.append(
            f"- A/A {key}: {aa['series_regression'].get(key, 0)}/{n} windows false alarms, "
            f"interval held 1 in {aa['series_covered'].get(key, 0)}/{n}"
        )
    lag = (ev.get("aa") or {}).get("lag1") or {}
    if lag:
        lines += [
            "",
            "Lag-1 autocorrelation of the A/A rounds' log ratios in the order measured "
            "(standard error 1/√n; significant beyond ±1.96 of it):",
            "",
        ]
        lines += [
            f"- {key}: r {a['r']:+.3f} ± {a['se']:.3f} over {a['n']} rounds"
            + (": significant, neighbouring rounds correlate" if a["significant"] else "")
            for key, a in sorted(lag.items())
        ]
    return lines


def seen_text(row: SurvivalRow) -> str:
    """A kind's share that survives the design, in words, with its interval where it has one."""
    seen = row["seen"]
    if seen is None:
        return "no effect alone"
    if seen < 0:
        return f"sees {seen:.2f} of it: the opposite way"
    if "seen_low" not in row:
        return f"sees {seen:.2f} of it"
    top = row.get("seen_high")
    return f"sees {seen:.2f} of it ({row['seen_low']:.2f} … {'unbounded' if top is None else f'{top:.2f}'})"


def survival_lines(survival: Survival, rule: SurvivalRule | None) -> list[str]:
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
        "over those pairs; against the effect the design measured; 1 sees it whole, 0 not at all, "
        "in brackets the interval of that share, unbounded where the effect alone's reaches 1; "
        f'"not magnified" where {least} pairs show the design\'s effect within {beyond} the bottom of '
        "that interval: only a row not magnified for every kind is guarded):",
        "",
        f"| kind | series metric | alone | alone, {level} | in the design | this design |",
        "|---|---|---|---|---|---|",
    ]
    for kind, rows in survival.items():
        for key, r in rows.items():
            interval = f"×{r['alone_low']} … ×{r['alone_high']} ({r['pairs']} pairs)" if "pairs" in r else "–"
            shown = seen_text(r) + (": not magnified" if r.get("whole") else ": magnification not ruled out")
            lines.append(f"| {TITLE[kind]} | {key} | ×{r['alone']} | {interval} | ×{r['design']} | {shown} |")
    return lines


def pool_lines(pool: dict[str, PoolOffset]) -> list[str]:
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


def _passed(tally: Tally) -> int:
    return sum(tally["statuses"].get(s, 0) for s in (NO_CHANGE, IMPROVEMENT, FASTER))


def as_judged_lines(judged: dict[str, Tally], evidence: dict[str, Evidence] | None = None) -> list[str]:
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
            f"{'–' if mde is None else mde_text(key, mde)} |"
        )
    lines += ["", "| comparison | draws | flagged | passed with ✅ |", "|---|---|---|---|"]
    for kind, tally in judged.items():
        n, ev = tally["comparisons"], (evidence or {}).get(kind)
        lines.append(
            f"| {TITLE[kind]} | {draws_text(ev)} | {count_text(tally['flagged'], n, ev)} | "
            f"{count_text(_passed(tally), n, ev)} |"
        )
    return lines


def render(doc: CalibrationRecord) -> str:
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
        f"{runs.get('contention', 0)} against `--inject-contention-us {doc.get('inject_contention_us')}`, "
        f"{runs.get('leak', 0)} against `--inject-leak-bytes {doc.get('inject_leak_bytes')}`, "
        f"{runs.get('width', 0)} against `--inject-delay-us {doc.get('inject_width_us')} "
        f"--inject-delay-min-connections {doc.get('inject_width_connections')}`; "
        f"{t['aa']['comparisons']} random draws "
        f"of {doc['k']} rounds of each kind, judged as one of {doc.get('looks', 1)} looks "
        f"(alpha / looks); gates `{doc['gates']}`.",
        "",
        "| comparison | draws | flagged (suite) | no change (suite) | passed with ✅ (suite) | "
        + " | ".join(f"{m} regressed" for m in metrics)
        + " | "
        + " | ".join(f"{m} no change" for m in metrics)
        + " |",
        "|---|---|---|---|---|" + "---|" * (2 * len(metrics)),
    ]
    evidence = doc.get("independence") or {}
    for kind, tally in t.items():
        n, ev = tally["comparisons"], evidence.get(kind)
        same = tally["statuses"].get(NO_CHANGE, 0)
        cells = [draws_text(ev)]
        cells += [count_text(x, n, ev) for x in (tally["flagged"], same, _passed(tally))]
        cells += [count_text(tally["regression"][m], n, ev) for m in metrics]
        cells += [count_text(tally["no_change"][m], n, ev) for m in metrics]
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
    lines += [f"- {name}: {mde_text(name, v)}" for name, v in t["aa"]["mde"].items()]
    for kind, eff in doc["effects"].items():
        lines += ["", f"Effect of the {TITLE[kind]} (all its rounds, head / base, merged):", ""]
        lines += [f"- {name}: {effect_text(name, value)}" for name, value in eff.items()]
    lines += ["", "What this runner guards (the record `--calibration` hands the gate):", ""]
    lines += [
        f"- {g['series']} {g['metric']}: guarded (MDE {mde_text(g['metric'], g['mde'], ' %')})"
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
    lines += as_judged_lines(doc.get("as_judged") or {}, evidence)
    lines += independence_lines(evidence)
    lines += survival_lines(doc.get("survival") or {}, doc.get("survival_rule"))
    for series, p in (doc.get("price_of_duet") or {}).items():
        lines += [
            "",
            f"Price of duet, {series}: P50 {p['solo_p50_us']} µs alone, {p['duet_p50_us']} µs "
            f"in a duet (×{p['ratio']}): the other server and a shared client's cost.",
        ]
    return "\n".join(lines) + "\n"
