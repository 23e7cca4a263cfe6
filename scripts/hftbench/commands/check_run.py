"""`hftbench check-run VERDICT --head-sha SHA --out FILE`: the pull request's verdict as the body
of a check run (publish/check_run.py: success, neutral for an inconclusive verdict, failure),
for scripts/ci/check-run to post. A verdict that is missing or unreadable is a failure check
run, never an error without one: what is not judged cannot be green. Runs on the hosted
runner: no numpy, no scipy. Exit 1 when the conclusion is failure, else 0."""

from __future__ import annotations

import json
from pathlib import Path

from ..errors import UsageError
from ..fsio import write_atomic
from ..publish import check_run, verdict_text
from . import flags
from .base import Command


class CheckRunCommand(Command):
    name = "check-run"
    help = "verdict.json as a check run's body: success, neutral (inconclusive) or failure"

    @classmethod
    def add_arguments(cls, p) -> None:
        p.add_argument("verdict", type=Path, help="verdict.json written by combine / ab / compare")
        flags.add(p, cls, ("head_sha",))
        p.add_argument(
            "--name", default=check_run.NAME, help=f"the check run's name (default {check_run.NAME!r})"
        )
        flags.add(p, cls, ("run_url",))
        p.add_argument("--out", type=Path, help="write the JSON body here (default: stdout)")

    def run(self) -> int:
        args = self.args
        try:
            run = check_run.decide(verdict_text.load(args.verdict), run_url=args.run_url)
        except (UsageError, ValueError, TypeError, KeyError, AttributeError) as exc:
            run = check_run.decide(None, why=str(exc), run_url=args.run_url)
        text = json.dumps(run.payload(args.head_sha, args.name), ensure_ascii=False, indent=1) + "\n"
        if args.out:
            write_atomic(args.out, text)
        else:
            print(text, end="")
        return 1 if run.fails else 0
