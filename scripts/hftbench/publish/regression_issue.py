"""`hftbench regression-issue VERDICT_JSON`: one GitHub issue per regression on main.

- A push judged a regression opens an issue, or, when one is open for the suite already,
  updates its body and comments on it (the same regression seen again, or a new one on top).
- A push that is not a regression and is significantly faster (an improvement, or faster
  under the gate) on every series × metric the open issue lists comments "recovered" and
  closes it. A reported-only row (listed for its warning) counts as recovered once it no
  longer warns and reads no slower than base: reported only, its interval may never be
  narrow enough to show the recovery significant. Anything else leaves it open.
- A partial verdict (an interrupted job) changes nothing.

The open issue is found by a hidden marker, among issues with the `performance` label
opened by the bot account only, so a marker pasted by someone else is never taken for it.
Standard library only: it runs on a bare GitHub-hosted runner (`python3 -m hftbench`).

    env: GITHUB_TOKEN (issues: write)
    hftbench regression-issue VERDICT --repo OWNER/NAME [--api URL] [--run-url URL] [--bot LOGIN]
"""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NotRequired, TypedDict, cast

from .. import answers, mdsafe
from ..errors import UsageError
from ..verdict import Verdict
from . import verdict_text

LABEL = "performance"


class IssueUser(TypedDict):
    login: str


class GitHubIssue(TypedDict):
    """An issue as GitHub's REST API returns it: the fields read here."""

    number: int
    body: str | None
    user: NotRequired[IssueUser | None]


DEFAULT_BOT = "github-actions[bot]"
MARKER = r"<!-- hft-bench-{kind} suite=(?P<suite>[A-Za-z0-9._-]+) keys=(?P<keys>[^ ]*) -->"
_NOT_IN_MARKER = re.compile(r"[^A-Za-z0-9._/:,-]")  # a `-->` or a space would end the marker early


@dataclass(frozen=True)
class Action:
    kind: str  # "open" | "update" | "close" | "none"
    reason: str  # one line for the log
    title: str | None = None
    body: str | None = None  # the issue body (open, update)
    comment: str | None = None  # a comment on the open issue (update, close)


def keys_with(doc: Verdict, verdict: str, *, reported: bool = False) -> list[str]:
    """ "series:metric" of the gated rows (and, with `reported`, the reported-only rows too)
    with this verdict, then the soak drifts'."""
    drifts = [f"{r.series}:{r.metric}_drift" for r in doc.drift if r.gated and r.verdict == verdict]
    rows = [r for r in doc.results if (r.gated or reported) and r.verdict == verdict]
    return [f"{r.series}:{r.metric}" for r in rows] + drifts


def marker(suite: str, keys: list[str], kind: str = "regression") -> str:
    """The hidden marker of the `kind` issue (regression, creep); suite and keys come from
    verdict.json, so only plain characters stay."""
    plain_keys = sorted({_NOT_IN_MARKER.sub("_", k.replace(",", "_")) for k in keys})
    plain_suite = re.sub(r"[^A-Za-z0-9._-]", "_", suite) or "unknown"
    return f"<!-- hft-bench-{kind} suite={plain_suite} keys={','.join(plain_keys)} -->"


def parse_marker(body: str, kind: str = "regression") -> tuple[str, list[str]] | None:
    m = re.search(MARKER.format(kind=kind), body or "")
    if not m:
        return None
    return m["suite"], [k for k in m["keys"].split(",") if k]


def _sha(doc: Verdict) -> str:
    return mdsafe.sha(doc.head.commit)


