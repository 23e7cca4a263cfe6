"""How much of a CPU a busy-polling process gets beside whatever else runs there (issue 35).

Spins on one CPU for a few seconds, as client-hft's busy-polling worker does, at a nice, in
a session of its own; with --autogroup it gives its session's autogroup the same nice (what
measure/placement.py does for the client). Prints its share of the CPU and the gaps (the
times it was off the CPU for more than 50 us): what an open-loop client would lose from its
schedule. Run it beside a neighbour, e.g. `taskset -c 0 nice -n 19 sh -c 'while :; do :; done'`
started from another shell (another session).

    .venv/bin/python scripts/experiments/spin-share.py [--cpu 0] [--nice -20] [--autogroup] [--seconds 3]
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

AUTOGROUP = Path("/proc/self/autogroup")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cpu", type=int, default=0)
    ap.add_argument("--nice", type=int, default=-20)
    ap.add_argument("--autogroup", action="store_true", help="give the session's autogroup the nice too")
    ap.add_argument("--seconds", type=float, default=3.0)
    args = ap.parse_args()
    os.setsid()
    os.sched_setaffinity(0, {args.cpu})
    os.setpriority(os.PRIO_PROCESS, 0, args.nice)
    if args.autogroup and AUTOGROUP.exists():
        AUTOGROUP.write_text(str(args.nice))
    group = AUTOGROUP.read_text().strip() if AUTOGROUP.exists() else "no autogroup"
    gaps: list[float] = []
    start, cpu0 = time.perf_counter(), time.process_time()
    last = start
    while (now := time.perf_counter()) - start < args.seconds:
        if now - last > 50e-6:
            gaps.append(now - last)
        last = now
    share = (time.process_time() - cpu0) / (time.perf_counter() - start)
    gaps.sort()
    p99, most = (gaps[int(len(gaps) * 0.99)], gaps[-1]) if gaps else (0.0, 0.0)
    print(
        f"CPU {args.cpu}, nice {args.nice}, {group}: share {share:.3f}; {len(gaps)} gaps > 50 us, "
        f"{sum(gaps) * 1e3:.1f} ms in all, P99 {p99 * 1e3:.2f} ms, max {most * 1e3:.2f} ms"
    )


if __name__ == "__main__":
    main()
