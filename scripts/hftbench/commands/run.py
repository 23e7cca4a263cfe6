"""`hftbench run`: start the server, run every scenario × client cell, write the run folder.

Each cell's result is on disk as soon as the client exits and results.json is rewritten
after every cell, so an interrupted or crashed run keeps everything measured so far.
With --repeat N every cell runs N times; the client order rotates between repeats so no
client always runs first (or right after the same neighbour).

With --rounds N the plan runs N times, each round against a fresh server into a run folder
of its own (--out is their parent: run_<UTC>_r01_<hex> …), the load scenarios' rate probed
once before the rounds so every round runs at the same rate: the measuring rig of ab, bisect
and calibrate with one build alone (measure/rig.py, Rig.rounds). The push-to-main job
(hftbench push-leg) records a commit it cannot compare this way; its rounds are one
history point with their spread.
"""

from __future__ import annotations

import signal
import sys
import time
from pathlib import Path

from .. import paths
from ..design_names import PAIRED_ROUNDS
from ..errors import UsageError, raise_interrupt
from ..fsio import write_error
from ..measure import placement as placement_mod
from ..measure.plan import Plan, make_plan
from ..measure.rig import Rig, RoundError
from ..measure.run import new_run_dir, run_plan
from ..measure.served import Served
from ..measure.server import ServerError
from ..results import Run, load_run
from . import flags
from .base import Command
from .flags import split


