"""`hftbench history add | baseline | changepoints`: the store on the gh-pages layout.

    hftbench history add RUN|RUNS --store DIR [--verdict verdict.json]
    hftbench history baseline --store DIR --suite S [--branch main] [--runner ID] [--last N] [--out DIR]
    hftbench history changepoints --store DIR [--branch main]

The format is docs/history-store.md; the store logic is store/history.py.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING

from .. import metrics, results
from ..errors import UsageError
from ..judge.changepoints import e_divisive
from ..publish.store_text import stored_verdict
from ..store import history as hs
from ..store_shapes import ChangePoint, ChangePoints, RunEntry
from ..verdict import Verdict
from . import flags
from .base import Command

if TYPE_CHECKING:
    from ..config import Config

SHA = re.compile(r"[0-9a-f]{7,40}")  # what a stored commit must be before git sees it
CHANGEPOINT_METRICS = tuple(m.name for m in (metrics.P50, metrics.P99, metrics.P999, metrics.THROUGHPUT_RPS))


def baseline_commit(store: Path, entry: RunEntry) -> str:
    """The stored run's commit, checked: the store is gh-pages data anyone with push access (or
    a runner's results.json) shaped, and main-bench hands this to git (`--output=…` would be
    an option there, `main~3` another commit)."""
    commit = entry.get("commit")
    if not commit:
        raise UsageError(f"{store}: the newest baseline run {entry['run_id']} names no commit")
    if not isinstance(commit, str) or not SHA.fullmatch(commit):
        raise UsageError(
            f"{store}: the newest baseline run {entry['run_id']} names commit {str(commit)[:50]!r}, not a "
            "7 to 40 digit lowercase hex sha; fix or drop that run in the store's shard (restore it "
            "from the gh-pages git history), or let this push record itself as the next baseline"
        )
    return commit


def compute_changepoints(
    store: Path, *, branch: str | None = "main", alpha: float = 0.01, permutations: int = 199
) -> ChangePoints:
    """changepoints.json for every suite / scenario / client / metric of the store.

    Each runner's runs are searched apart: two machines of a pool differ in level, so a
    sequence mixing them is as noisy as their gap (it hides one machine's step) and can step
    where the pool's share of runs shifts. Entries name their runner; `index` counts its runs."""
    index = hs.load_index(store)
    out: dict[str, list[ChangePoint]] = {}
    for suite, info in sorted(index.get("suites", {}).items()):
        runs = [r for r in hs.iter_runs(store, suite) if branch is None or r.get("branch") == branch]
        by_runner: dict[str | None, list[RunEntry]] = {}
        for run in runs:
            by_runner.setdefault(run.get("runner"), []).append(run)
        for s in info.get("series", []):
            for metric in CHANGEPOINT_METRICS:
                found = [
                    cp
                    for runner, own_runs in by_runner.items()
                    for cp in _runner_changepoints(own_runs, runner, s, metric, alpha, permutations)
                ]
                if found:
                    found.sort(key=lambda c: (c["date"] or "", c["run_id"]))
                    out[f"{suite}/{s['scenario']}/{s['client']}/{metric}"] = found
    return {"schema_version": hs.STORE_SCHEMA_VERSION, "updated_at": hs.now_rfc3339(), "series": out}


def _runner_changepoints(
    runs: list[RunEntry],
    runner: str | None,
    series: dict[str, str],
    metric: str,
    alpha: float,
    permutations: int,
) -> list[ChangePoint]:
    """The change points of one series × metric in one runner's runs (in store order)."""
    points = []  # (run, value) where this series has the metric
    for run in runs:
        for res in run["results"]:
            same = res["scenario"] == series["scenario"] and res["client"] == series["client"]
            if same and res.get(metric) is not None:
                points.append((run, float(res[metric])))
    if len(points) < 6:
        return []
    found = e_divisive([v for _, v in points], alpha=alpha, permutations=permutations, seed=len(points))
    return [
        {
            "run_id": points[c.index][0]["run_id"],
            "commit": points[c.index][0].get("commit"),
            "date": points[c.index][0].get("date"),
            "runner": runner,
            "index": c.index,
            "before": round(c.before, 3),
            "after": round(c.after, 3),
            "change_pct": round(c.change_pct, 2),
            "p_value": round(c.p_value, 4),
        }
        for c in found
    ]


def this_runner(suite: str, cfg: Config, root: Path) -> str:
    """This machine's runner id as a run of `suite` here records it (its placement included)."""
    from ..measure import fingerprint, placement

    host = fingerprint.host(root)
    where = placement.resolve(None, None)
    suites = cfg.suites
    if suite in suites and suites[suite].colocate:
        where = where.colocated()
    if where.describe():
        host["placement"] = where.describe()
    return fingerprint.runner_id(host)


def write_changepoints(store: Path, **kwargs) -> ChangePoints:
    path = store / "changepoints.json"
    with hs.locked(store):  # the runs it reads are the runs the index counts
        if path.exists():
            hs.read_doc(path)  # a corrupt or newer file is refused, not overwritten
        doc = compute_changepoints(store, **kwargs)
        hs.write_doc(path, doc)
    return doc


class HistoryCommand(Command):
    name = "history"
    help = "the history store: add runs, baselines, change points"

    @classmethod
    def add_arguments(cls, p) -> None:
        sub = p.add_subparsers(dest="history_command", metavar="ACTION", required=True)

        add = sub.add_parser("add", help="append a run folder to the store (shard by suite and month)")
        add.add_argument(
            "run",
            type=Path,
            help="run folder written by `hftbench run`, or a folder of one commit's runs (ab's head/): "
            "one entry",
        )
        flags.add(add, cls, ("store",))
        add.add_argument("--verdict", type=Path, help="verdict.json of `hftbench compare` to attach")

        base = sub.add_parser("baseline", help="the last matching runs, as run folders or a list")
        flags.add(base, cls, ("store",))
        base.add_argument("--suite", required=True)
        flags.add(base, cls, ("branch",))
        base.add_argument(
            "--runner", help="runner fingerprint id, or 'here' for this machine's (default: any)"
        )
        flags.add(base, cls, ("last",))
        base.add_argument("--out", type=Path, help="write them as run folders here (for `hftbench compare`)")
        base.add_argument(
            "--commit",
            action="store_true",
            help="print only the newest matching run's commit (main's baseline)",
        )

        cp = sub.add_parser(
            "changepoints", help="recompute changepoints.json (E-divisive + permutation test)"
        )
        flags.add(cp, cls, ("store", "branch"))
        cp.add_argument(
            "--alpha", type=float, default=0.01, help="significance of a change point (default 0.01)"
        )
        cp.add_argument("--permutations", type=int, default=199, help="permutation test size (default 199)")

    def run(self) -> int:
        action = {"add": self.add, "baseline": self.baseline, "changepoints": self.changepoints}
        try:
            return action[self.args.history_command]()
        except hs.StoreError as exc:
            raise UsageError(str(exc)) from exc

    def store(self) -> Path:
        """--store, which baseline and changepoints read: made by `history add`."""
        store = self.args.store
        if not (store / "index.json").is_file():
            raise UsageError(
                f"{store}: no index.json; create the store with `hftbench history add RUN --store {store}`"
            )
        return store

    def add(self) -> int:
        args = self.args
        try:
            if (args.run / "results.json").is_file():
                runs = [results.load_run(args.run)]
            else:
                runs = [results.load_run(p) for p in results.list_runs(args.run)]
        except (OSError, ValueError) as exc:
            raise UsageError(str(exc)) from exc
        if not runs:
            raise UsageError(f"{args.run}: no results.json in it or in its run_* folders; pass a run folder")
        verdict = None
        if args.verdict:
            try:
                verdict = Verdict.from_json(json.loads(args.verdict.read_text()))
            except (OSError, json.JSONDecodeError, TypeError, AttributeError) as exc:
                raise UsageError(
                    f"{args.verdict}: cannot read verdict ({exc}); pass compare's --json file"
                ) from exc
        entry = hs.add_run(args.store, runs, stored_verdict(verdict) if verdict else None)
        print(
            f"history: added {entry['run_id']} ({runs[-1].suite}, {len(entry['results'])} series, "
            f"{len(runs)} round(s)) to {args.store}"
        )
        return 0

    def baseline(self) -> int:
        args, store = self.args, self.store()
        runner = this_runner(args.suite, self.config, self.root) if args.runner == "here" else args.runner
        entries = hs.baseline_runs(store, suite=args.suite, branch=args.branch, runner=runner, last=args.last)
        if not entries:
            why = hs.why_no_baseline(store, suite=args.suite, branch=args.branch, runner=runner)
            raise UsageError(f"{store}: no baseline: {why}")
        if args.commit:
            print(baseline_commit(store, entries[-1]))
            return 0
        if args.out:
            for path in hs.materialize(entries, args.out, args.suite):
                print(path)
        else:
            for e in entries:
                print(f"{e['run_id']}  {e.get('date')}  {(e.get('commit') or '')[:10]}  {e.get('runner')}")
        return 0

    def changepoints(self) -> int:
        args, store = self.args, self.store()
        doc = write_changepoints(store, branch=args.branch, alpha=args.alpha, permutations=args.permutations)
        total, path = sum(len(v) for v in doc["series"].values()), store / "changepoints.json"
        print(f"history: {total} change points in {len(doc['series'])} series -> {path}")
        return 0
