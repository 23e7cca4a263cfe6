"""`hftbench calibrate`: how often the gate cries wolf, how often it says "no change", and how
often it catches a real slowdown, uniform or in the tail only.

Measure (unless --from): `--runs` runs of this checkout's build, `--slow-runs` runs with
`hft-server --inject-delay-us D` (every order slower) and `--stall-runs` runs with
`--inject-stall-us S --inject-stall-every N` (one order in N slower: the tail only),
interleaved (normal, slow, stall, normal, …), into <out>/aa/, <out>/slow/, <out>/stall/.

Analyse: `--comparisons` times, draw 2k distinct normal runs, split them k / k and compare
(A/A: every regression is a false alarm, and "no change" is the answer we want); as often,
k normal runs against k slow runs and against k stalled runs (detection). Writes
<out>/calibration.json and calibration.md: per kind, how many comparisons ended in each
status, per gated metric how many flagged, and each series' median minimum detectable effect.

The comparisons are drawn from one pool of runs, so they overlap and are not independent:
a rate is an estimate from the real runs behind it, which the report says next to it.
"""

from __future__ import annotations

import json
import shlex
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from . import config as config_mod
from . import metrics, paths
from .compare import Comparison, compare_sides
from .compare_gates import Gates, load_gates
from .compare_sides import load_runs, side_from_runs
from .errors import UsageError
from .fsio import write_atomic
from .plan import make_plan
from .results import Run
from .rounds import add_looks_arg
from .run import run_plan
from .verdicts import NO_CHANGE, REGRESSION

KINDS = ("aa", "slow", "stall")
SHOWN = tuple(m.name for m in (metrics.P50, metrics.P99, metrics.P999))  # the effects calibrate reports
TITLE = {"aa": "A/A (same build)", "slow": "uniform slowdown", "stall": "tail-only stall"}


def kind_flags(args) -> dict[str, list[str]]:
    base = shlex.split(args.server_flags)
    return {
        "aa": base,
        "slow": [*base, "--inject-delay-us", str(args.inject_delay_us)],
        "stall": [*base, "--inject-stall-us", str(args.inject_stall_us),
                  "--inject-stall-every", str(args.inject_stall_every)],
    }  # fmt: skip


def measure(out: Path, counts: dict[str, int], args) -> None:
    root = paths.repo_root()
    cfg = config_mod.load(paths.config_file(root))
    bins = paths.bin_dir(root)
    scenarios = args.scenarios.split(",") if args.scenarios else None
    clients = args.clients.split(",") if args.clients else None
    plan = make_plan(cfg, bins, None if scenarios else args.suite, scenarios=scenarios, clients=clients,
                     overrides={"orders": args.orders}, floor=False)  # fmt: skip
    plan.suite = args.suite
    plan.colocate = cfg.suite(args.suite).colocate
    flags = kind_flags(args)
    for i in range(max(counts.values())):
        for kind in KINDS:
            if i >= counts[kind]:
                continue
            run_dir = out / kind / f"run_{i + 1:03d}"
            run_dir.mkdir(parents=True)
            run = run_plan(
                plan, bins, run_dir, targets=cfg.targets, server_flags=flags[kind], quiet=True, root=root
            )
            print(f"calibrate: {kind} run {i + 1}: {len(run.cells) - len(run.failed)}/{len(run.cells)} ok",
                  file=sys.stderr, flush=True)  # fmt: skip


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
        if r.mde is not None and np.isfinite(r.mde):
            t["mde"].setdefault(f"{r.series} {r.metric}", []).append(r.mde)


def _finish(t: dict[str, Any]) -> dict[str, Any]:
    t["mde"] = {k: round(float(np.median(v)), 4) for k, v in sorted(t["mde"].items())}
    return t


