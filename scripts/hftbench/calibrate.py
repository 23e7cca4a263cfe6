"""`hftbench calibrate`: how often the gate cries wolf, and how often it catches a real slowdown.

Measure (unless --from): `--runs` runs of this checkout's build and `--slow-runs` runs of the
same build with `hft-server --inject-delay-us D`, interleaved (normal, slow, normal, …), into
<out>/aa/ and <out>/slow/.

Analyse: `--comparisons` times, draw 2k distinct normal runs, split them k / k and compare
(A/A: every gated regression is a false alarm); as often, compare k normal runs with k slow
runs (detection). Writes <out>/calibration.json and calibration.md: the false-alarm and
detection rates per gated metric and overall, and the effect the injected delay had.

The A/A comparisons are drawn from one pool, so they overlap and are not independent: the
rate is an estimate from `--runs` real runs, which the report says next to the figure.
"""

from __future__ import annotations

import datetime as dt
import json
import shlex
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from . import config as config_mod
from . import paths, stats
from .compare import compare_sides
from .compare_gates import Gates, load_gates
from .compare_sides import load_runs, side_from_runs
from .errors import UsageError
from .history_store import write_atomic
from .results import Run
from .run import make_plan, run_plan


def measure(out: Path, runs: int, slow_runs: int, delay_us: int, args) -> None:
    root = paths.repo_root()
    cfg = config_mod.load(paths.config_file(root))
    bins = paths.bin_dir(root)
    scenarios = args.scenarios.split(",") if args.scenarios else None
    clients = args.clients.split(",") if args.clients else None
    plan = make_plan(cfg, bins, None if scenarios else args.suite, scenarios, clients,
                     overrides={"orders": args.orders}, floor=False)  # fmt: skip
    plan.suite = args.suite
    base_flags = shlex.split(args.server_flags)
    for i in range(max(runs, slow_runs)):
        for kind, count, flags in (
            ("aa", runs, base_flags),
            ("slow", slow_runs, [*base_flags, "--inject-delay-us", str(delay_us)]),
        ):
            if i >= count:
                continue
            run_dir = out / kind / f"run_{i + 1:03d}"
            run_dir.mkdir(parents=True)
            run = run_plan(plan, bins, run_dir, cfg.targets, flags, quiet=True, root=root)
            print(f"calibrate: {kind} run {i + 1}: {len(run.cells) - len(run.failed)}/{len(run.cells)} ok",
                  file=sys.stderr, flush=True)  # fmt: skip


def _tally(gates: Gates) -> dict[str, Any]:
    return {"comparisons": 0, "flagged": 0, "metrics": {m.name: 0 for m in gates.metrics if m.gated},
            "statuses": {}}  # fmt: skip


def _count(t: dict[str, Any], c) -> None:
    t["comparisons"] += 1
    t["flagged"] += c.exit_code
    t["statuses"][c.status] = t["statuses"].get(c.status, 0) + 1
    for name in {r.metric for r in c.results if r.gated and r.verdict == stats.REGRESSION}:
        t["metrics"][name] += 1


def analyse(
    aa: list[Run], slow: list[Run], gates: Gates, comparisons: int, k: int, seed: int
) -> dict[str, Any]:
    """False-alarm and detection tallies over random k-vs-k splits of the measured runs."""
    if len(aa) < 2 * k:
        raise UsageError(
            f"A/A needs >= 2k = {2 * k} normal runs, have {len(aa)}; pass --runs or a smaller --k"
        )
    rng = np.random.default_rng(seed)
    false_alarms, detection = _tally(gates), _tally(gates)
    for _ in range(comparisons):
        pick = rng.choice(len(aa), size=2 * k, replace=False)
        base = side_from_runs("aa-base", [aa[i] for i in pick[:k]])
        head = side_from_runs("aa-head", [aa[i] for i in pick[k:]])
        _count(false_alarms, compare_sides(base, head, gates))
        if len(slow) >= k:
            base = side_from_runs("base", [aa[i] for i in rng.choice(len(aa), size=k, replace=False)])
            head = side_from_runs("slow", [slow[i] for i in rng.choice(len(slow), size=k, replace=False)])
            _count(detection, compare_sides(base, head, gates))
    effect = {}
    if slow:
        c = compare_sides(side_from_runs("aa", aa), side_from_runs("slow", slow), gates)
        effect = {f"{r.series} {r.metric}": round(r.ratio, 3) for r in c.results
                  if r.ratio is not None and r.metric in ("p50_us", "p99_us", "p999_us")}  # fmt: skip
    return {
        "false_alarms": false_alarms,
        "detection": detection if slow else None,
        "effect_slow_vs_aa": effect,
    }


