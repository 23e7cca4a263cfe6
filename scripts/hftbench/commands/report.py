"""`hftbench report RUN_DIR`: report.md, results.csv and plots/ of a run folder
(publish/report.py), compared with the run before it unless told otherwise."""

from __future__ import annotations

from pathlib import Path

from ..errors import UsageError
from ..publish.report import write_all
from ..results import load_run
from .base import Command


class ReportCommand(Command):
    name = "report"
    help = "write report.md, results.csv and plots/ for a run folder"
    description = "Write RUN_DIR/report.md, results.csv and plots/*.png from RUN_DIR/results.json."

    @classmethod
    def add_arguments(cls, p) -> None:
        p.add_argument("run_dir", type=Path, metavar="RUN_DIR")
        p.add_argument(
            "--previous", type=Path, help="run to compare with (default: the newest earlier run beside it)"
        )
        p.add_argument("--no-compare", action="store_true", help="no comparison with a previous run")
        p.add_argument(
            "--gates", type=Path, help="gates file for a soak's drift (default bench-config/gates.yaml)"
        )

    def run(self) -> int:
        args = self.args
        try:
            run = load_run(args.run_dir)
        except (FileNotFoundError, ValueError) as exc:
            raise UsageError(str(exc)) from exc
        previous: Path | bool | None = False if args.no_compare else (args.previous or True)
        print(write_all(run, previous, args.gates))
        return 0
