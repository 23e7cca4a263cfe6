"""The verdict text's pool section (verdict.json's `pool`, written by combine.py): which
runners took part, what each saw, which leg is missing, a runner's own regression that made
the pool's (`alone`), and where the weights came from. Standard library only, like
verdict_text.py: the hosted jobs render it without numpy."""

from __future__ import annotations

from .. import mdsafe, metrics
from ..metrics import fmt_change
from ..verdict import PoolRunner, PoolSection, Verdict

STATE_WORDS = {
    "complete": "complete",
    "interrupted": "interrupted",
    "failed": "failed",
    "missing": "did not report",
    "refused": "refused",
}


def partial_why(doc: Verdict) -> str:
    """What made a verdict partial: the pool's missing legs, or an interrupted run."""
    if not doc.pool:
        return "interrupted"
    by_name = {r.name: r for r in doc.pool.runners}
    missing = [
        f"{mdsafe.text(n)} {STATE_WORDS.get(by_name[n].state if n in by_name else None, 'missing')}"
        f"{' (optional)' if n in by_name and by_name[n].optional else ''}"
        for n in doc.pool.missing
    ]
    return ", ".join(missing) if missing else "interrupted"


def check_lines(pool: PoolSection) -> list[str]:
    """Why the pool's check fails whatever the verdict says (a leg refused or required and
    absent), or which optional runners it passed without."""
    if pool.check.why:
        return [f"- **This check fails**: {mdsafe.text(w)}" for w in pool.check.why]
    absent = [r.name for r in pool.runners if r.optional and r.state != "complete"]
    return [f"- `{mdsafe.text(n)}` is optional (pool.yaml): the check passes without it." for n in absent]


def pool_lines(doc: Verdict) -> list[str]:
    """The runners of a pool verdict, one line each, then each gated row per runner."""
    pool = doc.pool
    if not pool:
        return []
    out = [f"**Runners ({len(pool.runners)}), each a stratum of the test:**", ""]
    for r in pool.runners:
        name = mdsafe.text(r.name)
        if r.state in ("complete", "interrupted"):
            own = (r.verdict or "?").replace("_", " ")
            calibrated = "its calibration" if r.calibration else "gates.yaml's series"
            out.append(
                f"- `{name}`: {r.state}, {r.rounds_per_side} rounds a side, on its own: {own}; "
                f"guards by {calibrated}"
            )
        else:
            state = STATE_WORDS.get(r.state, r.state)
            out.append(f"- `{name}`: **{state}**: {mdsafe.text(r.why or '')}")
    if pool.partial:
        out.append(f"- This verdict is **partial**: {partial_why(doc)}; the other runners decided it.")
    out += check_lines(pool)
    out += _alone_lines(pool)
    out.append("")
    table = _seen_table(doc, pool.runners)
    return out + table + _weights_lines(pool.runners, table)


def _alone_lines(pool: PoolSection) -> list[str]:
    """A runner whose own test found a regression the pooled estimate did not: named, first."""
    out = []
    for a in pool.alone:
        if not a.decided:
            continue
        series, metric = mdsafe.text(a.series), mdsafe.text(metrics.label(a.metric))
        ci = a.ci or [None, None]
        within = f" (interval {fmt_change(ci[0])} … {fmt_change(ci[1])})" if None not in ci else ""
        out.append(
            f"- **Regression on runner `{mdsafe.text(a.runner)}` alone**: {series} {metric} "
            f"{fmt_change(a.ratio)}{within} in its own test; pooled over the runners "
            f"{fmt_change(a.pooled_ratio)}. A runner's own regression is never averaged away."
        )
    return out


def _weights_lines(runners: list[PoolRunner], table: list[str]) -> list[str]:
    """Where the table's weights came from: fixed before the data, calibrated or equal."""
    bases = {row.weight_from for r in runners for row in r.rows if row.gated}
    bases &= {"calibration", "equal"}
    if not table or not bases:
        return []
    if bases == {"calibration"}:
        how = "from each runner's calibration record, ∝ 1 / log(its A/A MDE)²"
    elif bases == {"equal"}:
        how = "equal (a runner that judges a row has no calibration figure for it in its artifact)"
    else:
        how = "from the runners' calibration records where each runner that judges a row has one, else equal"
    return [f"Weights are fixed before the data: {how}.", ""]


def _seen_table(doc: Verdict, runners: list[PoolRunner]) -> list[str]:
    """Gated series × metric: each runner's own change and weight, then the pooled one."""
    shown = [r for r in runners if r.rows]
    pooled = {(r.series, r.metric): r for r in doc.gated_results()}
    if len(shown) < 2 or not pooled:
        return []
    head = "| series | metric | " + " | ".join(f"`{mdsafe.text(r.name)}`" for r in shown) + " | pool |"
    lines = [head, "|" + "---|" * (len(shown) + 3)]
    for (series, metric), p in pooled.items():
        cells = []
        for r in shown:
            row = next((x for x in r.rows if x.series == series and x.metric == metric), None)
            if row is None or row.ratio is None:
                cells.append("–")
            else:
                used = f" (w {row.weight:.2f})" if row.weight else " (not judged here)"
                cells.append(f"{fmt_change(row.ratio)}{used}")
        pool_cell = fmt_change(p.ratio) if p.ratio is not None else "–"
        label = mdsafe.text(metrics.label(metric))
        lines.append(f"| {mdsafe.text(series)} | {label} | " + " | ".join(cells) + f" | **{pool_cell}** |")
    return [*lines, ""]
