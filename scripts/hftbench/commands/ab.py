"""`hftbench ab --base REF --head REF --suite pr`: the pull-request gate in one command.

1. Export both refs from the clone (`git archive SHA | tar -x`, no .git) into
   <out>/base/worktree and <out>/head/worktree and build the *server* of each there
   (`--build-cmd`, default cargo with one shared target dir, so dependencies compile once).
   Identical commits are built once: the same binary on both sides, a true A/A.
   The head's code is the pull request's: its build and its server run in a sandbox that
   cannot write the harness (sandbox.py, worktrees.py); the verdict says whether it did. A
   build still running at `--build-timeout` (default 15 minutes) is killed with every process
   it started, and the verdict says so in its headline: the head's fails the check (a
   regression), base's makes the comparison invalid; no round is measured. The
   harness runs nothing in the head's folder after its build: each run's git info is read
   from the clone by sha, the host's tuning check is this checkout's own.
2. The clients are NOT rebuilt: both sides use the current checkout's bin/client-* (symlinked
   into each side's bin/), so the client is not a variable of the comparison; only the
   server changes, which is what a pull request on the order API changes.
3. Base and head are measured side by side in time (`--design`, designs.py):
   - duet (the default where the suite allows it: client-hft, closed loop, one connection):
     each round starts both servers at once, pinned alike, and one client-hft sends every
     order to both in a random order per pair (duet.py); each round's ratio is a unit (t over rounds);
   - paired rounds (any other suite): rounds run base, head, head, base, … (one fresh server
     per side per round, same flags), and each round pair is a pair.
   Whatever the host does at an instant, it does to both sides; the test pairs to match.
4. After `--repeats` rounds per side, compare; while a gated metric is inconclusive, add
   `--step` rounds a side, up to `--max-repeats` and within `--time-budget` (the pull
   request waits). Each look is a test, so every look uses alpha / looks (gates.Gates.for_looks),
   less the early look's share: after 8 rounds a side (rounds.Rounds.early) one more look
   stops only on a regression certain at alpha / 31 (gates.EARLY_SHARE), and from the second
   round on, failures that already fail the check (counts, not tests) stop at once.
   Then write verdict.json + summary.md into --out (verdict_text.py writes every text).
5. Interrupted (Ctrl-C, a cancelled job's SIGTERM): the rounds measured so far stay on disk,
   the exported trees are removed, and with two rounds a side or more a verdict marked
   "partial" is written.
6. A regression (or any verdict with --profile): one more round of each side with its server
   under perf, never counted, gives a differential flame graph <out>/profile/diff.svg and the
   top 5 functions by added self time in the verdict (profile.py).

Exit 0 no regression (or still inconclusive at --max-repeats), 1 a gated metric regressed
(or the comparison is invalid, or a build ran past --build-timeout), 2 it could not run (bad
ref, build failed, server did not start), 130 interrupted.
"""

from __future__ import annotations

import argparse
import re
import shlex
import signal
import sys
from dataclasses import dataclass, field
from pathlib import Path

from .. import answers, paths
from .. import config as config_mod
from ..absent import ABSENT
from ..errors import UsageError, raise_interrupt
from ..judge import calibration, designs
from ..judge.compare import Comparison, compare_sides
from ..judge.gates import EARLY_SHARE, Gates, load_gates
from ..judge.rounds import AB_ROUNDS, Rounds, rounds_from_args
from ..judge.session import FAILED, TIME_OUT, Session
from ..measure import cgroups, duet, profile, sandbox
from ..measure.ab_build import build
from ..measure.rig import Group, Rig, RoundError
from ..measure.served import Served
from ..measure.worktrees import BuildTimedOut, remove_worktrees, resolve_commit
from ..results import Run
from ..verdict import AbSection, BuildTimeout, Design, Sandbox, SideRefs, Verdict
from . import flags
from .base import Command
from .flags import Builds, Selection, choose_design, new_out


