"""`hftbench combine --legs DIR --suite S`: a pool's legs judged together, each runner a
stratum; one verdict.json and summary.md, exit 1 when a gated metric regressed.

Each leg of the pool (pool.py; a job of bench.yml's matrix on its own runner) ran `hftbench
ab` on the same base and head and uploaded its folder: ab/<side>/run_*, and its own
verdict.json (which rounds it counted, its design, what its calibration guards). Here, on
the hosted runner, every leg's counted rounds are tested as that leg tested them
(judge/rows.py series_rows: its design, its guards), and the tests of one series × metric are added up
across the runners that judge it (strata.py): blocks within runners, each runner a stratum,
no value pooled across machines; the legs' round-level t's make one Student's t (the weighted
log ratio, its standard error, Welch–Satterthwaite's degrees of freedom), so the pooled p has
no Monte Carlo floor. A series is gated when at least one runner guards it, and
judged only by those. The weights are fixed before the data: each runner's calibrated noise,
from the calibration.json its leg uploaded beside its verdict, where every judging runner has
one for the series × metric; else equal. The family (Holm), the MDE and
the verdicts then follow as for one runner (family.py), and a complete leg's own regression
is a regression of the pool, named ("runner b alone: P99 +30.0%"), whatever the pooled estimate.

A leg's artifact is written where the pull request's code ran, so nothing in it is believed
for itself (judge/legcheck.py): the calibration, guards, looks, design and commits come from
the base's pool.yaml and config and the event's SHAs (--base-sha, --head-sha), and a leg whose
data disagree is refused, by name and field. A leg that failed, timed out, never reported or
was refused is named, and the verdict is partial; a leg interrupted after two rounds or more
(its verdict.json is partial) adds its complete rounds. The check then fails (exit
CHECK_FAILED) unless pool.yaml marks that runner `optional: true`; a refused leg, an artifact
the pool did not assign, or a failed leg job (--legs-result) nobody's artifact explains fail
it always.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from .. import ci_job, paths, pool
from ..absent import ABSENT
from ..judge import legcheck
from ..judge.compare import Comparison
from ..judge.gates import load_gates
from ..judge.pooled import (
    COMPLETE,
    FAILED,
    INTERRUPTED,
    MISSING,
    OTHER_REFS,
    REFUSED,
    Leg,
    alone_text,
    compare_legs,
    same_refs,
)
from ..judge.sides import side_from_runs
from ..results import load_run
from ..verdict import AbSection, Alone, PoolCheck, PoolRunner, PoolSection, SeenRow, Verdict
from . import flags
from .base import Command

CARRIED = ("bisect", "profile")  # a leg's sections the pool verdict shows, from the first leg with one
CHECK_FAILED = 3  # the verdict stands as written, but the pool's check cannot pass (pool.check)


def read_leg(name: str, folder: Path, runner: pool.RunnerConfig, expect: legcheck.Expect) -> Leg:
    """A leg's artifact: its verdict.json and the rounds it counted, vetted against what
    combine knows without it (legcheck.trust); REFUSED, with the reason, where they disagree."""
    optional = bool(runner.get("optional"))
    if not folder.is_dir():
        why = "no artifact: the leg failed before measuring, was cancelled or timed out"
        return Leg(name, MISSING, why, optional=optional)
    path = folder / "verdict.json"
    if not path.is_file():
        why = "no verdict: hftbench ab ended before its first look (see the leg's log)"
        return Leg(name, FAILED, why, optional=optional)
    try:
        doc = json.loads(path.read_text())
        if not isinstance(doc, dict):
            raise ValueError("verdict.json is not an object")
        unbuilt = _build_timeout(doc)
        if unbuilt:  # no round measured: failed, as a leg without a verdict (never believed green)
            return Leg(name, FAILED, unbuilt, optional=optional)
        ids = legcheck.run_ids(name, doc)
        runs = {side: [load_run(_run_folder(folder, side, rid)) for rid in ids[side]] for side in ids}
        trusted = legcheck.trust(name, folder, doc, runs, runner, expect)
        own = Verdict.from_json(doc)  # readable as a verdict, or the leg is unreadable (below)
        sides = {side: side_from_runs(side, runs[side]) for side in runs}
    except legcheck.Refused as exc:
        return Leg(name, REFUSED, str(exc), optional=optional)
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        return Leg(name, FAILED, f"unreadable leg folder {folder} ({exc})", optional=optional)
    partial = bool(own.partial)
    state = INTERRUPTED if partial else COMPLETE
    why = "interrupted: judged on the rounds it completed" if partial else None
    return Leg(
        name,
        state,
        why,
        doc,
        sides["base"],
        sides["head"],
        trusted.mdes,
        trusted.guards,
        trusted.digest,
        trusted.design,
        optional,
    )


def _build_timeout(doc: dict[str, Any]) -> str | None:
    """Why a leg measured nothing, where its verdict says a side's build ran past ab's
    --build-timeout; in words of combine's own, from the side and the number alone (the leg's
    text is the PR's to write)."""
    bt = doc.get("build_timeout")
    if not isinstance(bt, dict):
        return None
    side = bt.get("side") if bt.get("side") in ("base", "head") else "a side"
    limit = bt.get("timeout_s")
    within = f" in {limit:g} s" if isinstance(limit, (int, float)) and not isinstance(limit, bool) else ""
    return f"{side}'s build did not finish{within}: no round measured (the leg's build.log says more)"


