"""`hftbench verdict-text VERDICT --as summary|comment|issue`: a verdict.json as the job
summary, the pull request's comment or the issue body (publish/verdict_text.py). Runs on the
hosted runner: no numpy, no scipy."""

from __future__ import annotations

from pathlib import Path

from ..fsio import write_atomic
from ..publish import verdict_text
from . import flags
from .base import Command


class VerdictTextCommand(Command):
    name = "verdict-text"
    help = "render verdict.json as a job summary, PR comment or issue body"
    description = verdict_text.__doc__

    @classmethod
    def add_arguments(cls, p) -> None:
        p.add_argument("verdict", type=Path, help="verdict.json written by compare / ab / main-bench")
        p.add_argument("--as", dest="kind", choices=sorted(verdict_text.RENDERERS), default="summary")
        flags.add(p, cls, ("run_url",))
        p.add_argument("--out", type=Path, help="write here (default: stdout)")

    def run(self) -> int:
        args = self.args
        text = verdict_text.RENDERERS[args.kind](verdict_text.load(args.verdict), run_url=args.run_url)
        if args.out:
            write_atomic(args.out, text)
        else:
            print(text)
        return 0