class AbCommand(Command):
    name = "ab"
    help = "build two refs, run them interleaved until conclusive, compare (the PR gate)"
    shared = (
        "suite",
        "scenarios",
        "clients",
        "orders",
        "out",
        "repo",
        "clients_bin",
        "build_cmd",
        "build_timeout",
        "require_sandbox",
        "server_flags",
        "design",
        "gates",
        "quiet",
    )
    rounds = AB_ROUNDS
    time_budget_help = "no further pair once measuring would pass this many seconds, builds excluded"

    @classmethod
    def add_arguments(cls, p) -> None:
        p.add_argument("--base", required=True, help="base ref (branch, tag, sha)")
        p.add_argument("--head", required=True, help="head ref")
        p.add_argument(
            "--base-label", help="name shown for the base (default: --base unless a sha), e.g. main"
        )
        p.add_argument("--head-label", help="name shown for the head, e.g. the pull request's branch")
        flags.add(p, cls, ("repeats", "max_repeats", "step", "time_budget"))
        p.add_argument("--head-server-flags", default="", help="extra flags for head only (calibration)")
        flags.add(p, cls, ("calibration",))
        p.add_argument(
            "--keep-worktrees", action="store_true", help="leave each side's tree (<out>/<side>/worktree)"
        )
        p.add_argument(
            "--profile",
            action=argparse.BooleanOptionalAction,
            default=None,
            help="profile one extra, uncounted round a side (default: only on a regression)",
        )

    def options(self) -> AbOptions:
        a = self.args
        return AbOptions(
            refs={"base": a.base, "head": a.head},
            labels={"base": a.base_label, "head": a.head_label},
            selection=Selection.of(a),
            builds=Builds.of(a, self.root),
            head_server_flags=tuple(shlex.split(a.head_server_flags)),
            rounds=rounds_from_args(a),
            design=a.design,
            gates=self.gates_file(a.gates),
            calibration=a.calibration,
            out=a.out,
            profile=a.profile,
        )

    def run(self) -> int:
        job = make_job(self.options(), self.config, self.root)
        # SIGTERM (a cancelled CI job) must still remove the exported trees and keep the rounds.
        previous = signal.signal(signal.SIGTERM, raise_interrupt)
        try:
            try:
                build(job, say)
            except BuildTimedOut as exc:
                return self.unbuilt(job, exc)
            resolve_load(job)
            looked = measure(job)
            return 130 if looked is None else self.conclude(job, looked)
        finally:
            signal.signal(signal.SIGTERM, previous)
            sandbox.remove_scratch(job.scratch)
            if not self.args.keep_worktrees:
                remove_worktrees(job.repo, [job.out / side / "worktree" for side in ("base", "head")])

    def unbuilt(self, job: Job, exc: BuildTimedOut) -> int:
        """A side's build killed at --build-timeout: its verdict, written like any (exit 1)."""
        v = timeout_verdict(job, exc)
        self.close(
            v,
            [v.build_timeout.why],
            verdict=job.out / "verdict.json",
            summary=job.out / "summary.md",
            quiet=self.args.quiet,
        )
        say(f"{v.status}: {v.build_timeout.why}; {job.out / 'summary.md'}")
        return v.exit_code

    def conclude(self, job: Job, looked: Looked) -> int:
        """The profile where wanted, then the verdict written, printed and its failures said."""
        c, partial = looked.comparison, looked.partial
        v = verdict_doc(job, c, looked.rounds, looked.measured_s, partial=partial)
        wanted = job.profile if job.profile is not None else c.status == answers.REGRESSION
        if wanted and not partial:
            title = f"{job.sha['head'][:10]} against {job.sha['base'][:10]}: where the time went"
            served = {side: job.served(side) for side in ("base", "head")}
            taken = profile.profile_sides(
                job.rig,
                served,
                job.out,
                title,
                job.p50_us,
                job.root,
                sandboxed=job.sandboxing.enabled,
                say=say,
            )
            v.profile = taken
        self.close(
            v,
            c.failures(),
            verdict=job.out / "verdict.json",
            summary=job.out / "summary.md",
            quiet=self.args.quiet,
        )
        builds = sum(job.builds.values())
        say(
            f"{c.status}{' (partial)' if partial else ''} after {looked.rounds} rounds per side; measuring "
            f"took {looked.measured_s:.0f} s (builds {builds:.0f} s); {job.out / 'summary.md'}"
        )
        return 130 if partial else c.exit_code


