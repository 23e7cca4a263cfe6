"""`hftbench run`: start the server, run every scenario × client cell, write the run folder.

Each cell's result is on disk as soon as the client exits and results.json is rewritten
after every cell, so an interrupted or crashed run keeps everything measured so far.
With --repeat N every cell runs N times; the client order rotates between repeats so no
client always runs first (or right after the same neighbour).
"""

from __future__ import annotations

import argparse
import dataclasses
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path

from . import capacity, fingerprint, paths
from . import config as config_mod
from . import placement as placement_mod
from .cell import CellSetup, describe_server_exit, run_cell
from .config import FLOOR
from .errors import UsageError, raise_interrupt
from .fsio import write_error
from .netcells import NetworkCells
from .plan import FLOOR_SCENARIO, Plan, make_plan
from .progress import Progress
from .results import Cell, Run, load_run
from .server import Server, ServerError, add_server_arguments


def _split(value: str | None) -> list[str] | None:
    return [v.strip() for v in value.split(",") if v.strip()] if value else None


def new_run_dir(results_root: Path) -> Path:
    """results/run_<UTC>_<hex>: a fresh folder, a run id no other run has (paths.fresh_dir)."""
    return paths.fresh_dir(results_root, f"run_{paths.utc_stamp()}")


def _orders(sc: config_mod.Scenario) -> float:
    """Orders a cell sends (warm-up included); for --duration, estimated from the rate or 5,000/s."""
    measured = sc.orders if sc.orders is not None else (sc.duration_s or 0) * (sc.rate or 5000)
    return sc.warmup + measured


def _scenario_record(sc: config_mod.Scenario, links: dict[str, config_mod.LinkProfile]) -> dict:
    """The scenario in results.json; a network scenario carries its link profile."""
    record = sc.to_dict()
    if sc.link and sc.link in links:
        record["link_profile"] = links[sc.link].to_dict()
    return record


def run_plan(
    plan: Plan,
    bins_dir: Path,
    run_dir: Path,
    *,
    targets: dict,
    server_flags: list[str] | None = None,
    timeout_s: float | None = None,
    quiet: bool = False,
    root: Path | None = None,
    schema_path: Path | None = None,
    on_cell: Callable[[Cell], None] | None = None,
    placement: placement_mod.Placement | None = None,
    branch: str | None = None,
) -> Run:
    """Run every cell of `plan` against one fresh server from `bins_dir`; write `run_dir`.

    The library entry point (`hftbench ab` calls it with another bins_dir). Returns the Run;
    failures are cells with status "failed", not exceptions. A server that dies mid-run is
    started again for the next cell (the cell it died in fails, naming its exit); if it does
    not start, every later cell that needs it fails with that reason. An OSError writing
    results.json (a full disk) ends the run; the file on disk keeps the cells before it.
    `placement` None: the runner's HFTBENCH_SERVER_CPUS / HFTBENCH_CLIENT_CPUS, if set
    (placement.py). `branch` names the branch the run stands for when `root` is a detached
    worktree (ab's sides)."""
    started = time.perf_counter()
    if placement is None:
        placement = placement_mod.resolve(None, None)
    if plan.colocate:
        placement = placement.colocated()
    placement.check()
    if capacity.needs_rate(plan.scenarios):  # the load series: a share of this runner's capacity
        rate = capacity.measure(plan.scenarios, Path(bins_dir), list(server_flags or []), placement,
                                Path(run_dir) / "capacity-probe.log")  # fmt: skip
        plan = dataclasses.replace(plan, scenarios=capacity.resolve(plan.scenarios, rate))
    host = fingerprint.host(root)
    if placement.describe():
        host["placement"] = placement.describe()
    run = Run(
        path=run_dir,
        run_id=run_dir.name,
        suite=plan.suite,
        started_at=paths.utc_iso(),
        finished_at=None,
        complete=False,
        fingerprint=host,
        git={**fingerprint.git_info(root), **({"branch": branch} if branch else {})},
        tools=fingerprint.tools(),
        server={},
        targets=dict(targets),
        scenarios={
            sc.name: _scenario_record(sc, plan.links)
            for sc in ([FLOOR_SCENARIO] if plan.floor else []) + plan.scenarios
        },
        repeats=plan.repeats,
        cells=[],
        skipped=plan.skipped,
    )
    server = Server(
        Path(bins_dir) / "hft-server", run_dir / "server.log", server_flags, cpus=placement.server
    )
    cells = plan.cells()
    progress = Progress([_orders(sc) for sc, _, _ in cells], quiet)
    for skip in plan.skipped:
        progress.note(f"skipped {skip['client']}: {skip['reason']}")
    setup = CellSetup(
        bins_dir=Path(bins_dir),
        run_dir=Path(run_dir),
        repeats=plan.repeats,
        timeout_s=timeout_s,
        schema_path=schema_path,
        placement=placement,
    )
    network = NetworkCells(plan.links, setup, server_flags, progress.note)
    try:
        server.start()
        run.server = server.describe()
        run.write()
        down: str | None = None  # set once the server is dead and will not start again
        for scenario, client, repeat in cells:
            progress.start(scenario.name, client, repeat)
            if not scenario.link and client != FLOOR and down is None and not server.alive():
                down = _restart(server, progress)
            if scenario.link:
                cell = network.run(scenario, client, repeat)
            elif client != FLOOR and down:
                cell = Cell.failure(scenario.name, client, repeat, down)
            else:
                cell = run_cell(setup, None if client == FLOOR else server, scenario, client, repeat)
            run.cells.append(cell)
            run.write()
            progress.finish(cell)
            if on_cell:
                on_cell(cell)
        run.complete = True
    except BaseException:
        _finish(run, started, progress, server, network, raising=True)
        raise
    _finish(run, started, progress, server, network)
    return run


