"""`hftbench calibrate`: how often the gate cries wolf, how often it says "no change", how
often it catches a real slowdown (uniform or in the tail only), and so which series × metrics
this runner can judge.

Measure (unless --from): rounds as `ab` measures them (`--design`; designs.py): duet where
the suite allows it (both servers at once, one client interleaving orders), else paired
rounds. `--runs` A/A rounds (this checkout's build against itself), `--slow-runs` rounds
against a server with `--inject-delay-us D` (every order slower), `--stall-runs` against
`--inject-stall-us S --inject-stall-every N` (one order in N: the tail only), `--after-runs`
against `--inject-after-reply-us A` (CPU work after each reply: off the order's own path, so
in a duet base pays for it too) and `--contention-runs` against `--inject-contention-us C` (a
cost only while several connections are open), interleaved (aa, slow, stall, after,
contention, aa, …), into <out>/<kind>/base/ and <out>/<kind>/head/; and `--solo-runs`
runs of each server alone, one at a time (<out>/solo/ the build, <out>/solo-<kind>/ each
injected server): the price of duet (absolute P50 alone against in a duet), and how much of
each kind's effect alone survives the design ("this design sees 0.4 of it": `survival`).

Analyse: `--comparisons` times per kind, draw `--k` rounds of that kind and compare their
base and head sides with the design's test, judged as one of ab's looks (A/A: every
regression is a false alarm, and "no change" is the answer we want). The A/A draws also say
whether the intervals are as wide as their evidence: per series × metric, how often the
verdict's interval held 1 (its coverage, against the confidence it states) and how the A/A
p-values spread (a sound test's are uniform: about 1 in 100 below 0.01). A series is guarded
only where both hold. Writes
<out>/calibration.json and calibration.md: per kind, how many comparisons ended in each
status and per gated metric how many flagged; per series × metric the median minimum
detectable effect and whether this runner guards it (calibration.py: the record the gate
reads through --calibration / $HFTBENCH_CALIBRATION).

The comparisons are drawn from one pool of rounds, so they overlap and are not independent:
a rate is an estimate from the real rounds behind it, which the report says next to it.
"""

from __future__ import annotations

import json
import shlex
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from .. import config as config_mod
from .. import metrics, paths
from ..errors import UsageError
from ..fsio import write_atomic
from ..judge import calibration, designs
from ..judge.compare import Comparison, compare_sides
from ..judge.gates import Gates, load_gates
from ..judge.hidden import Pool, price_of_duet, survival
from ..judge.rounds import AB_ROUNDS, add_looks_arg, order
from ..judge.session import Session
from ..judge.sides import load_runs, side_from_runs
from ..measure import capacity, duet
from ..measure import placement as placement_mod
from ..measure.run import run_plan
from ..publish.calibrate_text import render
from ..results import Run
from ..verdicts import FASTER, IMPROVEMENT, NO_CHANGE, REGRESSION
from .base import Command
from .flags import plan_of

KINDS = ("aa", "slow", "stall", "after", "contention")
SHOWN = tuple(m.name for m in (metrics.P50, metrics.P99, metrics.P999))
EFFECTS = (*SHOWN, metrics.CPU_PER_ORDER.name)  # the effects calibrate reports


def kind_flags(args) -> dict[str, list[str]]:
    base = shlex.split(args.server_flags)
    return {
        "aa": base,
        "slow": [*base, "--inject-delay-us", str(args.inject_delay_us)],
        "stall": [*base, "--inject-stall-us", str(args.inject_stall_us),
                  "--inject-stall-every", str(args.inject_stall_every)],
        "after": [*base, "--inject-after-reply-us", str(args.inject_after_reply_us)],
        "contention": [*base, "--inject-contention-us", str(args.inject_contention_us)],
    }  # fmt: skip