@dataclass(frozen=True)
class AbOptions:
    """ab's flags, read once (AbCommand.options): what make_job needs of them."""

    refs: dict[str, str]  # side -> the ref given (--base, --head)
    labels: dict[str, str | None]  # side -> --base-label / --head-label
    selection: Selection  # --suite, --scenarios, --clients, --orders
    builds: Builds  # --repo, --clients-bin, --build-cmd, --require-sandbox, --server-flags
    head_server_flags: tuple[str, ...]  # --head-server-flags: the head's own (calibration)
    rounds: Rounds  # --repeats, --max-repeats, --step, --time-budget
    design: str  # --design: auto, duet or paired-rounds
    gates: Path  # --gates, else the root's
    calibration: Path | None  # --calibration
    out: Path | None  # --out
    profile: bool | None  # --profile / --no-profile; None: on a regression


@dataclass(frozen=True)
class Looked:
    """What the rounds ended with: the last look, and how it got there."""

    comparison: Comparison
    rounds: int  # complete rounds per side
    measured_s: float  # measuring's wall time, builds excluded
    partial: bool  # interrupted after two rounds a side or more


SHA = re.compile(r"^[0-9a-f]{7,40}$")


@dataclass
class Job:
    """Everything one A/B needs, resolved from the flags."""

    repo: Path  # the repository holding both commits
    root: Path  # this checkout: config, clients, the shared cargo target dir
    out: Path  # ab's folder: base/, head/, verdict.json, summary.md
    cfg: config_mod.Config
    gates: Gates
    rig: Rig  # the plan, the design (rig.design: duet or paired rounds) and the placement every round shares
    clients_bin: Path
    sha: dict[str, str]  # side -> commit
    label: dict[str, str | None]  # side -> branch or ref name shown in texts (None: the sha says it)
    flags: dict[str, list[str]]  # side -> hft-server flags
    build_cmd: str
    build_timeout_s: float | None  # --build-timeout: a build still running then is killed (None: no limit)
    rounds: Rounds  # rounds a side, looks, time budget
    sandboxing: sandbox.Policy  # whether the head builds and serves in the sandbox (sandbox.py)
    scratch: Path | None = None  # the sandboxed build's own target dir and home, removed after
    profile: bool | None = None  # True: always, False: never, None: on a regression
    builds: dict[str, float] = field(default_factory=dict)  # side -> build wall time (s)
    p50_us: dict[str, list[float]] = field(default_factory=dict)  # side -> each counted round's P50
    session: Session | None = None  # the rounds measured so far, in memory (session.py)
    # The early look's gates (alpha x gates.EARLY_SHARE), asked once after rounds.early rounds
    # a side whether a regression is already certain; None: no early look.
    early: Gates | None = None

    def side_bin(self, side: str) -> Path:
        return self.out / side / "bin"

    def served(self, side: str) -> Served:
        """`side` as the rig serves it: its bin/, its flags, its commit (its git info read from
        the clone by sha, never from its tree) and its ref's label."""
        return Served(
            self.side_bin(side),
            tuple(self.flags[side]),
            repo=self.repo,
            commit=self.sha[side],
            label=self.label[side],
        )