def analyse(pools: dict[str, list[Run]], gates: Gates, comparisons: int, k: int, seed: int) -> dict[str, Any]:
    """Tallies over random k-vs-k splits of the measured runs, per kind."""
    aa = pools["aa"]
    if len(aa) < 2 * k:
        raise UsageError(
            f"A/A needs >= 2k = {2 * k} normal runs, have {len(aa)}; pass --runs or a smaller --k"
        )
    rng = np.random.default_rng(seed)
    tallies = {kind: _tally(gates) for kind in KINDS if kind == "aa" or len(pools.get(kind, [])) >= k}
    for _ in range(comparisons):
        pick = rng.choice(len(aa), size=2 * k, replace=False)
        base = side_from_runs("aa-base", [aa[i] for i in pick[:k]])
        head = side_from_runs("aa-head", [aa[i] for i in pick[k:]])
        _count(tallies["aa"], compare_sides(base, head, gates))
        for kind in tallies:
            if kind == "aa":
                continue
            runs = pools[kind]
            base = side_from_runs("base", [aa[i] for i in rng.choice(len(aa), size=k, replace=False)])
            head = side_from_runs(kind, [runs[i] for i in rng.choice(len(runs), size=k, replace=False)])
            _count(tallies[kind], compare_sides(base, head, gates))
    effects = {}
    for kind, runs in pools.items():
        if kind == "aa" or not runs:
            continue
        c = compare_sides(side_from_runs("aa", aa), side_from_runs(kind, runs), gates)
        effects[kind] = {f"{r.series} {r.metric}": round(r.ratio, 3) for r in c.results
                         if r.ratio is not None and r.metric in SHOWN}  # fmt: skip
    return {"tallies": {kind: _finish(t) for kind, t in tallies.items()}, "effects": effects}


def _flag_value(runs: list[Run], name: str) -> int | None:
    """A numeric hft-server flag the runs' server was started with (from results.json)."""
    flags = [str(f) for f in (runs[0].server.get("flags") or [])] if runs else []
    for i, flag in enumerate(flags):
        if flag.startswith(f"{name}="):
            return int(flag.split("=", 1)[1])
        if flag == name and i + 1 < len(flags):
            return int(flags[i + 1])
    return None


def _pct(n: int, d: int) -> str:
    return f"{100 * n / d:.1f}% ({n}/{d})" if d else "–"