def measure(
    out: Path, counts: dict[str, int], args, cfg: config_mod.Config | None = None
) -> tuple[dict[str, Pool], dict[str, list[Run]]]:
    """Measure the rounds of every kind (one session each, kept in memory) and the solo runs
    of each kind's server, interleaved with them."""
    from .ab import choose_design

    root = paths.repo_root()
    cfg = cfg or config_mod.load(paths.config_file(root))
    bins = paths.bin_dir(root)
    plan = plan_of(args, cfg, bins)
    design = choose_design(plan, args.design)
    flags = kind_flags(args)
    where = placement_mod.resolve(None, None)
    where = where.colocated() if plan.colocate else where
    rng = np.random.default_rng()
    sessions = {kind: Session(AB_ROUNDS) for kind in KINDS}
    solo: dict[str, list[Run]] = {kind: [] for kind in KINDS}
    if capacity.needs_rate(plan.scenarios):
        rate = capacity.measure(plan.scenarios, bins, flags["aa"], where, out / "capacity-probe.log")
        plan.scenarios = capacity.resolve(plan.scenarios, rate)
        print(f"calibrate: capacity {rate:,.0f} orders/s on this runner", file=sys.stderr, flush=True)
    for i in range(max(counts.values())):
        for kind in KINDS:
            if i >= counts[kind]:
                continue
            if design == designs.DUET:
                sides = {side: duet.DuetSide(side, bins, flags["aa" if side == "base" else kind], root, None)
                         for side in duet.SIDES}  # fmt: skip
                runs = duet.run_round(sides, out / kind, i, plan.scenarios, suite=plan.suite,
                                      targets=cfg.targets, placement=where, rng=rng)  # fmt: skip
                for side, run in runs.items():
                    sessions[kind].keep(side, run)
            else:
                for side in order(i):
                    run_dir = paths.fresh_dir(out / kind / side, f"run_{paths.utc_stamp()}_{side}{i + 1:02d}")
                    run = run_plan(plan, bins, run_dir, targets=cfg.targets, quiet=True, root=root,
                                   server_flags=flags["aa" if side == "base" else kind])  # fmt: skip
                    sessions[kind].keep(side, run)
            sessions[kind].done += 1
            print(f"calibrate: {kind} round {i + 1}", file=sys.stderr, flush=True)
        for kind in KINDS if i < counts["solo"] else ():
            if kind != "aa" and not counts[kind]:
                continue
            run_dir = paths.fresh_dir(out / solo_dir(kind), f"run_{paths.utc_stamp()}_solo{i + 1:02d}")
            solo[kind].append(run_plan(plan, bins, run_dir, targets=cfg.targets, server_flags=flags[kind],
                                       quiet=True, root=root))  # fmt: skip
    return {kind: session.pairs() for kind, session in sessions.items()}, solo


def solo_dir(kind: str) -> str:
    return "solo" if kind == "aa" else f"solo-{kind}"


def load_solo(source: Path) -> dict[str, list[Run]]:
    return {kind: load_runs(source / solo_dir(kind)) if (source / solo_dir(kind)).is_dir() else []
            for kind in KINDS}  # fmt: skip


def load_pools(source: Path) -> dict[str, Pool]:
    """Each kind's rounds, base and head run of the same round together (designs.round_key)."""
    pools: dict[str, Pool] = {}
    for kind in KINDS:
        sides = [source / kind / side for side in ("base", "head")]
        if not all(s.is_dir() for s in sides):
            pools[kind] = []
            continue
        base, head = (load_runs(s) for s in sides)
        by_round = {designs.round_key(r.run_id): r for r in head}
        pools[kind] = [(b, by_round[k]) for b in base if (k := designs.round_key(b.run_id)) in by_round]
    return pools


def design_of(pools: dict[str, Pool]) -> str:
    """A duet's runs name their server's slot (duet.py); anything else ran as paired rounds."""
    runs = [b for b, _ in pools.get("aa", [])]
    return designs.DUET if runs and "duet_slot" in runs[0].server else designs.PAIRED_ROUNDS


def _tally(gates: Gates) -> dict[str, Any]:
    gated = [m.name for m in gates.metrics if m.gated]
    return {
        "comparisons": 0,
        "flagged": 0,
        "statuses": {},
        "regression": {m: 0 for m in gated},  # comparisons where this metric regressed somewhere
        "no_change": {m: 0 for m in gated},  # ... where every gated series said no change for it
        "mde": {},  # "series metric" -> list of minimum detectable effects
        "tested": {m: 0 for m in gated},  # comparisons where the metric was gated somewhere
        "series_regression": {},  # "series metric" -> comparisons where it regressed
        "series_tested": {},  # "series metric" -> comparisons where it was tested
        "series_no_change": {},  # "series metric" -> comparisons where it said "no change"
        "series_covered": {},  # "series metric" -> comparisons whose interval held 1 (A/A: coverage)
        "series_p": {},  # "series metric" -> the unadjusted p-values (A/A: should be uniform)
        "series_passed": {},  # "series metric" -> comparisons read "no change" or "improvement"
    }