def make_job(o: AbOptions, cfg: config_mod.Config, root: Path) -> Job:
    # Each side's server in a cgroup of its own (cgroups.py): said once, before any build, where
    # none can be made (HFT_CGROUPS=on refuses instead; a bad limit variable is refused here).
    cgroups.policy(say=True)
    out = new_out(o.out, root, "ab")
    plan = o.selection.plan(cfg, o.builds.clients_bin)
    flags = {"base": list(o.builds.server_flags), "head": [*o.builds.server_flags, *o.head_server_flags]}
    gates = calibration.apply(load_gates(o.gates), o.calibration)
    looks = gates.for_looks(o.rounds.looks)
    return Job(
        repo=o.builds.repo,
        root=root,
        out=out,
        cfg=cfg,
        gates=looks.spend(1.0 - EARLY_SHARE) if o.rounds.early else looks,
        early=gates.spend(EARLY_SHARE) if o.rounds.early else None,
        rig=Rig.of(plan, choose_design(plan, o.design), cfg.targets),
        clients_bin=o.builds.clients_bin,
        sha={side: resolve_commit(o.builds.repo, ref) for side, ref in o.refs.items()},
        # the label given, else the ref unless a sha (the sha says it)
        label={side: o.labels[side] or (None if SHA.match(ref) else ref) for side, ref in o.refs.items()},
        flags=flags,
        build_cmd=o.builds.build_cmd,
        build_timeout_s=o.builds.build_timeout_s,
        rounds=o.rounds,
        sandboxing=sandbox.policy(required=o.builds.require_sandbox),
        profile=o.profile,
    )


def say(msg: str) -> None:
    print(f"hftbench ab: {msg}", file=sys.stderr, flush=True)


def resolve_load(job: Job) -> None:
    """The load scenarios' rate: a share of the base server's capacity, measured once before
    the rounds, so every round of both sides runs at the same rate (rig.py, capacity.py)."""
    rps = job.rig.load(job.served("base"), job.out / "base" / "capacity-probe.log")
    if rps is not None:
        loads = [sc for sc in job.rig.plan.scenarios if sc.capacity_fraction]
        rates = ", ".join(f"{sc.name} {sc.rate:,.0f}/s" for sc in loads)
        say(f"capacity {rps:,.0f} orders/s on this runner; load at {rates}")


def compare_job(job: Job) -> Comparison:
    """A look: the rounds measured so far, from memory."""
    return compare_sides(job.session.side("base"), job.session.side("head"), job.gates, design=job.rig.design)


def told(job: Job, pair: int, runs: dict[str, Run]) -> None:
    """A round measured (the rig kept it in the session): each side's cells said, its P50 kept
    for the profile."""
    for side, run in runs.items():
        bad = [f"{c.scenario}: {c.reason}" for c in run.failed]
        say(
            f"round {pair + 1} {side}: {len(run.cells) - len(bad)}/{len(run.cells)} cells ok"
            + (f" ({bad[0]})" if bad else "")
        )
        p50 = profile.round_p50(run)
        if p50 is not None:
            job.p50_us.setdefault(side, []).append(p50)