def shared_run_ids(legs: list[Leg]) -> None:
    """Run ids are a UTC second and random digits: two legs listing the same one hold a copy of
    one folder, and neither is believed."""
    owners: dict[str, list[str]] = {}
    for leg in legs:
        for rid in (leg.base.runs + leg.head.runs) if leg.measured else []:
            owners.setdefault(rid, []).append(leg.name)
    for leg in legs:
        twice = [rid for rid, names in owners.items() if leg.name in names and len(names) > 1]
        if leg.measured and twice:
            others = sorted({n for rid in twice for n in owners[rid]} - {leg.name})
            leg.state, leg.base, leg.head, leg.doc = REFUSED, None, None, {}
            leg.why = (
                f"leg {leg.name}: verdict.json run_ids: {twice[0]} is also leg {', '.join(others)}'s: "
                "one leg's folder uploaded under two names"
            )


def check_fails(legs: list[Leg], unexpected: list[str], legs_result: str | None) -> list[str]:
    """Why the pool's check cannot pass, whatever the verdict: a refused leg or an artifact
    nobody was assigned (always), a leg missing, failed or interrupted unless pool.yaml marks its
    runner optional, and a failed leg job (bench.yml passes needs.pr-bench.result) that no leg's
    state explains (an upload refused because another took its name)."""
    why = list(unexpected)
    for leg in legs:
        if leg.state == REFUSED:
            why.append(f"{leg.why} (refused, optional or not)")
        elif leg.state not in (COMPLETE, OTHER_REFS) and not leg.optional:
            said = (leg.why or "").removeprefix(f"{leg.state}: ")  # "interrupted: judged on …"
            why.append(
                f"leg {leg.name} {leg.state}: {said}; pool.yaml requires this runner "
                "(`optional: true` lets the others decide without it)"
            )
    if legs_result and legs_result != "success" and all(leg.state == COMPLETE for leg in legs):
        why.append(
            f"a leg's job ended {legs_result} though every leg's artifact is complete: one may have "
            "uploaded under another leg's name (see the bench leg jobs' logs)"
        )
    return why


def _run_folder(folder: Path, side: str, run_id: str) -> Path:
    """Where a leg keeps a counted round: ab's side folder (pr-leg and push-leg both leave it
    there; load_run names a missing file)."""
    return folder / "ab" / side / run_id


def pool_doc(
    legs: list[Leg],
    seen: dict[str, list[SeenRow]],
    alone: list[Alone] | None = None,
    fails: list[str] | None = None,
) -> PoolSection:
    """verdict.json's `pool`: who took part, what each saw (each row's weight and where it came
    from), who is missing, each complete leg's own regression (`alone`), and why the check
    fails whatever the verdict (`check`)."""
    runners = []
    for leg in legs:
        own = leg.verdict
        ab = own.ab or AbSection()
        runners.append(
            PoolRunner(
                name=leg.name,
                state=leg.state,
                why=leg.why,
                runner=own.head.runner,
                verdict=own.status,
                rounds_per_side=ab.rounds_per_side,
                measure_s=ab.measure_s,
                calibration=leg.calibration,
                rows=seen.get(leg.name, []),
                calibrated_mde=leg.calibrated_mde or None,
                optional=leg.optional,
            )
        )
    missing = [leg.name for leg in legs if leg.state != COMPLETE]
    return PoolSection(runners, missing, bool(missing), alone or [], PoolCheck(not fails, list(fails or [])))


