"""`hftbench regression-issue VERDICT`: open, update or close main's regression issue from
the push's verdict (publish/regression_issue.py). Runs on the hosted runner: no numpy."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

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

    def run(self) -> int:
        args = self.args
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
                crept = json.loads(args.creep.read_text())
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
