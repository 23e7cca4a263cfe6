"""The pull request's verdict as a check run (GitHub's Checks API): its conclusion, title and
summary, from verdict.json alone. Unknown is not green: only an answer the gate can stand
behind passes; an undecided one is `neutral`, grey, with what would settle it; anything else,
a status this code does not know included, is `failure`.

    status (answers.py)                      conclusion
    no_change, slower, faster, improvement   success   (neutral when no gated row was tested)
    inconclusive                             neutral   (the runs a side that would settle it)
    regression, invalid, any other           failure
    no verdict, the pool's check fails       failure

The job that posts it (scripts/ci/check-run) fails exactly when the conclusion is `failure`:
an inconclusive verdict does not turn the job red, the check run carries it. Standard library
only, like verdict_text.py (the hosted runner has no numpy).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .. import answers, mdsafe
from ..verdict import Verdict
from . import verdict_text

NAME = "bench verdict (gate)"  # the check run's name, beside the job's own check `bench verdict`
SUCCESS, NEUTRAL, FAILURE = "success", "neutral", "failure"
# The answers a check may pass on: each a claim the gate can stand behind (answers.py).
PASSES = (answers.NO_CHANGE, answers.SLOWER, answers.FASTER, answers.IMPROVEMENT)
SUMMARY_LIMIT = 65_535  # characters of output.summary (GitHub's limit)
TITLE_LIMIT = 250  # a title is one line; GitHub shows about this much


@dataclass(frozen=True)
class CheckRun:
    conclusion: str  # SUCCESS | NEUTRAL | FAILURE
    title: str  # one line of plain text
    summary: str  # markdown, within SUMMARY_LIMIT

    @property
    def fails(self) -> bool:
        """The job that posts it fails with it (a neutral check run does not)."""
        return self.conclusion == FAILURE

    def payload(self, head_sha: str, name: str = NAME) -> dict[str, Any]:
        """The body of POST /repos/{owner}/{repo}/check-runs: a completed check run on head_sha."""
        return {
            "name": name,
            "head_sha": head_sha,
            "status": "completed",
            "conclusion": self.conclusion,
            "output": {"title": self.title, "summary": self.summary},
        }


def conclusion(
    status: str | None, *, check_passes: bool = True, exit_code: int = 0, tested: bool = True
) -> str:
    """A verdict's status as a check run's conclusion. `check_passes`: the pool's check
    (verdict.json pool.check.passes); `exit_code`: the verdict's own (non-zero: it failed);
    `tested`: at least one gated row was tested (none: nothing was judged, so not green)."""
    if not check_passes or exit_code != 0:
        return FAILURE
    if status in PASSES:
        return SUCCESS if tested else NEUTRAL
    if status == answers.INCONCLUSIVE:
        return NEUTRAL
    return FAILURE  # regression, invalid, and every status this code does not know


def settle(doc: Verdict) -> str:
    """What would settle an inconclusive verdict, as the verdict carries it: the largest
    estimate of runs a side over its undecided gated rows (answers.settle_text, as the
    headline says it), else the rows' own reasons (too few repeats, a ratio on the threshold)."""
    rows = [r for r in doc.results if r.gated and r.verdict == answers.INCONCLUSIVE]
    runs = [r.settle_runs for r in rows if r.settle_runs]
    if runs:
        text = answers.settle_text(max(runs))
        return text[0].upper() + text[1:] + "."
    why = sorted({mdsafe.text(r.reason) for r in rows if r.reason})
    if why:
        return "No estimate of the runs that would settle it: " + "; ".join(why) + "."
    return "No estimate of the runs that would settle it: the verdict names no undecided row's reason."


def _lead(doc: Verdict, verdict: str) -> str:
    """The first paragraph: what the conclusion means for this verdict."""
    status = doc.status
    pool = doc.pool or None
    if pool is not None and not pool.check.passes:
        why = "; ".join(mdsafe.text(w) for w in pool.check.why) or "(no reason given)"
        return f"**Failure**: the pool's check fails, whatever the verdict (`{mdsafe.code(status)}`): {why}."
    if verdict == FAILURE and status == answers.REGRESSION:
        return "**Failure**: a gated metric regressed."
    if verdict == FAILURE and status == answers.INCONCLUSIVE:
        return (
            f"**Failure**: undecided, and the verdict fails its own check (exit status "
            f"{doc.exit_code}; its rows say why). {settle(doc)}"
        )
    if verdict == FAILURE and status in PASSES:
        return f"**Failure**: the verdict fails its own check (exit status {doc.exit_code})."
    if verdict == FAILURE:
        return (
            f"**Failure**: the verdict is `{mdsafe.code(status)}`, not an answer the gate can pass "
            "(what is not judged cannot be green)."
        )
    if verdict == NEUTRAL and status == answers.INCONCLUSIVE:
        return f"**Neutral, not green**: the gate could not decide. {settle(doc)}"
    if verdict == NEUTRAL:
        return "**Neutral, not green**: no gated metric could be tested, so nothing was judged."
    return "**Success**: the gate decided, and nothing regressed."


def decide(doc: Verdict | None, *, why: str | None = None, run_url: str | None = None) -> CheckRun:
    """The check run of a verdict; `doc` None: no verdict could be read (`why` says why)."""
    if doc is None:
        reason = mdsafe.text(why or "no verdict.json was written")
        link = f"\n\n[The job's log]({run_url})" if run_url else ""
        return CheckRun(FAILURE, "No verdict", f"**Failure**: there is no verdict to read: {reason}.{link}")
    tested = any(r.gated and r.verdict != answers.NOT_GATED for r in [*doc.results, *(doc.drift or [])])
    check_passes = doc.pool.check.passes if doc.pool else True
    verdict = conclusion(doc.status, check_passes=check_passes, exit_code=doc.exit_code, tested=tested)
    title = verdict_text.headline(doc, mdsafe.title)
    if doc.status not in verdict_text.HEADLINE:
        title = f"Verdict {mdsafe.title(doc.status)}: not an answer the gate passes"
    if not check_passes:
        title = f"{title}; the pool's check fails"
    if len(title) > TITLE_LIMIT:
        title = title[: TITLE_LIMIT - 1] + "…"
    lead = _lead(doc, verdict)
    budget = SUMMARY_LIMIT - len(lead) - 100
    summary = f"{lead}\n\n" + verdict_text.markdown(doc, run_url=run_url, budget=budget)
    return CheckRun(verdict, title, summary[:SUMMARY_LIMIT])