class CombineCommand(Command):
    name = "combine"
    help = "judge a pool's legs together: one verdict, each runner a stratum"
    shared = ("gates",)

    @classmethod
    def add_arguments(cls, p) -> None:
        p.add_argument(
            "--legs", type=Path, required=True, help="folder holding each leg's folder, <prefix><name>"
        )
        p.add_argument(
            "--prefix", default="", help="leg folder prefix, e.g. pr-bench- (the artifacts' names)"
        )
        p.add_argument(
            "--suite", required=True, help="the suite the legs ran: the pool's runners that take it"
        )
        flags.add(p, cls, ("pool",))
        p.add_argument("--out", type=Path, required=True, help="folder for verdict.json and summary.md")
        p.add_argument("--base-sha", default=None, help="the commit every leg's base must be (the event's)")
        flags.add(p, cls, ("head_sha",))
        p.add_argument(
            "--legs-result",
            default=None,
            help="the leg jobs' result (needs.<job>.result): not success fails the check "
            "unless a leg's state explains it",
        )
        p.add_argument(
            "--record",
            action="store_true",
            help="a push to main: a regression or a failing pool check is recorded (exit 0, output "
            "regression=true), and no leg with a verdict (a first push) is no verdict, the first leg's "
            "summary",
        )
        flags.add(p, cls, ("github_output",))

    def run(self) -> int:
        args = self.args
        for flag in ("base_sha", "head_sha", "legs_result"):  # a workflow passes "" for none
            setattr(args, flag, getattr(args, flag) or None)
        args.legs.mkdir(parents=True, exist_ok=True)  # no leg uploaded: every leg is missing
        if args.record and not list(args.legs.glob(f"{args.prefix}*/verdict.json")):
            return self.not_compared()
        code = self.judge()
        if not args.github_output:
            return code
        v = Verdict.from_json(json.loads((args.out / "verdict.json").read_text()))
        ci_job.summary((args.out / "summary.md").read_text())
        ci_job.output("verdict", v.status)
        ci_job.output("partial", str(bool(v.partial)).lower())
        ci_job.output("regression", str(code == 1).lower())
        ci_job.output("baseline", "".join(c for c in str(v.base.commit or "") if c in "0123456789abcdef"))
        if code in (1, CHECK_FAILED) and args.record:  # main's own code ran on the legs: recorded
            self.say(
                f"pool verdict: {v.status}, recorded (report-regression opens the issue on a regression)"
            )
            return 0
        return code

    def not_compared(self) -> int:
        """A push no leg compared (no baseline yet): no verdict; the first leg's summary says why."""
        args = self.args
        args.out.mkdir(parents=True, exist_ok=True)
        first = sorted(args.legs.glob(f"{args.prefix}*/summary.md"))
        text = (
            first[0].read_text()
            if first
            else ("## hft-bench: not compared\n\nNo leg of the pool uploaded a verdict or a summary.\n")
        )
        (args.out / "summary.md").write_text(text)
        if args.github_output:
            ci_job.summary(text)
            ci_job.output("regression", "false")
            ci_job.output("baseline", "")
        self.say("no leg compared the push (no baseline yet): nothing to combine")
        return 0

    def judge(self) -> int:
        """The legs judged together: verdict.json and summary.md in --out; the exit code."""
        args = self.args
        the_pool = pool.load_pool(args.pool or paths.pool_file(self.root))
        names = [leg.name for leg in the_pool.legs(args.suite)]
        rounds = legcheck.pool_rounds(the_pool.source, the_pool.rounds)
        expect = legcheck.Expect(args.suite, rounds, self.config, args.base_sha, args.head_sha)
        unexpected = legcheck.artifact_problems(args.legs, args.prefix, names)
        legs = [read_leg(n, args.legs / f"{args.prefix}{n}", the_pool.runner(n), expect) for n in names]
        shared_run_ids(legs)
        same_refs(legs)
        fails = check_fails(legs, unexpected, args.legs_result)
        for why in fails:  # first: a leg refused leaves nothing to judge, and UsageError says only that
            self.say(f"the pool's check fails: {why}")
        comparison, seen, alone = compare_legs(legs, load_gates(self.gates_file(args.gates)), rounds.looks)
        v = pool_verdict(legs, comparison, seen, alone, fails)
        args.out.mkdir(parents=True, exist_ok=True)
        failures = failure_lines(comparison, alone)
        self.close(v, failures, verdict=args.out / "verdict.json", summary=args.out / "summary.md")
        return v.exit_code


def pool_verdict(
    legs: list[Leg],
    comparison: Comparison,
    seen: dict[str, list[SeenRow]],
    alone: list[Alone],
    fails: list[str],
) -> Verdict:
    """verdict.json of the pool: the pooled comparison, the refs and the sections carried from
    the first measured leg, `pool`, and this process's exit code."""
    v = comparison.verdict()
    first = next(leg for leg in legs if leg.measured).verdict
    for mine, theirs in ((v.base, first.base), (v.head, first.head)):
        mine.commit, mine.ref = theirs.commit, None if theirs.ref is ABSENT else theirs.ref
    v.harness_changes = first.harness_changes or []
    for key in CARRIED:
        found = next((leg for leg in legs if leg.measured and getattr(leg.verdict, key)), None)
        if found is not None:
            setattr(v, key, replace(getattr(found.verdict, key), runner=found.name))
    v.pool = pool_doc(legs, seen, alone, fails)
    v.partial = v.pool.partial
    # this process's: 3 when the pool's check fails (pool.check says why)
    v.exit_code = comparison.exit_code or (CHECK_FAILED if fails else 0)
    return v


def failure_lines(comparison: Comparison, alone: list[Alone]) -> list[str]:
    """Why each failing check fails: a runner's own test where it alone decided, else the
    pooled figures."""
    decided = {(a.series, a.metric): a for a in alone if a.decided}
    lines = []
    for check in comparison.checks():
        if (check.series, check.metric) in decided:  # the pooled figures are not why it fails
            a = decided[(check.series, check.metric)]
            lines.append(
                f"{check.series} {check.metric}: {alone_text(a)} (its own test), "
                f"beyond the threshold {check.threshold:.2f}"
            )
        elif message := check.fails():
            lines.append(message)
    return lines