def _finish(
    run: Run,
    started: float,
    progress: Progress,
    server: Server,
    network: NetworkCells,
    raising: bool = False,
) -> None:
    """Stop the server and write results.json a last time. When the run is already ending on an
    error (a full disk, Ctrl-C), a failure of this write must not hide that first error."""
    progress.close()
    server.stop()
    network.close()
    run.finished_at = paths.utc_iso()
    run.wall_s = round(time.perf_counter() - started, 3)
    try:
        run.write()
    except OSError:
        if not raising:
            raise


def _restart(server: Server, progress: Progress) -> str | None:
    """Start a server that died for the next cell: None when it serves again, else the reason
    every remaining cell that needs it fails with (one failed start is not retried per cell)."""
    died = describe_server_exit(server.proc.returncode)
    progress.note(f"{died}; restarting it")
    try:
        server.start()
    except (ServerError, UsageError) as exc:
        progress.note(f"{died} and did not start again: {exc}")
        return f"not run: {died} before this cell and did not start again ({exc})"
    return None


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "run",
        help="run a suite: start bin/hft-server, run each scenario x client, write results/run_<UTC>/",
        description="Run a suite of scenarios against bin/hft-server with the clients in bin/, write "
        "results/run_<UTC>/ (results.json, per-client JSON + .hlog, server.log) and the report.",
    )
    p.add_argument(
        "--suite", help="suite name from bench-config/scenarios.yaml (quick, pr, standard, stress)"
    )
    p.add_argument("--scenarios", help="comma-separated scenario names (default: the suite's)")
    p.add_argument(
        "--clients", help="comma-separated client names (default: the suite's clients found in bin/)"
    )
    p.add_argument("--orders", type=int, help="override measured orders per cell")
    p.add_argument("--duration", type=float, help="override: measure for S seconds instead of --orders")
    p.add_argument("--connections", type=int, help="override connections")
    p.add_argument("--rate", type=float, help="override: open loop at R orders/s")
    p.add_argument("--warmup", type=int, help="override warm-up orders")
    p.add_argument(
        "--interval", type=float, dest="interval_s", help="override the soak scenarios' .hlog interval (s)"
    )
    p.add_argument(
        "--repeat", type=int, default=1, help="run each cell N times, client order rotated (default 1)"
    )
    p.add_argument("--out", type=Path, help="run folder to create (default results/run_<UTC>)")
    p.add_argument("--bin", type=Path, dest="bins", help="folder with hft-server and client-* (default bin/)")
    p.add_argument("--config", type=Path, help="scenarios file (default bench-config/scenarios.yaml)")
    add_server_arguments(p)
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
    p.add_argument("--quiet", action="store_true", help="plain progress lines, no progress bar")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    started = time.perf_counter()
    root = paths.repo_root()
    cfg = config_mod.load(args.config or paths.config_file(root))
    bins = (args.bins or paths.bin_dir(root)).resolve()
    if not (bins / "hft-server").is_file():
        raise UsageError(f"{bins / 'hft-server'} not found: run `make build-rust` (or `make build`)")
    for flag in ("orders", "connections", "warmup", "repeat"):
        value = getattr(args, flag)
        if value is not None and value < (0 if flag == "warmup" else 1):
            raise UsageError(f"--{flag} must be >= {0 if flag == 'warmup' else 1} (got {value})")
    if args.orders is not None and args.duration is not None:
        raise UsageError("--orders and --duration exclude each other; pass one")
    placement = placement_mod.resolve(args.server_cpus, args.client_cpus)
    overrides = {
        "orders": args.orders,
        "duration_s": args.duration,
        "connections": args.connections,
        "rate": args.rate,
        "warmup": args.warmup,
        "interval_s": args.interval_s,
    }
    plan = make_plan(
        cfg,
        bins,
        args.suite,
        scenarios=_split(args.scenarios),
        clients=_split(args.clients),
        repeats=args.repeat,
        overrides=overrides,
        floor=not args.no_floor,
    )
    if args.out:
        if args.out.exists() and any(args.out.iterdir()):
            raise UsageError(f"--out {args.out} exists and is not empty; pass a new folder")
        args.out.mkdir(parents=True, exist_ok=True)
        run_dir = args.out.resolve()
    else:
        run_dir = new_run_dir(paths.results_dir(root))
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
            root=root,
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
            from . import report

            report.write_all(partial)
        print(
            f"hftbench run: interrupted after {len(partial.cells)} cells; kept in {run_dir}", file=sys.stderr
        )
        return 130
    finally:
        signal.signal(signal.SIGTERM, previous)
    client_s = sum(c.wall_s or 0.0 for c in run.cells)
    overhead = (run.wall_s or 0.0) - client_s
    print(
        f"hftbench run: {len(run.cells)} cells, {len(run.failed)} failed; wall {run.wall_s:.1f} s, "
        f"clients {client_s:.1f} s, orchestration {overhead:.1f} s "
        f"({100 * overhead / max(run.wall_s or 1, 1e-9):.1f} %)",
        file=sys.stderr,
    )
    if not args.no_report:
        from . import report

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