def issue_action(doc: Verdict, open_issue: GitHubIssue | None, run_url: str | None = None) -> Action:
    """What to do with the issue tracker for this verdict (pure: tested without a network)."""
    suite = doc.suite or "unknown"
    if doc.partial:
        return Action("none", "a partial verdict (interrupted job) opens and closes nothing")
    # A reported-only row that is significant and beyond its threshold reaches the issue too
    # (its headline's warning): main's users feel it though it does not fail the gate.
    warned = [f"{r.series}:{r.metric}" for r in verdict_text.warnings(doc)]
    regressed = keys_with(doc, answers.REGRESSION) + warned
    text = verdict_text.issue(doc, run_url=run_url)
    if doc.status == answers.REGRESSION or warned:
        if open_issue is None:
            # A title is plain text: the outside names in it get the title's escaping, not markdown's.
            what = "Latency regression" if doc.status == answers.REGRESSION else "Reported-only regression"
            title = (
                f"{what} on main at {_sha(doc)}: "
                + verdict_text.headline(doc, mdsafe.title).split(": ", 1)[-1]
            )
            return Action("open", "new regression", title[:250], f"{marker(suite, regressed)}\n{text}")
        _, listed = parse_marker(open_issue["body"]) or (suite, [])
        body = f"{marker(suite, listed + regressed)}\n{text}"
        comment = f"Push {_sha(doc)} is a regression again: {verdict_text.headline(doc)}"
        return Action("update", "regression while an issue is open", body=body, comment=comment)
    if open_issue is None:
        return Action("none", f"{doc.status}: no open regression issue")
    _, listed = parse_marker(open_issue["body"]) or (suite, [])
    # Faster under the gate counts: a +12 % regression undone reads −11 %, under the 10 % gate.
    improved = set(keys_with(doc, answers.IMPROVEMENT, reported=True)) | set(
        keys_with(doc, answers.FASTER, reported=True)
    )
    # A reported-only row was listed for its warning: gone, and no slower, it has recovered.
    quiet = {
        f"{r.series}:{r.metric}"
        for r in doc.results
        if not r.gated and r.ratio is not None and r.ratio <= 1 and r.verdict != answers.REGRESSION
    }
    improved |= quiet
    if listed and all(k in improved for k in listed):
        comment = (
            f"Recovered at {_sha(doc)}: every regressed series × metric is significantly faster again "
            "(a reported-only one: no longer beyond its threshold, and no slower) "
            f"({mdsafe.text(', '.join(listed))}).\n\n{verdict_text.markdown(doc, run_url=run_url)}"
        )
        return Action("close", "recovered", comment=comment)
    missing = [k for k in listed if k not in improved]
    return Action("none", f"not a regression, but not recovered either: {', '.join(missing)} did not improve")


class GitHub:
    """The four REST calls this needs; errors name the call and the status."""

    def __init__(self, api: str, repo: str, token: str):
        self.api, self.repo, self.token = api.rstrip("/"), repo, token

    def call(self, method: str, path: str, payload: dict[str, Any] | None = None) -> Any:
        req = urllib.request.Request(
            f"{self.api}/repos/{self.repo}{path}",
            method=method,
            data=json.dumps(payload).encode() if payload is not None else None,
            headers={
                "Authorization": f"Bearer {self.token}",
                "Accept": "application/vnd.github+json",
                "Content-Type": "application/json",
            },
        )
        try:
            with urllib.request.urlopen(req, timeout=30) as resp:
                return json.loads(resp.read() or b"null")
        except urllib.error.HTTPError as exc:
            raise UsageError(
                f"GitHub API {method} {path}: HTTP {exc.code}; check GITHUB_TOKEN's permissions"
            ) from None
        except urllib.error.URLError as exc:
            raise UsageError(f"GitHub API {method} {path}: {exc.reason}; check GITHUB_API_URL") from None

    def open_issue(
        self, suite: str, bot: str, parse: Callable[[str], tuple[str, list[str]] | None] | None = None
    ) -> GitHubIssue | None:
        """The open issue of `suite` that the bot opened, if any: the regression issue, or the
        one whose marker `parse` reads (the creep issue)."""
        for page in range(1, 11):
            issues = self.call("GET", f"/issues?state=open&labels={LABEL}&per_page=100&page={page}")
            for issue in issues:
                found = (parse or parse_marker)(issue.get("body") or "")
                if found and found[0] == suite and (issue.get("user") or {}).get("login") == bot:
                    return cast(GitHubIssue, issue)
            if len(issues) < 100:
                return None
        return None


def apply(gh: GitHub, action: Action, issue: GitHubIssue | None) -> str:
    if action.kind == "open":
        made = gh.call("POST", "/issues", {"title": action.title, "body": action.body, "labels": [LABEL]})
        return f"opened issue #{made['number']}"
    if action.kind == "update":
        gh.call("PATCH", f"/issues/{issue['number']}", {"body": action.body})
        if action.comment:  # the creep issue is refreshed quietly while its keys stay the same
            gh.call("POST", f"/issues/{issue['number']}/comments", {"body": action.comment})
        return f"updated issue #{issue['number']}"
    if action.kind == "close":
        gh.call("POST", f"/issues/{issue['number']}/comments", {"body": action.comment})
        gh.call("PATCH", f"/issues/{issue['number']}", {"state": "closed", "state_reason": "completed"})
        return f"closed issue #{issue['number']} ({action.reason})"
    return "no issue change"
