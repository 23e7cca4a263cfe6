"""The verdict text's pool section (verdict.json's `pool`, written by combine.py): which
runners took part, what each saw, and which leg is missing. Standard library only, like
verdict_text.py: the hosted jobs render it without numpy."""

from __future__ import annotations

from typing import Any

from .. import mdsafe, metrics
from ..metrics import fmt_change

STATE_WORDS = {
    "complete": "complete",
    "interrupted": "interrupted",
    "failed": "failed",
    "missing": "did not report",
}


def partial_why(doc: dict[str, Any]) -> str:
    """What made a verdict partial: the pool's missing legs, or an interrupted run."""
    pool = doc.get("pool") or {}
    by_name = {r["name"]: r for r in pool.get("runners") or []}
    missing = [f"{mdsafe.text(n)} {STATE_WORDS.get(by_name.get(n, {}).get('state'), 'missing')}"
               for n in pool.get("missing") or []]  # fmt: skip
    return ", ".join(missing) if missing else "interrupted"


def pool_lines(doc: dict[str, Any]) -> list[str]:
    """The runners of a pool verdict, one line each, then each gated row per runner."""
    pool = doc.get("pool")
    if not pool:
        return []
    runners = pool.get("runners") or []
    out = [f"**Runners ({len(runners)}), each a stratum of the test:**", ""]
    for r in runners:
        name = mdsafe.text(r["name"])
        if r["state"] in ("complete", "interrupted"):
            rounds = r.get("rounds_per_side")
            own = (r.get("verdict") or "?").replace("_", " ")
            calibrated = "its calibration" if r.get("calibration") else "gates.yaml's series"
            out.append(
                f"- `{name}`: {r['state']}, {rounds} rounds a side, on its own: {own}; guards by {calibrated}"
            )
        else:
            state = STATE_WORDS.get(r["state"], r["state"])
            out.append(f"- `{name}`: **{state}**: {mdsafe.text(r.get('why') or '')}")
    if pool.get("partial"):
        out.append(f"- This verdict is **partial**: {partial_why(doc)}; the other runners decided it.")
    out.append("")
    table = _seen_table(doc, runners)
    return out + table


def _seen_table(doc: dict[str, Any], runners: list[dict[str, Any]]) -> list[str]:
    """Gated series × metric: each runner's own change and weight, then the pooled one."""
    shown = [r for r in runners if r.get("rows")]
    pooled = {
        (r["scenario"] + "/" + r["client"], r["metric"]): r for r in doc.get("results") or [] if r["gated"]
    }
    if len(shown) < 2 or not pooled:
        return []
    head = "| series | metric | " + " | ".join(f"`{mdsafe.text(r['name'])}`" for r in shown) + " | pool |"
    lines = [head, "|" + "---|" * (len(shown) + 3)]
    for (series, metric), p in pooled.items():
        cells = []
        for r in shown:
            row = next((x for x in r["rows"] if x["series"] == series and x["metric"] == metric), None)
            if row is None or row.get("ratio") is None:
                cells.append("–")
            else:
                used = f" (w {row['weight']:.2f})" if row.get("weight") else " (not judged here)"
                cells.append(f"{fmt_change(row['ratio'])}{used}")
        pool_cell = fmt_change(p["ratio"]) if p.get("ratio") is not None else "–"
        label = mdsafe.text(metrics.label(metric))
        lines.append(f"| {mdsafe.text(series)} | {label} | " + " | ".join(cells) + f" | **{pool_cell}** |")
    return [*lines, ""]
