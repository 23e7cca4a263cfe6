"""`hftbench regression-issue VERDICT`: open, update or close main's regression issue from
the push's verdict (publish/regression_issue.py), in the hosted job that holds the token, from
verdict.json alone. No verdict (the push was not compared: a first run, no baseline): nothing
to change. With --store (the history store before this push, bench.yml's report-regression
job): the creep issue too, from `hftbench creep` run here (this push and the stored pushes
before it, chained back to --creep-reference: a commit a person sets and moves, such as the
last release tag's; none given, the baseline --creep-days back, a window that moves and so
never sees a creep slower than the gate per window). Without --store it needs no numpy."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import sys
import tempfile
from pathlib import Path
from typing import cast

from ..errors import UsageError
from ..publish import creep_issue, regression_issue, verdict_text
from . import flags
from .base import Command


class RegressionIssueCommand(Command):
    name = "regression-issue"
    help = "open, update or close the regression issue of main"
    description = regression_issue.__doc__

    @classmethod
    def add_arguments(cls, p) -> None:
        bot = regression_issue.DEFAULT_BOT
        p.add_argument("verdict", type=Path, help="verdict.json of the push to main")
        p.add_argument("--repo", default=os.environ.get("GITHUB_REPOSITORY"), help="owner/name")
        p.add_argument("--api", default=os.environ.get("GITHUB_API_URL", "https://api.github.com"))
        flags.add(p, cls, ("run_url",))
        p.add_argument("--bot", default=bot, help=f"login that opens the issues (default {bot})")
        p.add_argument(
            "--creep",
            type=Path,
            help="creep.json (`hftbench creep`): open, update or close the creep issue too",
        )
        p.add_argument("--store", type=Path, help="the history store before this push: the creep issue too")
        p.add_argument("--creep-reference", default="", help="with --store: the creep's reference commit")
        p.add_argument("--creep-days", type=int, default=14, help="with --store, no reference: days back")

    def run(self) -> int:
        args = self.args
        if not args.verdict.is_file() or not args.verdict.stat().st_size:
            self.say(
                f"no {args.verdict}: the push was not compared (first run or no baseline); no issue to change"
            )
            return 0
        env = os.environ
        if not args.run_url and env.get("GITHUB_REPOSITORY"):
            server = env.get("GITHUB_SERVER_URL") or "https://github.com"
            args.run_url = f"{server}/{env['GITHUB_REPOSITORY']}/actions/runs/{env.get('GITHUB_RUN_ID', '0')}"
        creep_failed = None
        if args.store and not args.creep and (args.store / "index.json").is_file():
            args.creep, creep_failed = self.creep(args)
        code = self.report(args)
        if creep_failed:
            raise UsageError(creep_failed)
        return code

    def creep(self, args) -> tuple[Path | None, str | None]:
        """`hftbench creep` of this push on the store, in this process: its creep.json, or why not."""
        from .creep import CreepCommand

        out = Path(tempfile.mkdtemp()) / "creep"
        suite = verdict_text.load(args.verdict).suite or "pr"
        since = (
            ["--since", args.creep_reference] if args.creep_reference else ["--days", str(args.creep_days)]
        )
        argv = ["--store", str(args.store), "--suite", suite, *since, "--verdict", str(args.verdict)]
        with contextlib.redirect_stdout(io.StringIO()):  # its markdown: the issue body says it
            code = CreepCommand.invoke([*argv, "--out", str(out)])
        if code <= 1:
            return out / "creep.json", None
        return (
            None,
            f"hftbench creep failed (exit {code}, its message above); the creep issue was left as it is",
        )

    def report(self, args) -> int:
        token = os.environ.get("GITHUB_TOKEN")
        if not token:
            raise UsageError(
                "GITHUB_TOKEN is not set; pass the job's token (issues: write) in the environment"
            )
        if not args.repo or not re.fullmatch(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+", args.repo):
            raise UsageError(f"--repo {args.repo!r}: pass OWNER/NAME (default $GITHUB_REPOSITORY)")
        doc = verdict_text.load(args.verdict)
        gh = regression_issue.GitHub(args.api, args.repo, token)
        issue = gh.open_issue(doc.suite or "unknown", args.bot)
        action = regression_issue.issue_action(doc, issue, args.run_url)
        print(
            f"regression-issue: {regression_issue.apply(gh, action, issue)}: {action.reason}", file=sys.stderr
        )
        if args.creep:
            try:
                crept = cast(creep_issue.CreepReport, json.loads(args.creep.read_text()))
            except (OSError, json.JSONDecodeError) as exc:
                raise UsageError(
                    f"{args.creep}: cannot read it ({exc}); pass the creep.json `hftbench creep` wrote"
                ) from exc
            issue = gh.open_issue(crept.get("suite") or "unknown", args.bot, creep_issue.parse_marker)
            action = creep_issue.issue_action(crept, issue)
            print(
                f"regression-issue: creep: {regression_issue.apply(gh, action, issue)}: {action.reason}",
                file=sys.stderr,
            )
        return 0