def measure(job: Job) -> Looked | None:
    """Interleaved rounds until conclusive (or out of rounds / time); None when interrupted
    before two complete rounds a side (no verdict)."""
    session = job.session = Session(job.rounds)  # its clock starts here: builds are not measuring
    comparison: Comparison | None = None
    partial = False

    def settled() -> bool:
        nonlocal comparison
        comparison = compare_job(job)
        return not comparison.needs_more_repeats()

    def certain() -> bool:
        """The rounds already fail the check: by their failures (counts: every round), or by a
        regression certain at the early look's share of alpha (once, after rounds.early)."""
        if session.failures_fail():
            return True
        if job.early is None or session.done != job.rounds.early:
            return False
        early = compare_sides(session.side("base"), session.side("head"), job.early, design=job.rig.design)
        return early.status == answers.REGRESSION

    def more(upto: int) -> None:
        say(f"inconclusive after {session.done} rounds a side; measuring up to {upto}")

    try:
        sides = Group({side: job.served(side) for side in ("base", "head")})
        try:
            stopped = job.rig.measure(
                session,
                {"": sides},
                job.out,
                settled,
                told=lambda _, pair, runs: told(job, pair, runs),
                on_more=more,
                failed=certain,
            )
        except RoundError as exc:
            raise UsageError(str(exc)) from exc
        if stopped == FAILED:
            say(
                f"after {session.done} rounds a side the check already fails (its failures, or a "
                "regression certain at the early look): no more rounds"
            )
            comparison = compare_job(job)
        if stopped == TIME_OUT:
            budget = f"time budget {job.rounds.time_budget_s:.0f} s spent"
            say(f"inconclusive after {session.done} rounds a side; {budget}")
    except KeyboardInterrupt:
        partial = True
        say(
            f"interrupted after {session.done} complete rounds per side; "
            f"the run folders in {job.out} are kept"
        )
        if session.done < 2:
            say("fewer than 2 rounds a side: no verdict written")
            return None
        session.drop_incomplete()
        comparison = compare_job(job)
    return Looked(comparison, session.done, session.elapsed(), partial)


def verdict_doc(job: Job, c: Comparison, rounds: int, measured: float, *, partial: bool) -> Verdict:
    """verdict.json: the comparison, each side's commit and ref, and how ab measured it."""
    v = c.verdict()
    for refs, side in ((v.base, "base"), (v.head, "head")):
        refs.commit, refs.ref = job.sha[side], job.label[side]
    v.partial = partial
    duet_design = job.rig.duet
    order = "each order to both servers, in random order per pair" if duet_design else "interleaved B,H,H,B,…"
    v.ab = AbSection(
        rounds_per_side=rounds,
        design=job.rig.design,
        order=order,
        block_s=duet.BLOCK_S if duet_design else ABSENT,
        measure_s=round(measured, 1),
        build_s={k: round(s, 1) for k, s in job.builds.items()},
        server_flags={side: shlex.join(flags) for side, flags in job.flags.items()},
        sandbox=Sandbox(**job.sandboxing.to_json()),
        capacity_rps=round(job.rig.capacity_rps) if job.rig.capacity_rps else ABSENT,
    )
    return v


def timeout_verdict(job: Job, exc: BuildTimedOut) -> Verdict:
    """verdict.json of an A/B whose side's build ran past --build-timeout: no round measured.
    The head's build is the pull request's code: a build that never ends fails it (a
    regression, as a head whose server dies is). Base's makes the comparison invalid: nothing
    judged, and what is not judged is not green."""
    side = "base" if exc.sha == job.sha["base"] else "head"
    why = (
        f"{side}'s build did not finish in {exc.limit_s:g} s: it was killed with every process it "
        f"started (see {side}/build.log; a longer limit: --build-timeout)"
    )
    design = job.rig.design
    v = Verdict(
        status=answers.REGRESSION if side == "head" else answers.INVALID,
        exit_code=1,
        gates=paths.shown(job.gates.source),
        confidence=job.gates.confidence,
        looks=job.gates.looks,
        design=Design(design, designs.DESCRIBE[design]),
        calibration=job.gates.calibration,
        guarded=[],
        unguarded=[],
        suite=job.rig.plan.suite,
        base=SideRefs(0, [], job.sha["base"], ref=job.label["base"]),
        head=SideRefs(0, [], job.sha["head"], ref=job.label["head"]),
        flags=[],
        results=[],
    )
    v.build_timeout = BuildTimeout(side, job.sha[side], exc.limit_s, f"{side}/build.log", why)
    v.ab = AbSection(
        rounds_per_side=0,
        design=design,
        build_s={k: round(s, 1) for k, s in job.builds.items()},
        server_flags={s: shlex.join(f) for s, f in job.flags.items()},
        sandbox=Sandbox(**job.sandboxing.to_json()),
    )
    return v