def _count(t: dict[str, Any], c: Comparison) -> None:
    t["comparisons"] += 1
    t["flagged"] += c.exit_code
    t["statuses"][c.status] = t["statuses"].get(c.status, 0) + 1
    gated = [r for r in c.results if r.gated]
    for name in t["regression"]:
        rows = [r for r in gated if r.metric == name]
        t["tested"][name] += bool(rows)
        t["regression"][name] += any(r.verdict == REGRESSION for r in rows)
        t["no_change"][name] += bool(rows) and all(r.verdict == NO_CHANGE for r in rows)
    for r in gated:
        key = f"{r.series} {r.metric}"
        t["series_tested"][key] = t["series_tested"].get(key, 0) + 1
        t["series_regression"][key] = t["series_regression"].get(key, 0) + (r.verdict == REGRESSION)
        t["series_no_change"][key] = t["series_no_change"].get(key, 0) + (r.verdict == NO_CHANGE)
        passed = r.verdict in (NO_CHANGE, IMPROVEMENT, FASTER)
        t["series_passed"][key] = t["series_passed"].get(key, 0) + passed
        if r.ci is not None and all(np.isfinite(r.ci)):
            t["series_covered"][key] = t["series_covered"].get(key, 0) + (r.ci[0] <= 1.0 <= r.ci[1])
        if r.p_value is not None:
            t["series_p"].setdefault(key, []).append(float(r.p_value))
        if r.mde is not None and np.isfinite(r.mde):
            t["mde"].setdefault(key, []).append(r.mde)
    for r in c.results:  # gated by gates.yaml, left out here: the record says why (calibration.py)
        if not r.gated and r.why_not_gated and r.metric in t["regression"]:
            t.setdefault("series_why_not", {})[f"{r.series} {r.metric}"] = r.why_not_gated


def _finish(t: dict[str, Any]) -> dict[str, Any]:
    t["mde"] = {k: round(float(np.median(v)), 4) for k, v in sorted(t["mde"].items())}
    t["series_p"] = {k: calibration.p_spread(v) for k, v in sorted(t["series_p"].items())}
    return t


def analyse(
    pools: dict[str, Pool],
    solo: dict[str, list[Run]],
    gates: Gates,
    comparisons: int,
    k: int,
    seed: int,
    design: str,
) -> dict[str, Any]:
    """Tallies over random draws of k rounds of each kind, compared with the design's test."""
    if len(pools["aa"]) < k:
        raise UsageError(
            f"A/A needs >= k = {k} rounds, have {len(pools['aa'])}; pass --runs or a smaller --k"
        )
    rng = np.random.default_rng(seed)
    tallies = {kind: _tally(gates) for kind in KINDS if kind == "aa" or len(pools.get(kind, [])) >= k}

    def compare(rounds: Pool, label: str) -> Comparison:
        base = side_from_runs("base", [b for b, _ in rounds])
        return compare_sides(base, side_from_runs(label, [h for _, h in rounds]), gates, design=design)

    for _ in range(comparisons):
        for kind in tallies:
            pool = pools[kind]
            _count(
                tallies[kind], compare([pool[i] for i in rng.choice(len(pool), size=k, replace=False)], kind)
            )
    effects = {}
    for kind, pool in pools.items():
        if kind != "aa" and pool:
            effects[kind] = {f"{r.series} {r.metric}": round(r.ratio, 3) for r in compare(pool, kind).results
                             if r.ratio is not None and r.metric in EFFECTS}  # fmt: skip
    done = {kind: _finish(t) for kind, t in tallies.items()}
    return {
        "tallies": done,
        "effects": effects,
        "survival": survival(effects, solo, gates),
        "confidence": gates.confidence,
        "guards": calibration.guard_rows(done["aa"], gates),
    }


def _flag_value(runs: list[Run], name: str) -> int | None:
    """A numeric hft-server flag the runs' server was started with (from results.json)."""
    flags = [str(f) for f in (runs[0].server.get("flags") or [])] if runs else []
    for i, flag in enumerate(flags):
        if flag.startswith(f"{name}="):
            return int(flag.split("=", 1)[1])
        if flag == name and i + 1 < len(flags):
            return int(flags[i + 1])
    return None


