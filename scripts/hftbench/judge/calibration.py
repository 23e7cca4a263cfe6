"""A runner's calibration record: which series × metrics this runner can judge, and how well.

`hftbench calibrate` measures A/A comparisons of one build and writes calibration.json. Its
`guards` list holds, per series × gated metric of the suite, the A/A false-alarm rate, the
median minimum detectable effect (MDE), and whether this runner guards it: a metric is
guarded when its A/A false alarms are at most MAX_FALSE_ALARMS and its MDE is within its
gates.yaml threshold (a 10 % gate needs a runner that can see 10 %), and its intervals are
as wide as their evidence: in the A/A draws they held 1 at least as often as the confidence
they state, less MAX_COVERAGE_SHORTFALL (a 98.75 % interval that holds 1 in 90 % of A/A
draws is a claim stronger than its data, and so are its MDE and its "no change"), and the
design is shown not to magnify a slowdown: for every injected kind, the solo pairs (each
server measured alone) show the design's ratio within MAX_AMPLIFICATION of the effect alone
(hidden.shown_whole: against the bottom of that effect's interval, over enough pairs). The
burden of proof lies with the design: a row the solo runs do not show whole, or that no solo
run measured, is reported with its magnification, not guarded, since it would fail a change
whose real cost is under the threshold. latency-8c in a duet is the case in point: the lanes
queue at the slower server, so base speeds up as head slows (docs/measurements.md, "The
concurrency series").

The gate (`ab`, `compare`, `bisect`) reads the record named by `--calibration` or
$HFTBENCH_CALIBRATION: on the runner it is a root-owned file outside the repository, so a
pull request cannot loosen it. The gate then judges exactly the guarded metrics, and every
verdict names the others with the reason ("P99 of large/hft: MDE +60.0 % > 10 % on this
runner"). A tuned runner thus guards more than a noisy VM without an edit to gates.yaml;
thresholds and alpha stay the promise. Without a record, gates.yaml's `series` decides.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import replace
from pathlib import Path

import numpy as np

from ..errors import UsageError
from .calibration_shapes import GuardRow, PSpread, Survival, Tally
from .gates import Gates

ENV = "HFTBENCH_CALIBRATION"
MAX_FALSE_ALARMS = 0.01
MAX_COVERAGE_SHORTFALL = 0.02  # the sampling error of a coverage rate over ~200 overlapping draws
# A design seeing 1.5x a cost's effect (log against log) reads a 6.6 % cost as 10 %; the
# honest metrics measured 0.6-1.3 on the 2-core VM, and the test is against the top of the
# effect's interval alone, so noise in 4-8 solo runs does not refuse a metric by itself.
MAX_AMPLIFICATION = 1.5
RECORD_VERSION = 1


def p_spread(p_values: list[float]) -> PSpread:
    """How A/A p-values spread: the share below 0.01 and 0.05 and the largest gap between
    their empirical CDF and the uniform one (Kolmogorov's D). A sound test's A/A p-values are
    uniform; a pile near 0 is an interval too narrow for its data (pure)."""
    p = np.sort(np.asarray(p_values, dtype=float))
    if len(p) == 0:
        return {"n": 0}
    n = len(p)
    ranks = np.arange(1, n + 1) / n
    ks = float(max(np.max(ranks - p), np.max(p - (ranks - 1.0 / n))))
    return {
        "n": n,
        "below_0.01": round(float(np.mean(p < 0.01)), 4),
        "below_0.05": round(float(np.mean(p < 0.05)), 4),
        "ks_d": round(ks, 4),
    }


def guard_rows(aa: Tally, gates: Gates, survival: Survival | None = None) -> list[GuardRow]:
    """One row per series × gated metric measured in the A/A tally (calibrate's `_tally`):
    its false-alarm rate, its A/A coverage, its median MDE, guarded or not and why (pure).
    `survival` (hidden.survival) must show that the design does not magnify a slowdown."""
    rows: list[GuardRow] = []
    n = aa["comparisons"]
    for key in sorted(aa["series_tested"]):
        series, metric = key.rsplit(" ", 1)
        m = gates.metric(metric)
        if m.kind == "errors":  # a correctness check with no noise to calibrate (Gates.why_not_judged)
            continue
        rate = aa["series_regression"].get(key, 0) / n if n else 1.0
        mde = aa["mde"].get(key)
        tested = aa["series_tested"][key]
        covered = aa.get("series_covered", {}).get(key)
        coverage = round(covered / tested, 4) if covered is not None and tested else None
        why = None
        if mde is None or not math.isfinite(mde):
            why = "no finite MDE on this runner (too few samples or runs)"
        elif rate > MAX_FALSE_ALARMS:
            why = f"A/A false alarms {100 * rate:.1f} % > {100 * MAX_FALSE_ALARMS:.0f} % on this runner"
        elif coverage is not None and coverage < gates.confidence - MAX_COVERAGE_SHORTFALL:
            why = (
                f"A/A intervals held 1 in {100 * coverage:.1f} % of draws, they state "
                f"{100 * gates.confidence:.2f} %: too narrow for this runner's noise"
            )
        elif mde > m.threshold and m.kind == "memory":  # bytes per order, a difference
            why = f"MDE {mde:,.1f} B/order > {m.threshold:,.0f} B/order on this runner"
        elif mde > m.threshold:
            why = f"MDE {100 * (mde - 1):+.1f} % > {100 * (m.threshold - 1):.0f} % on this runner"
        elif m.kind != "memory":  # a server's own bytes per order: no shared host to magnify them
            why = not_shown_whole(key, survival)
        rows.append(
            {
                "series": series,
                "metric": metric,
                "false_alarms": round(rate, 4),
                "coverage": coverage,
                "p_values": aa.get("series_p", {}).get(key),
                "mde": mde,
                "guarded": why is None,
                "why_not": why,
            }
        )
    for key, why in sorted((aa.get("series_why_not") or {}).items()):  # never tested here
        if key not in aa["series_tested"] and gates.metric(key.rsplit(" ", 1)[1]).kind != "errors":
            series, metric = key.rsplit(" ", 1)
            rows.append(
                {
                    "series": series,
                    "metric": metric,
                    "false_alarms": None,
                    "mde": None,
                    "guarded": False,
                    "why_not": why,
                }
            )
    return rows


def not_shown_whole(key: str, survival: Survival | None) -> str | None:
    """None where every injected kind's solo pairs show `key` whole (hidden.shown_whole), else
    why not, naming the first kind that does not, with its magnification (pure)."""
    if not survival:
        return (
            "not shown whole: calibrate measured no server alone (--solo-runs), "
            "so its magnification is unknown"
        )
    for kind, rows in survival.items():
        seen = rows.get(key)
        if seen is None:
            return f"not shown whole: no solo pair of {kind} measured it"
        if seen.get("whole", False):
            continue
        magnified = f", {seen['seen']} of it" if seen.get("seen") is not None else ""
        return (
            f"not shown whole ({kind}): ×{seen['design']} in the design against ×{seen['alone']} with "
            f"each server alone (×{seen['alone_low']} … ×{seen['alone_high']} over {seen['pairs']} "
            f"solo pairs{magnified}); guarded only within {MAX_AMPLIFICATION:g}× of its bottom"
        )
    return None


def guards_by_key(rows: list[GuardRow]) -> dict[str, str | None]:
    """ "series metric" -> None (guarded) or why not: what Gates.guards holds (pure)."""
    return {
        f"{r['series']} {r['metric']}": (None if r.get("guarded") else r.get("why_not") or "not guarded")
        for r in rows
    }


def load_guards(path: Path) -> dict[str, str | None]:
    """ "series metric" -> None (guarded) or why not, from a calibration.json; UsageError
    naming the file and the fix when it is not one."""
    fix = "run `hftbench calibrate` on this runner and point --calibration at its calibration.json"
    try:
        doc = json.loads(Path(path).read_text())
    except FileNotFoundError:
        raise UsageError(f"{path}: no such calibration record; {fix}") from None
    except (OSError, json.JSONDecodeError) as exc:
        raise UsageError(f"{path}: not a readable calibration record ({exc}); {fix}") from exc
    rows = doc.get("guards") if isinstance(doc, dict) else None
    if not isinstance(rows, list) or not rows:
        raise UsageError(f"{path}: no 'guards' list; it was not written by this hftbench's calibrate")
    return guards_by_key(rows)


def load_survival(path: Path) -> dict[str, dict[str, float | None]] | None:
    """kind -> "series metric" -> the share of its effect alone the design shows (calibrate's
    `survival`), or None for a record written before calibrate measured it."""
    doc = json.loads(Path(path).read_text())
    survival = doc.get("survival") if isinstance(doc, dict) else None
    if not isinstance(survival, dict) or not survival:
        return None
    return {
        kind: {key: row.get("seen") for key, row in rows.items() if isinstance(row, dict)}
        for kind, rows in survival.items()
        if isinstance(rows, dict)
    }


def apply(gates: Gates, path: Path | str | None, environ=os.environ) -> Gates:
    """The gates with this runner's record (--calibration, else $HFTBENCH_CALIBRATION), or
    unchanged when neither names one."""
    chosen = path or environ.get(ENV)
    if not chosen:
        return gates
    guards = load_guards(Path(chosen))
    return replace(gates, guards=guards, calibration=str(chosen), survival=load_survival(Path(chosen)))