class RunCommand(Command):
    name = "run"
    help = "run a suite: start bin/hft-server, run each scenario x client, write results/run_<UTC>/"
    description = (
        "Run a suite of scenarios against bin/hft-server with the clients in bin/, write "
        "results/run_<UTC>/ (results.json, per-client JSON + .hlog, server.log) and the report."
    )
    shared = ("orders", "quiet")

    @classmethod
    def add_arguments(cls, p) -> None:
        p.add_argument(
            "--suite", help="suite name from bench-config/scenarios.yaml (quick, pr, standard, stress)"
        )
        p.add_argument("--scenarios", help="comma-separated scenario names (default: the suite's)")
        p.add_argument(
            "--clients", help="comma-separated client names (default: the suite's clients found in bin/)"
        )
        p.add_argument("--duration", type=float, help="override: measure for S seconds instead of --orders")
        p.add_argument("--connections", type=int, help="override connections")
        p.add_argument("--rate", type=float, help="override: open loop at R orders/s")
        p.add_argument("--warmup", type=int, help="override warm-up orders")
        p.add_argument(
            "--interval",
            type=float,
            dest="interval_s",
            help="override the soak scenarios' .hlog interval (s)",
        )
        p.add_argument("--repeat", type=int, help="run each cell N times, client order rotated (default 1)")
        p.add_argument(
            "--rounds",
            type=int,
            metavar="N",
            help="run the plan N times, each against a fresh server, the load rate probed once first: "
            "N run folders inside --out",
        )
        p.add_argument(
            "--out",
            type=Path,
            help="run folder to create (default results/run_<UTC>); with --rounds, the folder to "
            "create the rounds' run folders in (default results/)",
        )
        flags.add(p, cls, ("bin",))
        p.add_argument("--config", type=Path, help="scenarios file (default bench-config/scenarios.yaml)")
        flags.add(p, cls, ("server_flag", "server_cpus"))
        p.add_argument(
            "--client-cpus",
            metavar="LIST",
            help=f"confine each client to these CPUs (e.g. 6-13; default ${placement_mod.ENV_CLIENT})",
        )
        p.add_argument(
            "--timeout", type=float, help="per-cell timeout in seconds (default from the scenario size)"
        )
        p.add_argument("--no-floor", action="store_true", help="do not run bin/hft-floor as a reference row")
        p.add_argument("--no-report", action="store_true", help="write results only, not report.md / plots")

    def config_file(self) -> Path:
        return self.args.config or super().config_file()

    def plan(self, bins: Path) -> Plan:
        """The suite (or --scenarios, --clients) with the flags' overrides, checked."""
        args = self.args
        for flag in ("orders", "connections", "warmup", "repeat", "rounds"):
            value = getattr(args, flag)
            if value is not None and value < (0 if flag == "warmup" else 1):
                raise UsageError(f"--{flag} must be >= {0 if flag == 'warmup' else 1} (got {value})")
        if args.rounds is not None and args.repeat is not None:
            raise UsageError(
                "--rounds and --repeat exclude each other: pass --rounds N for N runs of the plan, "
                "each against a fresh server, or --repeat N for N runs of each cell against one"
            )
        if args.orders is not None and args.duration is not None:
            raise UsageError("--orders and --duration exclude each other; pass one")
        overrides = {
            "orders": args.orders,
            "duration_s": args.duration,
            "connections": args.connections,
            "rate": args.rate,
            "warmup": args.warmup,
            "interval_s": args.interval_s,
        }
        return make_plan(
            self.config,
            bins,
            args.suite,
            scenarios=split(args.scenarios),
            clients=split(args.clients),
            repeats=args.repeat or 1,
            overrides=overrides,
            floor=not args.no_floor,
        )

    def run_dir(self) -> Path:
        """--out (new or empty), else a new results/run_<UTC>."""
        out = self.args.out
        if not out:
            return new_run_dir(paths.results_dir(self.root))
        if out.exists() and any(out.iterdir()):
            raise UsageError(f"--out {out} exists and is not empty; pass a new folder")
        out.mkdir(parents=True, exist_ok=True)
        return out.resolve()

    def run(self) -> int:
        args = self.args
        started = time.perf_counter()
        cfg = self.config  # --config, else the root's
        bins = (args.bins or paths.bin_dir(self.root)).resolve()
        if not (bins / "hft-server").is_file():
            raise UsageError(f"{bins / 'hft-server'} not found: run `make build-rust` (or `make build`)")
        placement = placement_mod.resolve(args.server_cpus, args.client_cpus)
        plan = self.plan(bins)
        if args.rounds is not None:
            return self.rounds(plan, bins, placement, started)
        run_dir = self.run_dir()
        print(f"hftbench run: {run_dir}", file=sys.stderr)
        # SIGTERM (a cancelled CI job) unwinds like Ctrl-C: results kept, namespaces removed.
        previous = signal.signal(signal.SIGTERM, raise_interrupt)
        try:
            run = run_plan(
                plan,
                bins,
                run_dir,
                targets=cfg.targets,
                server_flags=args.server_flag,
                timeout_s=args.timeout,
                quiet=args.quiet,
                root=self.root,
                placement=placement,
            )
        except ServerError as exc:
            print(f"hftbench run: {exc}", file=sys.stderr)
            return 1
        except OSError as exc:
            return _write_failed(exc, run_dir)
        except KeyboardInterrupt:
            return self.interrupted(run_dir, f"kept in {run_dir}")
        finally:
            signal.signal(signal.SIGTERM, previous)
        return self.finish(run, run_dir, started)

    def rounds(self, plan: Plan, bins: Path, placement: placement_mod.Placement, started: float) -> int:
        """--rounds N: the plan alone in N rounds by the rig (Rig.rounds), each round's run
        folder inside --out, each finished (report, failed cells) as it ends; exit 1 when a
        cell failed or a server did not start, the rounds before it kept."""
        args = self.args
        out = (args.out or paths.results_dir(self.root)).resolve()
        out.mkdir(parents=True, exist_ok=True)
        rig = Rig.of(plan, PAIRED_ROUNDS, self.config.targets, runner=placement, timeout_s=args.timeout)
        side = Served(bins, tuple(args.server_flag), repo=self.root)
        current: list[Path] = []  # the round running now: where an error says it stopped

        def starting(i: int, run_dir: Path) -> None:
            current[:] = [run_dir]
            print(f"hftbench run: round {i} of {args.rounds}: {run_dir}", file=sys.stderr)

        codes = [0]
        previous = signal.signal(signal.SIGTERM, raise_interrupt)
        try:
            for run in rig.rounds(side, out, args.rounds, starting=starting):
                codes.append(self.finish(run, run.path, started))
        except RoundError as exc:
            print(f"hftbench run: {exc}; the rounds before it are in {out}", file=sys.stderr)
            return 1
        except OSError as exc:
            if not current:
                raise
            return _write_failed(exc, current[0])
        except KeyboardInterrupt:
            if not current:
                raise
            return self.interrupted(current[0], f"the rounds so far are in {out}")
        finally:
            signal.signal(signal.SIGTERM, previous)
        if rig.capacity_rps:
            print(
                f"hftbench run: every round at a share of {rig.capacity_rps:.0f} orders/s, probed once "
                f"({out / 'capacity-probe.log'})",
                file=sys.stderr,
            )
        return max(codes)

    def interrupted(self, run_dir: Path, kept: str) -> int:
        """Ctrl-C or SIGTERM: run_plan wrote results.json (complete: false) on the way out;
        report what was measured."""
        if not (run_dir / "results.json").is_file():  # stopped before its first write
            print(f"hftbench run: interrupted before a cell; {kept}", file=sys.stderr)
            return 130
        partial = load_run(run_dir)
        if not self.args.no_report:
            from ..publish import report

            report.write_all(partial)
        print(f"hftbench run: interrupted after {len(partial.cells)} cells; {kept}", file=sys.stderr)
        return 130

    def finish(self, run: Run, run_dir: Path, started: float) -> int:
        """The timings said, the report written (unless --no-report), each failed cell named."""
        client_s = sum(c.wall_s or 0.0 for c in run.cells)
        overhead = (run.wall_s or 0.0) - client_s
        print(
            f"hftbench run: {len(run.cells)} cells, {len(run.failed)} failed; wall {run.wall_s:.1f} s, "
            f"clients {client_s:.1f} s, orchestration {overhead:.1f} s "
            f"({100 * overhead / max(run.wall_s or 1, 1e-9):.1f} %)",
            file=sys.stderr,
        )
        if not self.args.no_report:
            from ..publish import report

            try:
                md = report.write_all(run)
            except OSError as exc:
                return _write_failed(exc, run_dir)
            total = time.perf_counter() - started
            print(f"hftbench run: report {md} (command wall time {total:.1f} s)", file=sys.stderr)
        for cell in run.failed:
            rep = f" r{cell.repeat}" if run.repeats > 1 else ""
            print(f"hftbench run: ❌ {cell.scenario}/{cell.client}{rep}: {cell.reason}", file=sys.stderr)
        return 1 if run.failed else 0


def _write_failed(exc: OSError, run_dir: Path) -> int:
    """A write into the run folder failed (a full disk): name the file and the fix, say what is
    kept. Every file there is written atomically, so what was written before is whole."""
    try:
        cells = len(load_run(run_dir).cells)
        kept = f"{cells} cell{'' if cells == 1 else 's'}"
    except (OSError, ValueError):
        kept = "no cell"
    print(f"hftbench run: {write_error(exc, run_dir)}", file=sys.stderr)
    print(
        f"hftbench run: stopped; {run_dir / 'results.json'} keeps the {kept} written before "
        f"(then `hftbench report {run_dir}` writes the report)",
        file=sys.stderr,
    )
    return 2