class CalibrateCommand(Command):
    name = "calibrate"
    help = "measure the gate's false-alarm and detection rates"
    shared = ("suite", "scenarios", "clients", "orders", "design", "server_flags", "gates", "out")

    @classmethod
    def add_arguments(cls, p) -> None:
        p.add_argument("--runs", type=int, default=40, help="A/A rounds (default 40)")
        p.add_argument(
            "--slow-runs", type=int, default=20, help="rounds against the injected delay (default 20)"
        )
        p.add_argument(
            "--stall-runs", type=int, default=20, help="rounds against the tail stall (default 20)"
        )
        p.add_argument(
            "--solo-runs",
            type=int,
            default=8,
            help="runs of each kind's server alone: the price of duet, and what of each kind survives it (8)",
        )
        p.add_argument(
            "--inject-delay-us", type=int, default=4, help="hft-server --inject-delay-us (default 4)"
        )
        p.add_argument(
            "--inject-stall-us",
            type=int,
            default=50,
            help="hft-server --inject-stall-us (default 50: on the VM 40 moved P99 anywhere from x1.07 "
            "to x1.30, as the host moved the base's P99)",
        )
        p.add_argument(
            "--inject-stall-every", type=int, default=50, help="hft-server --inject-stall-every (default 50)"
        )
        p.add_argument(
            "--after-runs", type=int, default=0, help="rounds against work after the reply (default 0)"
        )
        p.add_argument(
            "--contention-runs", type=int, default=0,
            help="rounds against a cost that appears only with several connections open (default 0)",
        )  # fmt: skip
        p.add_argument(
            "--inject-after-reply-us", type=int, default=18,
            help="hft-server --inject-after-reply-us (default 18: about one order's own CPU on the VM)",
        )  # fmt: skip
        p.add_argument(
            "--inject-contention-us",
            type=int,
            default=10,
            help="hft-server --inject-contention-us (default 10)",
        )
        p.add_argument(
            "--comparisons", type=int, default=200, help="random comparisons of each kind (default 200)"
        )
        p.add_argument(
            "--k", type=int, default=AB_ROUNDS.repeats,
            help=f"rounds in a comparison (default {AB_ROUNDS.repeats}: ab's first look)",
        )  # fmt: skip
        add_looks_arg(p)
        p.add_argument("--bootstrap", type=int, default=500, help="bootstrap replicates (default 500)")
        p.add_argument("--permutations", type=int, default=1000, help="permutation splits (default 1000)")
        p.add_argument(
            "--from", dest="source", type=Path, help="analyse rounds measured before (<dir>/aa, slow, stall)"
        )

    def run(self) -> int:
        return main(self.args, None if self.args.source else self.config)


def main(args, cfg: config_mod.Config | None = None) -> int:
    # Every series of the suite and only the gated metrics: calibrate decides what is guarded.
    gates = load_gates(args.gates)
    gates = replace(gates, bootstrap=args.bootstrap, permutations=args.permutations, series=None,
                    metrics=[m for m in gates.metrics if m.gated]).for_looks(args.looks)  # fmt: skip
    stamp = paths.utc_stamp()
    out = (args.out or args.source or paths.results_dir() / f"calibrate_{stamp}").resolve()
    if args.source is None:
        if out.exists() and any(out.iterdir()):
            raise UsageError(
                f"--out {out} exists and is not empty; pass a new folder, or --from it to re-analyse"
            )
        counts = {"aa": args.runs, "slow": args.slow_runs, "stall": args.stall_runs, "after": args.after_runs,
                  "contention": args.contention_runs, "solo": args.solo_runs}  # fmt: skip
        pools, solo = measure(out, counts, args, cfg)
    else:
        if not (args.source / "aa").is_dir():
            raise UsageError(f"--from {args.source} holds no aa/: pass the --out of an earlier calibrate")
        pools = load_pools(args.source)
        solo = load_solo(args.source)
    heads = {kind: [h for _, h in pool] for kind, pool in pools.items()}
    design = design_of(pools)
    doc = {
        "schema_version": 3,
        "date": stamp,
        "suite": args.suite,
        "design": design,
        "inject_delay_us": _flag_value(heads["slow"], "--inject-delay-us"),
        "inject_stall_us": _flag_value(heads["stall"], "--inject-stall-us"),
        "inject_stall_every": _flag_value(heads["stall"], "--inject-stall-every"),
        "inject_after_reply_us": _flag_value(heads["after"], "--inject-after-reply-us"),
        "inject_contention_us": _flag_value(heads["contention"], "--inject-contention-us"),
        "runs": {kind: len(pool) for kind, pool in pools.items()},
        "k": args.k,
        "looks": args.looks,
        "gates": paths.shown(gates.source),
        "max_false_alarms": calibration.MAX_FALSE_ALARMS,
        **analyse(pools, solo, gates, args.comparisons, args.k, gates.seed, design),
        "price_of_duet": price_of_duet(pools, solo["aa"]) if design == designs.DUET else {},
    }
    write_atomic(out / "calibration.json", json.dumps(doc, indent=2) + "\n")
    write_atomic(out / "calibration.md", render(doc))
    print(render(doc))
    return 0
