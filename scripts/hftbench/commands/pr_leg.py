"""`hftbench pr-leg`: a pull request's leg of the pool (bench.yml's pr-bench job). The A/B of
the pull request's base and head commits (`hftbench ab`, in this process), its verdict.json
with what only the job knows set on the Verdict (the harness files the head changes, the leg's
name), the runner's calibration record beside it, and the summary in the job's step summary.

The harness is the base's: this checkout must be the base commit (bench.yml checks it out), so
its hftbench, bench-config (gates, scenarios, suites) and clients judge the pull request; ab
builds only each side's server, in trees exported by git archive. The head is a commit of this
clone (fetched as a ref), never the working tree. Harness files the pull request changes are
listed in verdict.json as `harness_changes`: they apply after merge, and the texts say so.

Inputs (bench.yml's environment):
  BASE_SHA, HEAD_SHA   the pull request's commits
  OUT                  the leg's folder: ab/ (ab's run folders), verdict.json, summary.md,
                       calibration.json; `hftbench stage-artifact` picks its upload from it
  BASE_REF, HEAD_REF   branch names shown in the texts
  SUITE                default pr
  AB_ARGS              extra `hftbench ab` flags (the tests' sizes), split as a shell would
  POOL_LEG, POOL_SERVER_CPUS, POOL_CLIENT_CPUS, POOL_SCENARIOS, POOL_ROUNDS
                       a leg of the pool (bench-config/pool.yaml): the runner's name (the
                       verdict's pool_leg), its placement, its split of the suite, the pool's
                       rounds; combine believes the calibration record beside the verdict only
                       when its sha256 is the one pool.yaml gives the runner
  HFTBENCH_CALIBRATION the runner's calibration record, copied beside verdict.json
Step output: verdict=<status>.

Exit 1 when a gated metric regressed, so the check fails; a leg of the pool exits 0 on its own
regression (the combine job judges every leg together and is the check that fails); 2 when it
could not run.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from .. import ci_job
from ..errors import UsageError
from ..fsio import write_atomic
from ..measure.worktrees import git_cmd, git_output
from ..verdict import Verdict
from .base import Command


def has_commit(root: Path, sha: str) -> bool:
    probe = subprocess.run(git_cmd(root, "cat-file", "-e", f"{sha}^{{commit}}"), capture_output=True)
    return probe.returncode == 0


def harness_changes(root: Path, base: str, head: str) -> list[str]:
    """The harness files `head` changes since its merge base with `base` (git diff base...head)."""
    listed = git_output(root, "diff", "--name-only", f"{base}...{head}", "--", *ci_job.HARNESS_PATHS)
    return [line for line in listed.splitlines() if line]


def write_verdict(v: Verdict, out: Path) -> None:
    """verdict.json and summary.md of a leg, both from the one Verdict."""
    from ..publish import verdict_text

    write_atomic(out / "verdict.json", json.dumps(v.to_json(), indent=2) + "\n")
    write_atomic(out / "summary.md", verdict_text.markdown(v))


@dataclass(frozen=True)
class PrLeg:
    """pr-leg's inputs, read once from the environment."""

    base_sha: str
    head_sha: str
    out: Path
    base_ref: str
    head_ref: str
    suite: str
    ab_args: list[str]
    pool: ci_job.Pool

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> PrLeg:
        base = ci_job.required(env, "BASE_SHA", "the PR base commit")
        head = ci_job.required(env, "HEAD_SHA", "the PR head commit")
        out = ci_job.required(env, "OUT", "output folder")
        if not (ci_job.SHA.match(base) and ci_job.SHA.match(head)):
            raise UsageError(f"BASE_SHA and HEAD_SHA must be commit SHAs (got '{base}', '{head}')")
        return cls(
            base,
            head,
            Path(out).absolute(),
            env.get("BASE_REF", ""),
            env.get("HEAD_REF", ""),
            env.get("SUITE") or "pr",
            ci_job.words(env, "AB_ARGS"),
            ci_job.Pool.from_env(env),
        )

    def ab_argv(self, root: Path) -> list[str]:
        """ab's flags: the base's gates by path (this checkout's, whichever checkout the
        hftbench on PATH came from), --require-sandbox (the head's build and server are the
        pull request's code), the pool's rounds first (the tests' AB_ARGS may narrow them;
        combine holds both to pool.yaml), the leg's split of the suite last."""
        labels = [*(["--base-label", self.base_ref] if self.base_ref else [])]
        labels += ["--head-label", self.head_ref] if self.head_ref else []
        return [
            *("--base", self.base_sha, "--head", self.head_sha, "--suite", self.suite, "--require-sandbox"),
            *("--gates", str(root / "bench-config" / "gates.yaml"), "--out", str(self.out / "ab"), "--quiet"),
            *labels,
            *self.pool.rounds,
            *self.ab_args,
            *self.pool.split(),
        ]


class PrLegCommand(Command):
    name = "pr-leg"
    help = "CI: a pull request's leg (bench.yml pr-bench): ab of base and head, the leg's verdict"
    raw_description = True

    def run(self) -> int:
        from .ab import AbCommand

        leg, root = PrLeg.from_env(os.environ), self.root
        self.check_checkout(leg, root)
        leg.out.mkdir(parents=True, exist_ok=True)
        changes = harness_changes(root, leg.base_sha, leg.head_sha)
        if changes:
            self.say(f"the PR changes the harness (applies after merge): {' '.join(changes)}")
        leg.pool.place()
        status = AbCommand.invoke(leg.ab_argv(root))
        ab = leg.out / "ab"
        if not (ab / "verdict.json").is_file() or not (ab / "summary.md").is_file():
            raise UsageError(f"hftbench ab (exit {status}) wrote no verdict; see its output above")
        v = Verdict.from_json(json.loads((ab / "verdict.json").read_text()))
        v.harness_changes, v.pool_leg = changes, leg.pool.leg
        write_verdict(v, leg.out)
        ci_job.copy_calibration(os.environ, leg.out)
        ci_job.summary((leg.out / "summary.md").read_text())
        ci_job.output("verdict", v.status)
        if leg.pool.leg and status <= 1:
            self.say(
                f"leg {leg.pool.leg}: its own verdict: {v.status}; the combine job judges the pool's "
                "legs together"
            )
            return 0
        if status > 1:
            raise UsageError(f"hftbench ab failed (exit {status})")
        regressed = ": a gated metric (P99) regressed; this check fails" if status else ""
        self.say(f"verdict: {v.status}{regressed}")
        return status

    @staticmethod
    def check_checkout(leg: PrLeg, root: Path) -> None:
        """The head in this clone, and this checkout the base: the harness must be the base's."""
        if not has_commit(root, leg.head_sha):
            raise UsageError(
                f"HEAD_SHA {leg.head_sha} is not in this clone: fetch it as a ref (bench.yml's checkout "
                "has fetch-depth: 0; a head branch pushed over since is superseded by its newer run)"
            )
        if not has_commit(root, leg.base_sha):
            raise UsageError(
                f"BASE_SHA {leg.base_sha} is not in this clone: check out the PR's base commit "
                "(bench.yml: actions/checkout with ref: github.event.pull_request.base.sha)"
            )
        base = git_output(root, "rev-parse", f"{leg.base_sha}^{{commit}}")
        here = git_output(root, "rev-parse", "HEAD")
        if here != base:
            raise UsageError(
                f"the working tree is {here[:7]}, not the PR's base {leg.base_sha[:10]}: the harness "
                "(hftbench, bench-config, clients) must be the base's; check out the base (bench.yml: "
                "actions/checkout with ref: github.event.pull_request.base.sha)"
            )
