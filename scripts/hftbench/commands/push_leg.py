"""`hftbench push-leg`: a push to main, one leg of the pool (bench.yml's main-bench job). The
pushed commit measured interleaved against its baseline, the last main commit in the history
store for this suite and runner, rebuilt in the same job (`hftbench ab`, in this process, as for
a pull request). A stored run from another moment is history, not a baseline: host drift
between then and now would read as a regression.

The pushed commit's rounds become its history entry (one point with its spread); then one run
of REPORT_SUITE is added for the report and the dashboard. Which folder is which entry, and
which verdict belongs to it, is written in OUT/manifest.json (hftbench/manifest.py), which
publish reads. A regression is reported (summary, step output regression=true), bisected when
it spans several commits (`hftbench bisect`, in this process: the culprit, or a range, on the
Verdict as `bisect`), and the job still succeeds, so the run is recorded; the hosted jobs judge
the legs together and open, update or close the issue.
No baseline (a first run, a new runner or suite) or a baseline that no longer builds: the
summary says so, and ROUNDS rounds of the pushed commit are still recorded, measured as ab
measures a side (`hftbench run --rounds`: the load rate probed once, a fresh server each round).

Inputs (bench.yml's environment):
  OUT             the leg's folder: ab/ (the A/B; ab/head/ the pushed commit's rounds),
                  runs/rounds/ (its rounds measured alone), runs/run_*/ (the report run),
                  bisect/, verdict.json, summary.md, manifest.json
  STORE           the history store fetch-store copied (default: fetched here into OUT/store)
  SUITE (pr), REPORT_SUITE (standard; empty: none), GITHUB_SHA (default HEAD), ROUNDS (8)
  AB_ARGS, RUN_ARGS, BISECT_ARGS   extra flags of ab, run, bisect (the tests' sizes)
  BISECT_BUDGET_S seconds for the bisect of a regression over several commits (1800; 0: none)
  POOL_LEG, POOL_SERVER_CPUS, POOL_CLIENT_CPUS, POOL_SCENARIOS, POOL_ROUNDS, HFTBENCH_CALIBRATION
                  as for pr-leg; the leg's baseline is the last main commit stored for its runner
Step outputs: regression=true|false, baseline=<sha or empty>.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from .. import ci_job, manifest
from ..errors import UsageError
from ..measure.run import new_run_dir
from ..measure.worktrees import git_output
from ..store import history as hs
from ..verdict import Verdict
from .base import Command
from .pr_leg import has_commit, write_verdict
from .run import RunCommand


@dataclass(frozen=True)
class PushLeg:
    """push-leg's inputs, read once from the environment."""

    out: Path
    sha: str
    suite: str
    report_suite: str
    rounds: str
    store: Path | None  # None: fetch it here
    bisect_budget_s: str
    ab_args: list[str]
    run_args: list[str]
    bisect_args: list[str]
    pool: ci_job.Pool

    @classmethod
    def from_env(cls, env: Mapping[str, str], root: Path) -> PushLeg:
        out = Path(ci_job.required(env, "OUT", "output folder")).absolute()
        sha = env.get("GITHUB_SHA") or git_output(root, "rev-parse", "HEAD")
        if not ci_job.FULL_SHA.match(sha):
            raise UsageError(f"GITHUB_SHA must be a full commit SHA (got '{sha}')")
        budget = env.get("BISECT_BUDGET_S") or "1800"
        if not budget.isdigit():
            raise UsageError(f"BISECT_BUDGET_S must be whole seconds (got '{budget}')")
        rounds = env.get("ROUNDS") or "8"
        if not rounds.isdigit():
            raise UsageError(f"ROUNDS must be a whole number (got '{rounds}')")
        return cls(
            out=out,
            sha=sha,
            suite=env.get("SUITE") or "pr",
            report_suite=env.get("REPORT_SUITE", "standard"),  # set but empty: no report run
            rounds=rounds,
            store=Path(env["STORE"]).absolute() if env.get("STORE") else None,
            bisect_budget_s=budget,
            ab_args=ci_job.words(env, "AB_ARGS"),
            run_args=ci_job.words(env, "RUN_ARGS"),
            bisect_args=ci_job.words(env, "BISECT_ARGS"),
            pool=ci_job.Pool.from_env(env),
        )


