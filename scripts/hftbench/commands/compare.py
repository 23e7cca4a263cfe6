"""`hftbench compare BASE HEAD`: two sets of runs, or a run against the history store's
baseline, tested series × metric by the gate (judge/compare.py); verdict.json, the summary,
and exit 1 when a gated metric regressed."""

from __future__ import annotations

from pathlib import Path

from ..judge import calibration
from ..judge import compare as compare_mod
from ..judge.compare import Comparison, compare_sides
from ..judge.gates import Gates, load_gates
from ..store.baseline import load_side
from . import flags
from .base import Command


def run_compare(
    base_path: Path,
    head_path: Path,
    gates: Gates,
    *,
    branch: str | None = "main",
    runner: str | None = None,
    last: int = 10,
) -> Comparison:
    """Load both sides (a store BASE takes suite and runner from HEAD) and compare."""
    head = load_side(head_path)
    suite, runner = head.meta.get("suite"), runner or head.meta.get("runner")
    base = load_side(base_path, suite=suite, branch=branch, runner=runner, last=last)  # filters: a store's
    return compare_sides(base, head, gates)


class CompareCommand(Command):
    name = "compare"
    help = "compare two sets of runs (or a run against the history store): verdict, exit 1 on regression"
    shared = ("gates",)
    description = compare_mod.__doc__

    @classmethod
    def add_arguments(cls, p) -> None:
        p.add_argument("base", type=Path, help="run folder, folder of run folders, or history store")
        p.add_argument("head", type=Path, help="run folder or folder of run folders")
        flags.add(p, cls, ("calibration",))
        p.add_argument(
            "--summary", type=Path, help="write the markdown summary here (job summary, PR comment)"
        )
        p.add_argument("--json", type=Path, dest="json_out", help="write verdict.json here")
        flags.add(p, cls, ("branch",))
        p.add_argument("--runner", help="store baseline: runner fingerprint id (default: the head run's)")
        flags.add(p, cls, ("last",))

    def run(self) -> int:
        args = self.args
        comparison = run_compare(
            args.base,
            args.head,
            calibration.apply(load_gates(self.gates_file(args.gates)), args.calibration),
            branch=args.branch,
            runner=args.runner,
            last=args.last,
        )
        self.close(comparison.verdict(), comparison.failures(), verdict=args.json_out, summary=args.summary)
        return comparison.exit_code
