"""Per series × metric over independent `hftbench ab` sessions (each folder one session's
verdict.json, e.g. failure-heads.py's OUT/aa-*): how many read each verdict, and the median
and range of the minimum detectable effect each session stated, at the level its verdict
shows (printed once: the verdicts' `confidence`). The MDEs docs/measurements.md quotes.

    python3 scripts/experiments/session-mdes.py OUT/aa-* [--all]

Gated rows only, and P99.9 (reported, quoted beside them); --all: every row. A ratio's MDE
is printed as a change (+1.66 %), a difference's (memory per order) in its unit.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections import Counter
from pathlib import Path

DIFFERENCES = {"memory_bytes_per_order": "B/order"}


def rows(folders: list[Path], every: bool) -> tuple[dict[str, list[dict]], set[float], int]:
    by_key: dict[str, list[dict]] = {}
    levels, read = set(), 0
    for folder in folders:
        if not folder.is_dir():  # a session's log beside its folder (OUT/aa-01.log)
            continue
        verdict = folder / "verdict.json"
        if not verdict.is_file():
            print(f"session-mdes: {verdict} not found: pass ab output folders", file=sys.stderr)
            continue
        read += 1
        doc = json.loads(verdict.read_text())
        if doc.get("confidence") is not None:
            levels.add(doc["confidence"])
        for r in doc.get("results", []):
            if every or r.get("gated") or r.get("metric") == "p999_us":
                by_key.setdefault(f"{r['scenario']}/{r['client']} {r['metric']}", []).append(r)
    return by_key, levels, read


def shown(metric: str, value: float) -> str:
    unit = DIFFERENCES.get(metric)
    return f"{value:.2f} {unit}" if unit else f"{(value - 1) * 100:+.2f} %"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="+", type=Path)
    parser.add_argument("--all", action="store_true", help="every row, not only gated ones and P99.9")
    args = parser.parse_args(argv)
    by_key, levels, read = rows(args.folders, args.all)
    if not by_key:
        print("session-mdes: no verdict read", file=sys.stderr)
        return 2
    print(f"sessions: {read}; interval level(s): {sorted(levels)}")
    for key, found in by_key.items():
        metric = key.rsplit(" ", 1)[1]
        verdicts = Counter(r["verdict"] for r in found)
        mdes = [r["mde"] for r in found if r.get("mde") is not None]
        spread = ""
        if mdes:
            spread = (
                f"MDE median {shown(metric, statistics.median(mdes))} "
                f"({shown(metric, min(mdes))} … {shown(metric, max(mdes))})"
            )
        gated = "gated" if any(r.get("gated") for r in found) else "reported"
        print(f"{key:42} {gated:8} {dict(verdicts)}  {spread}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
