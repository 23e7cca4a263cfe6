"""`hftbench calibrate`: how often the gate cries wolf, how often it says "no change", how
often it catches a real slowdown (uniform or in the tail only), and so which series × metrics
this runner can judge.

Measure (unless --from): rounds as `ab` measures them (`--design`; designs.py): duet where
the suite allows it (both servers at once, one client interleaving orders), else paired
rounds. `--runs` A/A rounds (this checkout's build against itself), `--slow-runs` rounds
against a server with `--inject-delay-us D` (every order slower), `--stall-runs` against
`--inject-stall-us S --inject-stall-every N` (one order in N: the tail only), `--after-runs`
against `--inject-after-reply-us A` (CPU work after each reply: off the order's own path, so
in a duet base pays for it too), `--contention-runs` against `--inject-contention-us C` (a
cost only while several connections are open), `--leak-runs` against `--inject-leak-bytes
N` (N bytes kept for every order and never freed: memory per order, a difference in bytes,
not a ratio) and `--width-runs` against `--inject-delay-us W --inject-delay-min-connections
C` (a cost paid only while C connections are open: suite pr's width-64c alone), interleaved
(aa, slow, stall, after, contention, leak, width, aa, …), into
<out>/<kind>/base/ and <out>/<kind>/head/; and `--solo-runs`
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
reads through --calibration / $HFTBENCH_CALIBRATION). The guards are decided in the whole
suite's family; the same draws are then judged again with the record's guards, as a verdict
with this record judges them (Holm over the guarded rows only): `as_judged`, the false alarms,
coverage and MDEs a verdict states.

The comparisons are drawn from one pool of rounds, so they overlap and are not independent:
a rate is an estimate from the real rounds behind it, which the report says next to it.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from dataclasses import dataclass, replace
from pathlib import Path

from .. import config as config_mod
from .. import paths
from ..design_names import DUET
from ..errors import UsageError
from ..fsio import write_atomic
from ..judge import calibration
from ..judge.calibration_draws import KINDS, analyse, design_of, flag_value, load_pools, load_solo, solo_dir
from ..judge.gates import load_gates
from ..judge.hidden import Pool, price_of_duet
from ..judge.rounds import AB_ROUNDS
from ..judge.session import Session
from ..measure.rig import Group, Rig, RoundError, key
from ..measure.served import Served
from ..publish.calibrate_text import render
from ..results import Run
from .base import Command
from .flags import Selection, choose_design


@dataclass(frozen=True)
class Measuring:
    """What calibrate measures, read once from its flags (Measuring.of)."""

    selection: Selection  # --suite, --scenarios, --clients, --orders
    design: str  # --design as given: auto, duet or paired-rounds
    counts: dict[str, int]  # kind (and "solo") -> rounds: --runs, --slow-runs, …, --solo-runs
    flags: dict[str, list[str]]  # kind -> its head's hft-server flags: --server-flags, --inject-*

    @classmethod
    def of(cls, args: argparse.Namespace) -> Measuring:
        base = shlex.split(args.server_flags)
        flags = {
            "aa": base,
            "slow": [*base, "--inject-delay-us", f"{args.inject_delay_us:g}"],
            "stall": [
                *base,
                "--inject-stall-us",
                str(args.inject_stall_us),
                "--inject-stall-every",
                str(args.inject_stall_every),
            ],
            "after": [*base, "--inject-after-reply-us", str(args.inject_after_reply_us)],
            "contention": [*base, "--inject-contention-us", str(args.inject_contention_us)],
            "leak": [*base, "--inject-leak-bytes", str(args.inject_leak_bytes)],
            "width": [
                *base,
                "--inject-delay-us",
                f"{args.inject_width_us:g}",
                "--inject-delay-min-connections",
                str(args.inject_width_connections),
            ],
        }
        counts = {
            "aa": args.runs,
            "slow": args.slow_runs,
            "stall": args.stall_runs,
            "after": args.after_runs,
            "contention": args.contention_runs,
            "leak": args.leak_runs,
            "width": args.width_runs,
            "solo": args.solo_runs,
        }
        return cls(Selection.of(args), args.design, counts, flags)


def measure(
    out: Path, m: Measuring, cfg: config_mod.Config, root: Path
) -> tuple[dict[str, Pool], dict[str, list[Run]]]:
    """Measure the rounds of every kind (one session each, kept in memory) and the solo runs
    of each kind's server, interleaved with them, all by ab's rig (rig.py): base is this
    checkout's build, head the same build with the kind's knob."""
    bins = paths.bin_dir(root)
    plan = m.selection.plan(cfg, bins)
    rig = Rig.of(plan, choose_design(plan, m.design), cfg.targets)
    counts = m.counts
    side = {kind: Served(bins, tuple(flags), repo=root) for kind, flags in m.flags.items()}
    # Each kind a group of its own (base: the build, head: the kind's server), into <out>/<kind>/,
    # in its first counts[kind] rounds; every round a set number, no look.
    groups = {kind: Group({"base": side["aa"], "head": side[kind]}, rounds=counts[kind]) for kind in KINDS}
    n = max(counts.values())
    session = Session(replace(AB_ROUNDS, repeats=n, max_repeats=n))
    solo: dict[str, list[Run]] = {kind: [] for kind in KINDS}

    def told(kind: str, i: int, _runs: dict[str, Run]) -> None:
        print(f"calibrate: {kind} round {i + 1}", file=sys.stderr, flush=True)

    def alone(i: int) -> None:
        """Each kind's server alone after the round (the build's first), back to back."""
        for kind in KINDS if i < counts["solo"] else ():
            if kind == "aa" or counts[kind]:
                solo[kind].append(rig.solo(side[kind], out / solo_dir(kind), kind, i + 1))

    try:
        rate = rig.load(side["aa"], out / "capacity-probe.log")
        if rate is not None:
            print(f"calibrate: capacity {rate:,.0f} orders/s on this runner", file=sys.stderr, flush=True)
        rig.measure(session, groups, out, lambda: True, told=told, after=alone)
    except RoundError as exc:
        raise UsageError(f"calibrate: {exc}; the rounds so far are in {out}") from exc
    return {kind: session.pairs(key(kind, "base"), key(kind, "head")) for kind in KINDS}, solo


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
            "--inject-delay-us",
            type=float,
            default=4,
            help="hft-server --inject-delay-us, µs to the nanosecond (default 4; 0.5: 500 ns)",
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
            "--after-runs", type=int, default=16, help="rounds against work after the reply (default 16)"
        )
        p.add_argument(
            "--contention-runs",
            type=int,
            default=16,
            help="rounds against a cost that appears only with several connections open (default 16)",
        )
        p.add_argument(
            "--inject-after-reply-us",
            type=int,
            default=18,
            help="hft-server --inject-after-reply-us (default 18: about one order's own CPU on the VM)",
        )
        p.add_argument(
            "--inject-contention-us",
            type=int,
            default=10,
            help="hft-server --inject-contention-us (default 10)",
        )
        p.add_argument(
            "--leak-runs",
            type=int,
            default=16,
            help="rounds against a server that keeps memory for every order (default 16)",
        )
        p.add_argument(
            "--inject-leak-bytes",
            type=int,
            default=64,
            help="hft-server --inject-leak-bytes (default 64)",
        )
        p.add_argument(
            "--width-runs",
            type=int,
            default=16,
            help="rounds against a cost that appears only past --inject-width-connections (default 16)",
        )
        p.add_argument(
            "--inject-width-us",
            type=float,
            default=2,
            help="hft-server --inject-delay-us of the width kind, paid only while "
            "--inject-width-connections are open (default 2)",
        )
        p.add_argument(
            "--inject-width-connections",
            type=int,
            default=16,
            help="hft-server --inject-delay-min-connections of the width kind (default 16: only suite "
            "pr's width-64c pays it)",
        )
        p.add_argument(
            "--comparisons", type=int, default=200, help="random comparisons of each kind (default 200)"
        )
        p.add_argument(
            "--k",
            type=int,
            default=AB_ROUNDS.repeats,
            help=f"rounds in a comparison (default {AB_ROUNDS.repeats}: ab's first look)",
        )
        d = AB_ROUNDS  # the looks a verdict is one of: ab's, with its defaults
        p.add_argument(
            "--looks",
            type=int,
            default=d.looks,
            help=f"verdicts taken at this many looks, as ab does ({d.repeats} to {d.max_repeats} rounds "
            f"by {d.step}: {d.looks}; the default)",
        )
        p.add_argument("--bootstrap", type=int, default=500, help="bootstrap replicates (default 500)")
        p.add_argument("--permutations", type=int, default=1000, help="permutation splits (default 1000)")
        p.add_argument(
            "--from", dest="source", type=Path, help="analyse rounds measured before (<dir>/aa, slow, stall)"
        )

    def run(self) -> int:
        args = self.args
        # Every series of the suite and only the gated metrics: calibrate decides what is guarded.
        gates = load_gates(self.gates_file(args.gates))
        gates = replace(
            gates,
            bootstrap=args.bootstrap,
            permutations=args.permutations,
            series=None,
            metrics=[m for m in gates.metrics if m.gated],
        ).for_looks(args.looks)
        stamp = paths.utc_stamp()
        out = (args.out or args.source or paths.results_dir(self.root) / f"calibrate_{stamp}").resolve()
        if args.source is None:
            if out.exists() and any(out.iterdir()):
                raise UsageError(
                    f"--out {out} exists and is not empty; pass a new folder, or --from it to re-analyse"
                )
            pools, solo = measure(out, Measuring.of(args), self.config, self.root)
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
            "inject_delay_us": flag_value(heads["slow"], "--inject-delay-us"),
            "inject_stall_us": flag_value(heads["stall"], "--inject-stall-us"),
            "inject_stall_every": flag_value(heads["stall"], "--inject-stall-every"),
            "inject_after_reply_us": flag_value(heads["after"], "--inject-after-reply-us"),
            "inject_contention_us": flag_value(heads["contention"], "--inject-contention-us"),
            "inject_leak_bytes": flag_value(heads["leak"], "--inject-leak-bytes"),
            "inject_width_us": flag_value(heads["width"], "--inject-delay-us"),
            "inject_width_connections": flag_value(heads["width"], "--inject-delay-min-connections"),
            "runs": {kind: len(pool) for kind, pool in pools.items()},
            "k": args.k,
            "looks": args.looks,
            "gates": paths.shown(gates.source),
            "max_false_alarms": calibration.MAX_FALSE_ALARMS,
            **analyse(pools, solo, gates, args.comparisons, args.k, gates.seed, design),
            "price_of_duet": price_of_duet(pools, solo["aa"]) if design == DUET else {},
        }
        write_atomic(out / "calibration.json", json.dumps(doc, indent=2) + "\n")
        write_atomic(out / "calibration.md", render(doc))
        print(render(doc))
        return 0
