"""`hftbench bisect --good SHA --bad SHA`: the first commit that made a series slower.

1. The commits good..bad (first parent) are the candidates. Each one measured is built
   once: only the server, in a folder exported from the clone (no .git), with one cargo
   target dir shared by all of them (ab's build), so a commit costs an incremental build of
   hft-server.
2. A step measures the middle candidate interleaved with both ends, in ab's design: where the
   suite runs as duets (ab's default), each round is three duets (good with candidate,
   candidate with bad, good with bad), else rounds of good, candidate, bad in rotating order,
   a fresh server each. It compares the candidate, with ab's statistics, against good and
   against bad on one series × metric, so a step sees what ab flagged; bisect_steps.side_of
   says which side it falls on. An undecided step gets `--step` more rounds a side, up to
   `--max-repeats` (each look a test: Gates.for_looks); still undecided, the answer is
   "between A and B" with the reason, never a guessed commit.
3. The step table is printed as it goes (a progress bar over the steps on a terminal);
   <out>/bisect.json is rewritten after every step, so Ctrl-C (or a cancelled job's SIGTERM)
   keeps the steps done and answers with the range narrowed so far.
4. `--time-budget` bounds the whole bisect, builds included: no step starts (and no look is
   added) that would likely end past it; the answer is then the range so far.
5. `--from-verdict VERDICT` takes good, bad, series and metric from an ab verdict (its base,
   head and the regression that slowed its series most) and writes the result into it as
   `bisect` (main-bench).

Exit 0 a culprit found, 1 the answer is a range, 2 it could not run, 130 interrupted.
"""

from __future__ import annotations

import json
import signal
import sys
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

from .. import config as config_mod
from .. import metrics
from ..bisect_record import BisectRecord, BisectStep, StepComparison
from ..errors import UsageError, raise_interrupt
from ..fsio import write_atomic
from ..judge import bisect_steps as bs
from ..judge import calibration
from ..judge.compare import compare_sides
from ..judge.gates import Gates, load_gates
from ..judge.rounds import AB_ROUNDS, Rounds, rounds_from_args
from ..judge.session import TIME_OUT, Session
from ..measure import sandbox
from ..measure.cell import link_clients
from ..measure.progress import note, step_bar
from ..measure.rig import Group, Rig, RoundError, key
from ..measure.served import Served
from ..measure.worktrees import build_server, git_output, remove_worktrees, resolve_commit
from ..verdict import Verdict
from . import flags
from .base import Command
from .flags import Builds, Selection, choose_design, new_out

SIDES = ("good", "cand", "bad")
# A duet step's comparisons: name -> (the side served as base, the side served as head).
DUETS = {"vs_good": ("good", "cand"), "vs_bad": ("cand", "bad"), "ends": ("good", "bad")}
# A step takes ab's looks; the time budget is the whole bisect's, builds included.
BISECT_ROUNDS = replace(AB_ROUNDS, time_budget_s=3600.0)


