"""`hftbench run`: start the server, run every scenario × client cell, write the run folder.

Each cell's result is on disk as soon as the client exits and results.json is rewritten
after every cell, so an interrupted or crashed run keeps everything measured so far.
With --repeat N every cell runs N times; the client order rotates between repeats so no
client always runs first (or right after the same neighbour).
"""

from __future__ import annotations

import signal
import sys
import time
from pathlib import Path

from .. import paths
from ..errors import UsageError, raise_interrupt
from ..fsio import write_error
from ..measure import placement as placement_mod
from ..measure.plan import Plan, make_plan
from ..measure.run import new_run_dir, run_plan
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
        p.add_argument(
            "--repeat", type=int, default=1, help="run each cell N times, client order rotated (default 1)"
        )
        p.add_argument("--out", type=Path, help="run folder to create (default results/run_<UTC>)")
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
        for flag in ("orders", "connections", "warmup", "repeat"):
            value = getattr(args, flag)
            if value is not None and value < (0 if flag == "warmup" else 1):
                raise UsageError(f"--{flag} must be >= {0 if flag == 'warmup' else 1} (got {value})")
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
            repeats=args.repeat,
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
            # run_plan wrote results.json (complete: false) on the way out: report what was measured.
            partial = load_run(run_dir)
            if not args.no_report:
                from ..publish import report

                report.write_all(partial)
            print(
                f"hftbench run: interrupted after {len(partial.cells)} cells; kept in {run_dir}",
                file=sys.stderr,
            )
            return 130
        finally:
            signal.signal(signal.SIGTERM, previous)
        return self.finish(run, run_dir, started)

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