def render(doc: dict[str, Any]) -> str:
    t = doc["tallies"]
    metrics = [m for m in t["aa"]["regression"] if t["aa"]["tested"].get(m)]
    runs = doc["runs"]
    lines = [
        "# Gate calibration",
        "",
        f"Suite `{doc['suite']}` ({doc['date']}): {runs['aa']} normal runs, {runs.get('slow', 0)} with "
        f"`--inject-delay-us {doc.get('inject_delay_us')}`, {runs.get('stall', 0)} with `--inject-stall-us "
        f"{doc.get('inject_stall_us')} --inject-stall-every {doc.get('inject_stall_every')}`; "
        f"{t['aa']['comparisons']} random {doc['k']}-vs-{doc['k']} comparisons of each kind, judged "
        f"as one of {doc.get('looks', 1)} looks (alpha / looks); gates `{doc['gates']}`.",
        "",
        "| comparison | flagged (suite) | no change (suite) | "
        + " | ".join(f"{m} regressed" for m in metrics)
        + " | "
        + " | ".join(f"{m} no change" for m in metrics)
        + " |",
        "|---|---|---|" + "---|" * (2 * len(metrics)),
    ]
    for kind, tally in t.items():
        n = tally["comparisons"]
        cells = [_pct(tally["flagged"], n), _pct(tally["statuses"].get(NO_CHANGE, 0), n)]
        cells += [_pct(tally["regression"][m], n) for m in metrics]
        cells += [_pct(tally["no_change"][m], n) for m in metrics]
        lines.append(f"| {TITLE[kind]} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "Comparisons overlap (drawn from one pool of runs): each rate is an estimate from the real "
        "runs above, not from independent experiments.",
        "",
        "Minimum detectable effect (median over the A/A comparisons; 80% power at the gate's level):",
        "",
    ]
    lines += [f"- {name}: {100 * (v - 1):+.1f}%" for name, v in t["aa"]["mde"].items()]
    for kind, eff in doc["effects"].items():
        lines += ["", f"Effect of the {TITLE[kind]} (all its runs / all normal runs, merged):", ""]
        lines += [f"- {name}: ×{ratio}" for name, ratio in eff.items()]
    return "\n".join(lines) + "\n"


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("calibrate", help="measure the gate's false-alarm and detection rates",
                              description=__doc__)  # fmt: skip
    p.add_argument("--suite", default="pr", help="suite to measure (default pr)")
    p.add_argument("--scenarios", help="comma-separated scenarios instead of the suite's")
    p.add_argument("--clients", help="comma-separated clients instead of the suite's")
    p.add_argument("--orders", type=int, help="override measured orders per cell")
    p.add_argument("--runs", type=int, default=48, help="normal runs (default 48)")
    p.add_argument("--slow-runs", type=int, default=16, help="runs with the injected delay (default 16)")
    p.add_argument("--stall-runs", type=int, default=16, help="runs with the tail stall (default 16)")
    p.add_argument("--inject-delay-us", type=int, default=5, help="hft-server --inject-delay-us (default 5)")
    p.add_argument(
        "--inject-stall-us", type=int, default=40, help="hft-server --inject-stall-us (default 40)"
    )
    p.add_argument(
        "--inject-stall-every", type=int, default=50, help="hft-server --inject-stall-every (default 50)"
    )
    p.add_argument("--server-flags", default="", help="hft-server flags for every run")
    p.add_argument(
        "--comparisons", type=int, default=200, help="random comparisons of each kind (default 200)"
    )
    p.add_argument("--k", type=int, default=32, help="runs per side in a comparison (default 32)")
    add_looks_arg(p)
    p.add_argument("--bootstrap", type=int, default=500, help="bootstrap replicates (default 500)")
    p.add_argument("--permutations", type=int, default=1000, help="permutation splits (default 1000)")
    p.add_argument(
        "--from", dest="source", type=Path, help="analyse runs measured before (<dir>/aa, slow, stall)"
    )
    p.add_argument("--out", type=Path, help="output folder (default results/calibrate_<UTC>)")
    p.set_defaults(func=main)


def main(args) -> int:
    gates = replace(load_gates(args.gates), bootstrap=args.bootstrap, permutations=args.permutations)
    gates = gates.for_looks(args.looks)
    stamp = paths.utc_stamp()
    out = (args.out or args.source or paths.results_dir() / f"calibrate_{stamp}").resolve()
    if args.source is None:
        if out.exists() and any(out.iterdir()):
            raise UsageError(
                f"--out {out} exists and is not empty; pass a new folder, or --from it to re-analyse"
            )
        measure(out, {"aa": args.runs, "slow": args.slow_runs, "stall": args.stall_runs}, args)
    source = args.source or out
    pools = {kind: load_runs(source / kind) if (source / kind).is_dir() else [] for kind in KINDS}
    doc = {
        "schema_version": 2,
        "date": stamp,
        "suite": args.suite,
        "inject_delay_us": _flag_value(pools["slow"], "--inject-delay-us"),
        "inject_stall_us": _flag_value(pools["stall"], "--inject-stall-us"),
        "inject_stall_every": _flag_value(pools["stall"], "--inject-stall-every"),
        "runs": {kind: len(runs) for kind, runs in pools.items()},
        "k": args.k,
        "looks": args.looks,
        "gates": paths.shown(gates.source),
        **analyse(pools, gates, args.comparisons, args.k, gates.seed),
    }
    write_atomic(out / "calibration.json", json.dumps(doc, indent=2) + "\n")
    write_atomic(out / "calibration.md", render(doc))
    print(render(doc))
    return 0