class BisectCommand(Command):
    name = "bisect"
    help = "find the commit that made a series slower (interleaved A/B at each step)"
    raw_description = True
    shared = (
        "suite",
        "orders",
        "out",
        "repo",
        "clients_bin",
        "build_cmd",
        "build_timeout",
        "require_sandbox",
        "server_flags",
        "gates",
        "quiet",
    )
    rounds = BISECT_ROUNDS
    time_budget_help = "seconds for the whole bisect, builds included"

    @classmethod
    def add_arguments(cls, p) -> None:
        p.add_argument("--good", help="a commit without the slowdown")
        p.add_argument("--bad", help="a later commit with it")
        p.add_argument(
            "--from-verdict",
            type=Path,
            help="an ab verdict.json: good, bad, series, metric from it; "
            "the result is written into it as `bisect`",
        )
        p.add_argument("--series", help="scenario/client to judge (default latency-1c/hft)")
        p.add_argument("--metric", help="gates.yaml metric to judge (default p99_us)")
        flags.add(p, cls, ("repeats", "max_repeats", "step", "time_budget", "calibration"))

    def options(self) -> BisectOptions:
        a = self.args
        target = bs.Target(a.good, a.bad, a.series, a.metric, a.suite)
        if a.from_verdict:
            target = fill_from_verdict(a.from_verdict, target)
        if not target.good or not target.bad:
            why = "pass --good SHA and --bad SHA (or --from-verdict VERDICT with a base and a head)"
            raise UsageError(why)
        return BisectOptions(
            target=target,
            selection=Selection.of(a, suite=target.suite),
            builds=Builds.of(a, self.root),
            rounds=rounds_from_args(a, min_repeats=2),
            gates=self.gates_file(a.gates),
            calibration=a.calibration,
            out=a.out,
        )

    def run(self) -> int:
        o = self.options()
        b = make_bisect(o, self.config, self.root)
        if sandbox.policy(required=o.builds.require_sandbox).enabled:  # one scratch target for all its builds
            b.scratch = sandbox.scratch_for(b.root / "target" / "ab", seed="cargo" in b.build_cmd)
        b.out.mkdir(parents=True, exist_ok=True)
        say(
            f"{len(b.commits) - 1} commits after {b.commits[0].sha[:10]}; judging {b.series} {b.metric}; "
            f"at most {bs.steps_left(0, len(b.commits) - 1)} steps"
        )
        previous = signal.signal(signal.SIGTERM, raise_interrupt)
        code = 130
        try:
            doc = run_bisect(b, self.args.quiet)
            code = 0 if doc.status == bs.CULPRIT else 1
        except KeyboardInterrupt:
            doc = BisectRecord.from_json(json.loads((b.out / "bisect.json").read_text()))
            say(f"interrupted: the {len(b.steps)} steps done are in {b.out / 'bisect.json'}")
        finally:
            signal.signal(signal.SIGTERM, previous)
            sandbox.remove_scratch(b.scratch)
            remove_worktrees(b.repo, [folder / "worktree" for folder in b.built.values()])
        from ..publish.bisect_text import bisect_lines

        print("\n".join(bisect_lines(doc)))
        if self.args.from_verdict:
            merge_into_verdict(self.args.from_verdict, doc)
        say(f"{doc.status} after {len(b.steps)} steps in {b.elapsed():.0f} s; {b.out / 'bisect.json'}")
        return code


@dataclass(frozen=True)
class BisectOptions:
    """bisect's flags, read once (BisectCommand.options): what make_bisect needs of them."""

    target: bs.Target  # --good, --bad, --series, --metric (or --from-verdict's)
    selection: Selection  # --suite (or the verdict's), --orders
    builds: Builds  # --repo, --clients-bin, --build-cmd, --require-sandbox, --server-flags
    rounds: Rounds  # a step's rounds and looks; its time budget is the whole bisect's
    gates: Path  # --gates, else the root's
    calibration: Path | None  # --calibration
    out: Path | None  # --out


@dataclass
class Bisect:
    repo: Path
    root: Path
    out: Path
    cfg: config_mod.Config
    rig: Rig  # ab's: the plan, the design (rig.design) and the placement of every round of every step
    gates: Gates  # one metric, one series, alpha / looks
    metric: str
    series: str
    commits: list[bs.Commit]  # [good, …, bad]
    clients_bin: Path
    build_cmd: str
    build_timeout_s: float | None  # --build-timeout (None: no limit)
    server_flags: list[str]
    rounds: Rounds  # a step's rounds and looks; its time budget is the whole bisect's
    started: float = field(default_factory=time.perf_counter)
    built: dict[str, Path] = field(default_factory=dict)  # sha -> folder whose bin/ holds its server
    scratch: Path | None = None  # every commit is code under test: built and served in the sandbox
    steps: list[BisectStep] = field(default_factory=list)

    def elapsed(self) -> float:
        return time.perf_counter() - self.started


def fill_from_verdict(path: Path, given: bs.Target) -> bs.Target:
    """`given` filled from the ab verdict at `path` (bs.from_verdict), saying which regression
    it picked where the flags did not."""
    try:
        doc = Verdict.from_json(json.loads(path.read_text()))
    except (OSError, json.JSONDecodeError, TypeError, AttributeError) as exc:
        raise UsageError(f"--from-verdict {path}: {exc}; pass ab's verdict.json") from exc
    target, picked = bs.from_verdict(doc, given)
    if picked:
        say(picked)
    return target


