#!/usr/bin/env python3
"""Each act run's jobs on a timeline: reads the act.log (act --json) of every run that the act
tests kept under ACT_TEST_DIR and prints each run's seconds, then each job's first and last
second from the run's start (act runs a workflow's jobs in stages, one stage after the other).

    ACT_TEST_DIR=/tmp/act .venv/bin/pytest scripts/tests/ci/test_workflows_act.py -m act
    scripts/experiments/act-timeline.py /tmp/act
"""

from __future__ import annotations

import argparse
import datetime
import json
from pathlib import Path


def spans(log: Path) -> tuple[float, dict[str, tuple[float, float]]]:
    """The run's seconds and each job's (first, last) second from the run's first line."""
    stamps: list[tuple[datetime.datetime, str | None]] = []
    for line in log.read_text().splitlines():
        try:
            doc = json.loads(line)
        except ValueError:
            continue
        if "time" in doc:
            when = datetime.datetime.fromisoformat(doc["time"].replace("Z", "+00:00"))
            stamps.append((when, doc.get("jobID")))
    if not stamps:
        return 0.0, {}
    start = stamps[0][0]
    jobs: dict[str, tuple[float, float]] = {}
    for when, job in stamps:
        if job:
            s = (when - start).total_seconds()
            first, last = jobs.get(job, (s, s))
            jobs[job] = (min(first, s), max(last, s))
    return (stamps[-1][0] - start).total_seconds(), jobs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir", type=Path, help="the ACT_TEST_DIR of a run of the act tests")
    args = parser.parse_args()
    logs = sorted(args.dir.glob("*/act.log")) + sorted(args.dir.glob("*/*/act.log"))
    if not logs:
        parser.error(f"no */act.log under {args.dir}: run the act tests with ACT_TEST_DIR={args.dir}")
    for log in logs:
        total, jobs = spans(log)
        print(f"{log.parent.relative_to(args.dir)}: {total:.0f} s")
        for job, (first, last) in sorted(jobs.items(), key=lambda kv: kv[1]):
            print(f"  {job:<20} {first:5.0f} {last:5.0f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
