"""`hftbench creep`: has main crept past the gate since a fixed reference, push by push?

    hftbench creep --store DIR [--suite pr] [--days 14 | --since SHA] [--verdict verdict.json]
                   [--runner ID] [--gates FILE] [--out DIR]

Chains the ratios each push to main was measured with against the push before it (the store
keeps each push's verdict) from the newest push back to the reference: the stored baseline
`--days` back, or the commit `--since` names (a release tag's: `git rev-parse v1.2^{commit}`).
`--verdict` is a push not stored yet (main's verdict.json, in the job that reports it).
Writes creep.json and creep.md to --out; exit 1 when a gated series × metric crept past its
threshold, significantly (judge/creep.py says how, and what it cannot see).
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import asdict
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import cast

from ..errors import UsageError
from ..judge import creep
from ..judge.gates import load_gates
from ..publish import creep_issue
from ..store import history as hs
from ..stored_verdict import read_any
from ..verdict import Verdict
from . import flags
from .base import Command

DEFAULT_DAYS = 14


class CreepCommand(Command):
    name = "creep"
    help = "main's creep: the pushes that each passed, added up against a fixed reference"
    shared = ("suite", "gates", "out")

    @classmethod
    def add_arguments(cls, p) -> None:
        flags.add(p, cls, ("store", "branch"))
        p.add_argument("--runner", help="runs of this runner id only (default: any)")
        since = p.add_mutually_exclusive_group()
        since.add_argument(
            "--days",
            type=float,
            default=DEFAULT_DAYS,
            help=f"reference: the baseline this many days back (default {DEFAULT_DAYS})",
        )
        since.add_argument("--since", help="reference: this commit (hex sha, e.g. a release tag's)")
        p.add_argument(
            "--verdict", type=Path, help="the newest push's verdict.json, when not in the store yet"
        )

    def run(self) -> int:
        args = self.args
        if args.since is not None and not re.fullmatch(r"[0-9a-f]{7,40}", args.since):
            raise UsageError(f"--since {args.since!r}: pass a hex commit sha (git rev-parse TAG^{{commit}})")
        try:
            entries = [
                e
                for e in hs.iter_runs(args.store, args.suite)
                if e.get("branch") == args.branch and (args.runner is None or e.get("runner") == args.runner)
            ]
        except hs.StoreError as exc:
            raise UsageError(str(exc)) from exc
        head = self._head(args.verdict, entries)
        if head is None:
            print(
                f"creep: no compared push of suite {args.suite} on {args.branch} in {args.store}: "
                "nothing to chain"
            )
            return 0
        since = None if args.since else datetime.now(UTC) - timedelta(days=args.days)
        gates = load_gates(self.gates_file(args.gates))
        result = creep.judge(creep.chain(head, entries, since=since, reference=args.since), gates)
        doc = cast(creep_issue.CreepReport, {"suite": args.suite, "status": result.status, **asdict(result)})
        out = flags.new_out(args.out, self.root, self.name)
        out.mkdir(parents=True)
        (out / "creep.json").write_text(json.dumps(doc, indent=1) + "\n")
        (out / "creep.md").write_text(creep_issue.markdown(doc))
        print(creep_issue.headline(doc), file=sys.stderr)
        print(creep_issue.markdown(doc))
        return 1 if result.creeping() else 0

    def _head(self, verdict_path: Path | None, entries: list[dict]) -> creep.Link | None:
        """The newest link: the given verdict's push, else the newest stored push compared."""
        if verdict_path is not None:
            try:
                doc = Verdict.from_json(json.loads(verdict_path.read_text()))
            except (OSError, json.JSONDecodeError, TypeError, AttributeError) as exc:
                raise UsageError(
                    f"{verdict_path}: cannot read the verdict ({exc}); pass main's verdict.json"
                ) from exc
            if not doc.head.commit:
                raise UsageError(f"{verdict_path}: names no head commit; pass the verdict of a push to main")
            return creep.link_from_verdict(doc, commit=doc.head.commit, date=None, message="")
        for e in reversed(entries):
            stored = e.get("verdict")
            link = creep.link_from_verdict(
                read_any(stored) if stored else None,
                commit=e.get("commit") or "",
                date=e.get("date"),
                message=e.get("message") or "",
            )
            if link is not None and link.commit:
                return link
        return None