def make_bisect(o: BisectOptions, cfg: config_mod.Config, root: Path) -> Bisect:
    t = o.target
    series, metric = t.series or "latency-1c/hft", t.metric or metrics.P99.name
    if series.count("/") != 1:
        raise UsageError(f"--series {series!r}: expected scenario/client, e.g. latency-1c/hft")
    repo = o.builds.repo
    gates = calibration.apply(load_gates(o.gates), o.calibration)
    try:
        gate = gates.metric(metric)
    except KeyError:
        raise UsageError(
            f"--metric {metric!r} is not in {gates.source}; one of {', '.join(m.name for m in gates.metrics)}"
        ) from None
    gates = replace(gates, metrics=[replace(gate, gated=True)], series=(series,)).for_looks(o.rounds.looks)
    scenario, client = series.split("/")
    plan = o.selection.plan(cfg, o.builds.clients_bin, scenarios=[scenario], clients=[client])
    good, bad = resolve_commit(repo, t.good), resolve_commit(repo, t.bad)
    shas = git_output(repo, "rev-list", "--first-parent", "--reverse", f"{good}..{bad}").split()
    if not shas or shas[-1] != bad:
        raise UsageError(
            f"{t.bad} is not a descendant of {t.good} on its first-parent line; pass an older --good"
        )
    commits = [bs.Commit(s, git_output(repo, "log", "-1", "--format=%s", s)) for s in [good, *shas]]
    out = new_out(o.out, root, "bisect")
    return Bisect(
        repo=repo,
        root=root,
        out=out,
        cfg=cfg,
        rig=Rig.of(plan, choose_design(plan, "auto"), cfg.targets),
        gates=gates,
        metric=metric,
        series=series,
        commits=commits,
        clients_bin=o.builds.clients_bin,
        build_cmd=o.builds.build_cmd,
        build_timeout_s=o.builds.build_timeout_s,
        server_flags=list(o.builds.server_flags),
        rounds=o.rounds,
    )


def say(msg: str) -> None:
    print(f"hftbench bisect: {msg}", file=sys.stderr, flush=True)


def built(b: Bisect, commit: bs.Commit) -> Path:
    """The folder whose bin/ holds this commit's server (built once)."""
    if commit.sha not in b.built:
        folder = b.out / "builds" / commit.sha[:12]
        say(f"building {commit.sha[:10]} {commit.subject[:50]}{'' if b.scratch else ' UNSANDBOXED'} …")
        build_server(
            b.repo,
            commit.sha,
            folder,
            b.build_cmd,
            b.root / "target" / "ab",
            scratch=b.scratch,
            timeout_s=b.build_timeout_s,
        )
        link_clients(b.clients_bin, folder / "bin", b.rig.plan.clients)
        b.built[commit.sha] = folder
    return b.built[commit.sha]


def served(b: Bisect, commit: bs.Commit, label: str) -> Served:
    """`commit` as the rig serves it: its server (built once), the bisect's flags, its git
    info read from the clone by sha (never from the tree its code built in)."""
    folder = built(b, commit)
    return Served(folder / "bin", tuple(b.server_flags), repo=b.repo, commit=commit.sha, label=label)


def load(b: Bisect) -> None:
    """The load series' rate, a share of the good commit's capacity (ab's base), probed once
    so that every round of every step runs at one rate, as ab's do (rig.py)."""
    rps = b.rig.load(served(b, b.commits[0], "good"), b.out / "capacity-probe.log")
    if rps is not None:
        say(f"capacity {rps:,.0f} orders/s on this runner (the good commit's server)")


def _metric(b: Bisect, session: Session, name: str) -> StepComparison:
    # Paired rounds: each round runs good, cand and bad back to back (rig.order), the round is
    # a pair; duets: each comparison its own duet, base and head served at once (designs.py).
    if b.rig.duet:
        base, head = key(name, "base"), key(name, "head")
    else:
        base, head = DUETS[name]
    sides = (session.side(k, label=k.rsplit("/", 1)[-1]) for k in (base, head))
    c = compare_sides(*sides, b.gates, design=b.rig.design)
    scenario, client = b.series.split("/")
    r = next((r for r in c.results if (r.scenario, r.client, r.metric) == (scenario, client, b.metric)), None)
    return bs.comparison(r)


