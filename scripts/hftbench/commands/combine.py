"""`hftbench combine --legs DIR --suite S`: a pool's legs judged together, each runner a
stratum; one verdict.json and summary.md, exit 1 when a gated metric regressed.

Each leg of the pool (pool.py; a job of bench.yml's matrix on its own runner) ran `hftbench
ab` on the same base and head and uploaded its folder: ab/<side>/run_*, and its own
verdict.json (which rounds it counted, its design, what its calibration guards). Here, on
the hosted runner, every leg's counted rounds are tested as that leg tested them
(compare.series_rows: its design, its guards), and the tests of one series × metric are added up
across the runners that judge it (strata.py): blocks within runners, each runner a stratum,
no value pooled across machines. A series is gated when at least one runner guards it, and
judged only by those. The weights are fixed before the data: each runner's calibrated noise,
from the calibration.json its leg uploaded beside its verdict (CALIBRATION), where every
judging runner has one for the series × metric; else equal. The family (Holm), the MDE and
the verdicts then follow as for one runner (family.py), and a complete leg's own regression
is a regression of the pool, named ("runner b alone: P99 +30.0%"), whatever the pooled estimate.

A leg that failed, timed out or never reported is named, and the verdict is partial; a leg
interrupted after two rounds or more (its verdict.json is partial) adds its complete rounds.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from .. import pool
from ..fsio import write_atomic
from ..judge.gates import load_gates
from ..judge.pooled import (
    COMPLETE,
    FAILED,
    INTERRUPTED,
    MISSING,
    Leg,
    alone_text,
    compare_legs,
    record_mdes,
    same_refs,
)
from ..judge.sides import side_from_runs
from ..publish import verdict_text
from ..results import load_run
from .base import Command

CARRIED = ("bisect", "profile")  # a leg's sections the pool verdict shows, from the first leg with one
# The runner's calibration record, copied by its leg beside verdict.json: the pool's weights.
# Never the path the verdict names: that is a path on the runner, and every runner may use
# the same one (hft/runner/README.md), so this host's file there would be another machine's.
CALIBRATION = "calibration.json"


def read_leg(name: str, folder: Path) -> Leg:
    """A leg's artifact: its verdict.json and the rounds that verdict counted."""
    if not folder.is_dir():
        return Leg(name, MISSING, "no artifact: the leg failed before measuring, was cancelled or timed out")
    path = folder / "verdict.json"
    if not path.is_file():
        return Leg(name, FAILED, "no verdict: hftbench ab ended before its first look (see the leg's log)")
    try:
        doc = json.loads(path.read_text())
        sides = {}
        for side in ("base", "head"):
            runs = [load_run(_run_folder(folder, side, rid)) for rid in doc[side]["run_ids"]]
            sides[side] = side_from_runs(side, runs)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return Leg(name, FAILED, f"unreadable leg folder {folder} ({exc})")
    state = INTERRUPTED if doc.get("partial") else COMPLETE
    why = "interrupted: judged on the rounds it completed" if doc.get("partial") else None
    return Leg(name, state, why, doc, sides["base"], sides["head"], _calibrated_mde(folder / CALIBRATION))


def _calibrated_mde(path: Path) -> dict[str, float]:
    """The runner's calibrated MDEs from the record its leg uploaded; none (equal weights) when
    the leg uploaded none or it is not a calibration record."""
    try:
        return record_mdes(json.loads(path.read_text())) if path.is_file() else {}
    except (OSError, ValueError):
        return {}


def _run_folder(folder: Path, side: str, run_id: str) -> Path:
    """Where a leg keeps a counted round: ab's side folder, or (main-bench moves the pushed
    commit's rounds there for the history) runs/rounds/."""
    for place in (folder / "ab" / side, folder / "runs" / "rounds"):
        if (place / run_id / "results.json").is_file():
            return place / run_id
    return folder / "ab" / side / run_id  # load_run names the missing file


def pool_doc(legs: list[Leg], seen: dict[str, list[dict]], alone: list[dict] | None = None) -> dict[str, Any]:
    """verdict.json's `pool`: who took part, what each saw (each row's weight and where it came
    from), who is missing, and each complete leg's own regression (`alone`)."""
    runners = []
    for leg in legs:
        ab = leg.doc.get("ab") or {}
        runners.append({
            "name": leg.name, "state": leg.state, "why": leg.why,
            "runner": (leg.doc.get("head") or {}).get("runner"), "verdict": leg.doc.get("status"),
            "rounds_per_side": ab.get("rounds_per_side"), "measure_s": ab.get("measure_s"),
            "calibration": leg.doc.get("calibration"), "rows": seen.get(leg.name, []),
            "calibrated_mde": leg.calibrated_mde or None,
        })  # fmt: skip
    missing = [leg.name for leg in legs if leg.state != COMPLETE]
    return {"runners": runners, "missing": missing, "partial": bool(missing), "alone": alone or []}


class CombineCommand(Command):
    name = "combine"
    help = "judge a pool's legs together: one verdict, each runner a stratum"
    shared = ("gates",)

    @classmethod
    def add_arguments(cls, p) -> None:
        p.add_argument(
            "--legs", type=Path, required=True, help="folder holding each leg's folder, <prefix><name>"
        )
        p.add_argument(
            "--prefix", default="", help="leg folder prefix, e.g. pr-bench- (the artifacts' names)"
        )
        p.add_argument(
            "--suite", required=True, help="the suite the legs ran: the pool's runners that take it"
        )
        p.add_argument("--pool", type=Path, default=None, help="pool file (default bench-config/pool.yaml)")
        p.add_argument("--out", type=Path, required=True, help="folder for verdict.json and summary.md")

    def run(self) -> int:
        return main(self.args)


def main(args) -> int:
    names = [leg.name for leg in pool.load_pool(args.pool).legs(args.suite)]
    legs = [read_leg(name, args.legs / f"{args.prefix}{name}") for name in names]
    same_refs(legs)
    comparison, seen, alone = compare_legs(legs, load_gates(args.gates))
    doc = comparison.to_json()
    first = next(leg for leg in legs if leg.measured).doc
    for side in ("base", "head"):
        doc[side].update({k: (first.get(side) or {}).get(k) for k in ("commit", "ref")})
    doc["harness_changes"] = first.get("harness_changes") or []
    for key in CARRIED:
        found = next((leg for leg in legs if leg.measured and leg.doc.get(key)), None)
        if found is not None:
            doc[key] = dict(found.doc[key], runner=found.name)
    doc["pool"] = pool_doc(legs, seen, alone)
    doc["partial"] = doc["pool"]["partial"]
    args.out.mkdir(parents=True, exist_ok=True)
    write_atomic(args.out / "verdict.json", json.dumps(doc, indent=2) + "\n")
    write_atomic(args.out / "summary.md", verdict_text.markdown(doc))
    verdict_text.print_console(doc)
    decided = {(a["series"], a["metric"]): a for a in alone if a["decided"]}
    for check in comparison.checks():
        if (check.series, check.metric) in decided:  # the pooled figures are not why it fails
            a = decided[(check.series, check.metric)]
            print(f"hftbench combine: {check.series} {check.metric}: {alone_text(a)} (its own test), "
                  f"beyond the threshold {check.threshold:.2f}", file=sys.stderr)  # fmt: skip
        elif message := check.fails():
            print(f"hftbench combine: {message}", file=sys.stderr)
    return comparison.exit_code
