"""A runner's calibration record: which series × metrics this runner can judge, and how well.

`hftbench calibrate` measures A/A comparisons of one build and writes calibration.json. Its
`guards` list holds, per series × gated metric of the suite, the A/A false-alarm rate, the
median minimum detectable effect (MDE), and whether this runner guards it: a metric is
guarded when its A/A false alarms are at most MAX_FALSE_ALARMS and its MDE is within its
gates.yaml threshold (a 10 % gate needs a runner that can see 10 %).

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
from typing import Any

from ..errors import UsageError
from .gates import Gates

ENV = "HFTBENCH_CALIBRATION"
MAX_FALSE_ALARMS = 0.01
RECORD_VERSION = 1


def guard_rows(aa: dict[str, Any], gates: Gates, no_mde_why: str | None = None) -> list[dict[str, Any]]:
    """One row per series × gated metric measured in the A/A tally (calibrate's `_tally`):
    its false-alarm rate, its median MDE, guarded or not and why (pure). `no_mde_why`: what
    the design says of an infinite MDE, when it knows (paired rounds too few to reach the level)."""
    rows = []
    n = aa["comparisons"]
    for key in sorted(aa["series_tested"]):
        series, metric = key.rsplit(" ", 1)
        m = gates.metric(metric)
        if m.kind == "errors":  # a correctness check with no noise to calibrate (Gates.why_not_judged)
            continue
        rate = aa["series_regression"].get(key, 0) / n if n else 1.0
        mde = aa["mde"].get(key)
        why = None
        if mde is None or not math.isfinite(mde):
            why = no_mde_why or "no finite MDE on this runner (too few samples or runs)"
        elif rate > MAX_FALSE_ALARMS:
            why = f"A/A false alarms {100 * rate:.1f} % > {100 * MAX_FALSE_ALARMS:.0f} % on this runner"
        elif mde > m.threshold:
            why = f"MDE {100 * (mde - 1):+.1f} % > {100 * (m.threshold - 1):.0f} % on this runner"
        rows.append({"series": series, "metric": metric, "false_alarms": round(rate, 4),
                     "mde": mde, "guarded": why is None, "why_not": why})  # fmt: skip
    for key, why in sorted((aa.get("series_why_not") or {}).items()):  # never tested here
        if key not in aa["series_tested"] and gates.metric(key.rsplit(" ", 1)[1]).kind != "errors":
            series, metric = key.rsplit(" ", 1)
            rows.append({"series": series, "metric": metric, "false_alarms": None, "mde": None,
                         "guarded": False, "why_not": why})  # fmt: skip
    return rows


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
    return {f"{r['series']} {r['metric']}": (None if r.get("guarded") else r.get("why_not") or "not guarded")
            for r in rows}  # fmt: skip


def apply(gates: Gates, path: Path | str | None, environ=os.environ) -> Gates:
    """The gates with this runner's record (--calibration, else $HFTBENCH_CALIBRATION), or
    unchanged when neither names one."""
    chosen = path or environ.get(ENV)
    if not chosen:
        return gates
    return replace(gates, guards=load_guards(Path(chosen)), calibration=str(chosen))


def add_calibration_arg(p) -> None:
    p.add_argument(
        "--calibration",
        type=Path,
        help=f"this runner's calibration.json (default ${ENV}): judge the series × metrics it guards",
    )