def measure_step(b: Bisect, index: int, lo: int, hi: int) -> BisectStep:
    """Rounds of good, candidate, bad until the candidate is placed (or out of looks / time)."""
    step_dir = b.out / f"step_{len(b.steps) + 1:02d}"
    commit = b.commits[index]
    ends = (b.commits[0], commit, b.commits[-1])
    for c in ends:
        built(b, c)
    span = [b.commits[lo].sha, b.commits[hi].sha]
    record = BisectStep(commit.sha, commit.subject, good=ends[0].sha, bad=ends[2].sha, range=span)
    commit_of = dict(zip(SIDES, ends, strict=True))
    if b.rig.duet:  # each comparison a duet of its own, into step_NN/<comparison>/
        groups = {
            name: Group({"base": served(b, commit_of[base], base), "head": served(b, commit_of[head], head)})
            for name, (base, head) in DUETS.items()
        }
    else:  # one round of three, into step_NN/<side>/
        groups = {"": Group({side: served(b, commit_of[side], side) for side in SIDES})}
    session = Session(b.rounds)
    spent_before = b.elapsed()
    found: dict[str, StepComparison] = {}

    def settled() -> bool:
        found.update({name: _metric(b, session, name) for name in DUETS})
        record.decision = bs.side_of(found["vs_good"].verdict, found["vs_bad"].verdict)
        return record.decision != bs.UNDECIDED

    def more(upto: int) -> None:
        say(f"{commit.sha[:10]} undecided after {session.done} rounds a side; measuring up to {upto}")

    try:
        stopped = b.rig.measure(session, groups, step_dir, settled, spent_before_s=spent_before, on_more=more)
    except RoundError as exc:
        where = f"{exc.group} duet" if exc.group else commit_of[exc.side].sha[:10]
        raise UsageError(f"{where}: {exc}") from exc
    record.vs_good, record.vs_bad, record.ends = found["vs_good"], found["vs_bad"], found["ends"]
    record.rounds, record.seconds = session.done, round(session.elapsed(), 1)
    if stopped == TIME_OUT:
        record.stopped = "time budget"
    if record.decision == bs.UNDECIDED:
        record.reason = bs.why_undecided(record.vs_good, record.vs_bad, record.ends)
    return record


def run_bisect(b: Bisect, quiet: bool) -> BisectRecord:
    lo, hi = 0, len(b.commits) - 1
    reason: str | None = None
    bar = step_bar(bs.steps_left(lo, hi), quiet, "bisect")
    note(bar, bs.TABLE_HEAD)
    save(b, lo, hi, "bisecting: no step finished yet")
    try:
        load(b)
        while (mid := bs.midpoint(lo, hi)) is not None:
            if b.steps and b.elapsed() + b.steps[-1].seconds > b.rounds.time_budget_s:
                reason = f"time budget of {b.rounds.time_budget_s:.0f} s spent after {len(b.steps)} steps"
                break
            step = measure_step(b, mid, lo, hi)
            b.steps.append(step)
            note(bar, bs.table_row(len(b.steps), step))
            if bar is not None:
                bar.total = len(b.steps) + bs.steps_left(*bs.narrow(step.decision, mid, lo, hi))
                bar.update(1)
            if step.decision == bs.UNDECIDED:
                stop = " (time budget)" if step.stopped else ""
                reason = f"step {len(b.steps)}{stop}: {b.commits[mid].sha[:10]} {step.reason}"
                break
            lo, hi = bs.narrow(step.decision, mid, lo, hi)
            save(b, lo, hi, "bisecting")
    except KeyboardInterrupt:
        reason = f"interrupted after {len(b.steps)} steps"
        save(b, lo, hi, reason)
        raise
    finally:
        if bar is not None:
            bar.close()
    return save(b, lo, hi, reason)


def save(b: Bisect, lo: int, hi: int, reason: str | None) -> BisectRecord:
    doc = bs.result(b.commits, lo, hi, b.steps, reason=reason, series=b.series, metric=b.metric)
    write_atomic(b.out / "bisect.json", json.dumps(doc.to_json(), indent=2) + "\n")
    return doc


def merge_into_verdict(path: Path, doc: BisectRecord) -> None:
    """Add the result to an ab verdict as `bisect` (additive: nothing else changes)."""
    verdict = Verdict.from_json(json.loads(path.read_text()))
    verdict.bisect = doc
    write_atomic(path, json.dumps(verdict.to_json(), indent=2) + "\n")
