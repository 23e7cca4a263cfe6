#!/usr/bin/env python3
"""Where a pytest pass spends its time: reads the output of a run with `--durations=0` (a log
file, or stdin) and prints the seconds by module (setup, call and teardown together), then the
slowest phases. A module fixture that a pytest-xdist pass makes once per worker shows as several
long setups of one module.

    .venv/bin/pytest -m "measuring or act" --durations=0 -q > serial.log
    scripts/experiments/durations-by-module.py serial.log --top 15
"""

from __future__ import annotations

import argparse
import collections
import re
import sys

PHASE = re.compile(r"^([\d.]+)s (setup|call|teardown)\s+(\S+)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("log", nargs="?", type=argparse.FileType(), default=sys.stdin)
    parser.add_argument("--top", type=int, default=20, help="rows of each table (default 20)")
    args = parser.parse_args()
    by_module: collections.Counter[str] = collections.Counter()
    setups: collections.Counter[str] = collections.Counter()
    phases = []
    for line in args.log:
        m = PHASE.match(line)
        if not m:
            continue
        seconds, phase, node = float(m[1]), m[2], m[3]
        module = node.split("::", 1)[0]
        by_module[module] += seconds
        setups[module] += phase == "setup" and seconds >= 1.0
        phases.append((seconds, phase, node))
    if not phases:
        print(f"{args.log.name}: no durations; run pytest with --durations=0", file=sys.stderr)
        return 1
    print(f"{sum(by_module.values()):.1f} s in {len(by_module)} modules")
    print(f"{'s':>8}  setups >= 1 s  module")
    for module, seconds in by_module.most_common(args.top):
        print(f"{seconds:8.1f}  {setups[module]:13d}  {module}")
    print(f"\n{'s':>8}  phase     test")
    for seconds, phase, node in sorted(phases, reverse=True)[: args.top]:
        print(f"{seconds:8.1f}  {phase:8}  {node}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