def _delay_of(runs: list[Run]) -> int | None:
    """The --inject-delay-us the slow runs' server was started with (from results.json)."""
    flags = [str(f) for f in (runs[0].server.get("flags") or [])]
    for i, flag in enumerate(flags):
        if flag.startswith("--inject-delay-us="):
            return int(flag.split("=", 1)[1])
        if flag == "--inject-delay-us" and i + 1 < len(flags):
            return int(flags[i + 1])
    return None


def _pct(n: int, d: int) -> str:
    return f"{100 * n / d:.1f}% ({n}/{d})" if d else "–"


def _row(label: str, t: dict[str, Any]) -> str:
    cells = [_pct(t["flagged"], t["comparisons"])]
    cells += [_pct(v, t["comparisons"]) for v in t["metrics"].values()]
    return f"| {label} | " + " | ".join(cells) + " |"


def render(doc: dict[str, Any]) -> str:
    fa, det = doc["false_alarms"], doc["detection"]
    lines = [
        "# Gate calibration",
        "",
        f"{doc['runs']['aa']} normal runs and {doc['runs']['slow']} runs with `--inject-delay-us "
        f"{doc['inject_delay_us']}` of suite `{doc['suite']}` ({doc['date']}); {fa['comparisons']} random "
        f"{doc['k']}-vs-{doc['k']} comparisons each; gates `{doc['gates']}`.",
        "",
        "| | comparisons flagged | " + " | ".join(fa["metrics"]) + " |",
        "|---|---|" + "---|" * len(fa["metrics"]),
        _row("A/A false alarms", fa),
    ]
    if det:
        lines.append(_row("injected slowdown detected", det))
    lines += [
        "",
        "A/A comparisons overlap (drawn from one pool of runs): the rate is an estimate from "
        f"{doc['runs']['aa']} real runs, not from {fa['comparisons']} independent experiments.",
        "",
    ]
    if doc["effect_slow_vs_aa"]:
        lines += ["Effect of the injected delay (slow / normal, all runs merged):", ""]
        lines += [f"- {name}: ×{ratio}" for name, ratio in doc["effect_slow_vs_aa"].items()]
    return "\n".join(lines) + "\n"


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("calibrate", help="measure the gate's false-alarm and detection rates",
                              description=__doc__)  # fmt: skip
    p.add_argument("--suite", default="pr", help="suite to measure (default pr)")
    p.add_argument("--scenarios", help="comma-separated scenarios instead of the suite's")
    p.add_argument("--clients", help="comma-separated clients instead of the suite's")
    p.add_argument("--orders", type=int, help="override measured orders per cell")
    p.add_argument("--runs", type=int, default=24, help="normal runs (default 24)")
    p.add_argument("--slow-runs", type=int, default=12, help="runs with the injected delay (default 12)")
    p.add_argument("--inject-delay-us", type=int, default=5, help="hft-server --inject-delay-us (default 5)")
    p.add_argument("--server-flags", default="", help="hft-server flags for every run")
    p.add_argument(
        "--comparisons", type=int, default=200, help="random comparisons of each kind (default 200)"
    )
    p.add_argument("--k", type=int, default=8, help="runs per side in a comparison (default 8, as ab)")
    p.add_argument("--gates", type=Path, help="gates file (default bench-config/gates.yaml)")
    p.add_argument(
        "--bootstrap",
        type=int,
        default=500,
        help="bootstrap replicates (default 500: a regression verdict does not use the interval)",
    )
    p.add_argument(
        "--from", dest="source", type=Path, help="analyse runs measured before (<dir>/aa, <dir>/slow)"
    )
    p.add_argument("--out", type=Path, help="output folder (default results/calibrate_<UTC>)")
    p.set_defaults(func=main)


def main(args) -> int:
    gates = load_gates(args.gates)
    gates = replace(gates, bootstrap=args.bootstrap)
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    out = (args.out or args.source or paths.results_dir() / f"calibrate_{stamp}").resolve()
    if args.source is None:
        if out.exists() and any(out.iterdir()):
            raise UsageError(
                f"--out {out} exists and is not empty; pass a new folder, or --from it to re-analyse"
            )
        measure(out, args.runs, args.slow_runs, args.inject_delay_us, args)
    source = args.source or out
    aa = load_runs(source / "aa")
    slow = load_runs(source / "slow") if (source / "slow").is_dir() else []
    doc = {
        "schema_version": 1,
        "date": stamp,
        "suite": args.suite,
        "inject_delay_us": _delay_of(slow) if slow else args.inject_delay_us,
        "runs": {"aa": len(aa), "slow": len(slow)},
        "k": args.k,
        "gates": gates.source,
        **analyse(aa, slow, gates, args.comparisons, args.k, gates.seed),
    }
    write_atomic(out / "calibration.json", json.dumps(doc, indent=2) + "\n")
    write_atomic(out / "calibration.md", render(doc))
    print(render(doc))
    return 0
