"""`hftbench export-gab RUN`: a run's latencies and throughputs as github-action-benchmark
JSON (publish/gab.py)."""

from __future__ import annotations

import json
from pathlib import Path

from .. import results
from ..errors import UsageError
from ..fsio import write_atomic
from ..publish import gab
from .base import Command


class ExportGabCommand(Command):
    name = "export-gab"
    help = "write github-action-benchmark JSON (customSmallerIsBetter / customBiggerIsBetter)"
    description = gab.__doc__

    @classmethod
    def add_arguments(cls, p) -> None:
        p.add_argument("run", type=Path, help="run folder written by `hftbench run`")
        p.add_argument("--out", type=Path, help="output folder (default: the run folder)")

    def run(self) -> int:
        args = self.args
        try:
            run = results.load_run(args.run)
        except (OSError, ValueError) as exc:
            raise UsageError(str(exc)) from exc
        latency, throughput = gab.export(run)
        if not latency and not throughput:
            raise UsageError(
                f"{args.run}: no successful cell with a histogram to export; check its report.md"
            )
        out = args.out or run.path
        for name, entries in (("gab-latency.json", latency), ("gab-throughput.json", throughput)):
            write_atomic(out / name, json.dumps(entries, indent=2) + "\n")
            print(out / name)
        return 0