class PushLegCommand(Command):
    name = "push-leg"
    help = "CI: a push's leg (bench.yml main-bench): ab against the stored baseline, rounds for the history"
    raw_description = True

    def run(self) -> int:
        root = self.root
        leg = PushLeg.from_env(os.environ, root)
        leg.out.mkdir(parents=True, exist_ok=True)
        leg.pool.place()
        entries = manifest.Manifest()
        baseline, why = self.baseline(leg)
        regression = False
        if why is None:
            regression, why = self.compare(leg, baseline, entries)
        if why is not None:  # not compared: the pushed commit measured alone, still recorded
            self.rounds_alone(leg, why, entries)
        if leg.report_suite:
            run = new_run_dir(leg.out / "runs")
            run.rmdir()  # `hftbench run --out` creates it
            argv = ["--suite", leg.report_suite, "--out", str(run), "--quiet", *leg.run_args]
            code = RunCommand.invoke(argv)
            if code != 0:
                raise UsageError(
                    f"hftbench run --suite {leg.report_suite} failed; the run folder {run} keeps what was "
                    "measured"
                )
            entries.add(run, manifest.RUN, leg.out)
        entries.write(leg.out)
        ci_job.summary((leg.out / "summary.md").read_text())
        ci_job.output("regression", str(regression).lower())
        ci_job.output("baseline", baseline)
        self.say(
            f"regression on main: {str(regression).lower()} (baseline {baseline[:10]}; the run is "
            "published either way)"
        )
        return 0

    def baseline(self, leg: PushLeg) -> tuple[str, str | None]:
        """The stored baseline's commit, and why there is no comparison (None: compare)."""
        from .history import baseline_commit, this_runner

        store = leg.store
        if store is None:  # the step before fetches it with the read token; a test or public repo here
            store = leg.out / "store"
            ci_job.fetch_store(self.root, store)
        if not (store / "index.json").is_file():
            return "", "No baseline: this is the first run (no history on gh-pages yet)."
        try:
            runner = this_runner(leg.suite, self.config, self.root)
            entries = hs.baseline_runs(store, suite=leg.suite, branch="main", runner=runner, last=1)
            if not entries:
                why = hs.why_no_baseline(store, suite=leg.suite, branch="main", runner=runner)
                return "", f"No baseline: {store}: no baseline: {why}"
            baseline = baseline_commit(store, entries[-1])
        except (UsageError, hs.StoreError) as exc:
            return "", f"No baseline: {exc}"
        if not has_commit(self.root, baseline):
            return (
                baseline,
                f"No baseline: its commit {baseline[:10]} is not in this clone (history rewritten?).",
            )
        if baseline == leg.sha:
            return baseline, (
                f"This commit ({leg.sha[:10]}) is already the stored baseline: measured again, not "
                "compared with itself."
            )
        return baseline, None

    def compare(self, leg: PushLeg, baseline: str, entries: manifest.Manifest) -> tuple[bool, str | None]:
        """ab of the pushed commit against `baseline`, bisected on a regression over several
        commits: (regressed, why not compared: a baseline that no longer builds)."""
        from .ab import AbCommand

        ab = leg.out / "ab"
        argv = [
            *("--base", baseline, "--head", leg.sha, "--base-label", "main", "--head-label", "main"),
            *("--suite", leg.suite, "--gates", str(self.root / "bench-config" / "gates.yaml")),
            *("--out", str(ab), "--quiet", *leg.pool.rounds, *leg.ab_args, *leg.pool.split()),
        ]
        status = AbCommand.invoke(argv)
        if status > 1 or not (ab / "verdict.json").is_file():
            if (ab / "base" / "build.log").is_file() and not os.access(
                ab / "base" / "bin" / "hft-server", os.X_OK
            ):
                why = (
                    f"The baseline {baseline[:10]} no longer builds (see ab/base/build.log in the "
                    "artifact): not compared."
                )
                return False, why
            raise UsageError(
                f"hftbench ab against the baseline {baseline[:10]} failed (exit {status}); see its "
                "output above"
            )
        regression = status == 1
        v = Verdict.from_json(json.loads((ab / "verdict.json").read_text()))
        v.pool_leg = leg.pool.leg
        write_verdict(v, leg.out)
        ci_job.copy_calibration(os.environ, leg.out)
        between = int(git_output(self.root, "rev-list", "--count", f"{baseline}..{leg.sha}"))
        if regression and between > 1 and leg.bisect_budget_s != "0":
            v = self.bisect(leg, between)
            write_verdict(v, leg.out)
        entries.add(ab / "head", manifest.ROUNDS, leg.out, leg.out / "verdict.json")
        return regression, None

    def bisect(self, leg: PushLeg, between: int) -> Verdict:
        """Which commit of several: `hftbench bisect --from-verdict`, which adds its answer to the
        leg's verdict as `bisect` (a culprit, or "between A and B" when the budget runs out or a
        step cannot tell)."""
        from .bisect import BisectCommand

        self.say(f"regression over {between} commits: bisecting within {leg.bisect_budget_s} s")
        verdict = leg.out / "verdict.json"
        argv = [
            *("--from-verdict", str(verdict), "--out", str(leg.out / "bisect")),
            *(
                "--gates",
                str(self.root / "bench-config" / "gates.yaml"),
                "--time-budget",
                leg.bisect_budget_s,
            ),
            *("--quiet", *leg.bisect_args),
        ]
        code = BisectCommand.invoke(argv)
        if code:
            self.say(f"bisect ended with exit {code} (1: a range, not one commit); see {leg.out / 'bisect'}")
        return Verdict.from_json(json.loads(verdict.read_text()))

    def rounds_alone(self, leg: PushLeg, why: str, entries: manifest.Manifest) -> None:
        """No comparison: ROUNDS rounds of the pushed commit, one rig for all (`hftbench run
        --rounds`: the load rate probed once, then each round against a fresh server)."""
        text = (
            f"## hft-bench: not compared\n\n{why}\n\nThe pushed commit `{leg.sha[:10]}` is recorded "
            f"({leg.rounds} rounds of suite `{leg.suite}`) and becomes the next baseline.\n"
        )
        (leg.out / "summary.md").write_text(text)
        (leg.out / "verdict.json").unlink(missing_ok=True)
        rounds = leg.out / "runs" / "rounds"
        argv = [
            *("--rounds", leg.rounds, "--suite", leg.suite, "--out", str(rounds)),
            *("--no-floor", "--no-report", "--quiet", *leg.run_args, *leg.pool.split()),
        ]
        if RunCommand.invoke(argv) != 0:
            raise UsageError(f"hftbench run --rounds {leg.rounds} failed; the rounds so far are in {rounds}")
        entries.add(rounds, manifest.ROUNDS, leg.out)
