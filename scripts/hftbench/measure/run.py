"""A run: a plan's cells measured in order (`hftbench run`, and each round of ab, bisect and
calibrate), the server started once and again after it died, each cell's result on disk as
soon as the client exits and results.json rewritten after every cell, so an interrupted or
crashed run keeps everything measured so far. With repeats, the client order rotates between
repeats so no client always runs first (or right after the same neighbour).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from pathlib import Path

from .. import config as config_mod
from .. import paths
from ..config import FLOOR
from ..errors import UsageError
from ..results import Cell, Run
from ..results_shapes import ScenarioRecord
from . import capacity, cgroups, fingerprint
from . import placement as placement_mod
from .cell import CellSetup, describe_server_exit, run_cell
from .netcells import NetworkCells
from .plan import FLOOR_SCENARIO, Plan
from .progress import Progress
from .server import Server, ServerError


def new_run_dir(results_root: Path) -> Path:
    """results/run_<UTC>_<hex>: a fresh folder, a run id no other run has (paths.run_dir)."""
    return paths.run_dir(results_root)


def _orders(sc: config_mod.Scenario) -> float:
    """Orders a cell sends (warm-up included); for --duration, estimated from the rate or 5,000/s."""
    measured = sc.orders if sc.orders is not None else (sc.duration_s or 0) * (sc.rate or 5000)
    return sc.warmup + measured


def _scenario_record(sc: config_mod.Scenario, links: dict[str, config_mod.LinkProfile]) -> ScenarioRecord:
    """The scenario in results.json; a network scenario carries its link profile."""
    record = sc.to_dict()
    if sc.link and sc.link in links:
        record["link_profile"] = links[sc.link].to_dict()
    return record


def placed(plan: Plan, runner: placement_mod.Placement) -> placement_mod.Placement:
    """Where `plan`'s server and clients run on a runner placed as `runner` (its CPUs as
    resolved): colocated() when the plan colocates (the gate's suites), applied to the runner's
    placement exactly once: applied again, it would drop a tuned runner's second server CPU."""
    return runner.colocated() if plan.colocate else runner


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
    git: dict | None = None,
) -> Run:
    """Run every cell of `plan` against one fresh server from `bins_dir`; write `run_dir`.

    The library entry point (`hftbench ab` calls it with another bins_dir). Returns the Run;
    failures are cells with status "failed", not exceptions. A server that dies mid-run is
    started again for the next cell (the cell it died in fails, naming its exit); if it does
    not start, every later cell that needs it fails with that reason. An OSError writing
    results.json (a full disk) ends the run; the file on disk keeps the cells before it.
    `placement`: the runner's, as resolved (placement.py; None: its HFTBENCH_SERVER_CPUS /
    HFTBENCH_CLIENT_CPUS, if set), which run_plan places for the plan (`placed`). `git`: the
    results.json `git` object of the build measured (Served.git_info: ab's and bisect's sides,
    read from the harness's clone by sha); None: that of the checkout at `root` (this one).
    The host fingerprint is always the harness's own (fingerprint.host())."""
    started = time.perf_counter()
    placement = placed(plan, placement_mod.resolve(None, None) if placement is None else placement)
    placement.check()
    if capacity.needs_rate(plan.scenarios):  # the load series: a share of this runner's capacity
        rate = capacity.measure(
            plan.scenarios,
            Path(bins_dir),
            list(server_flags or []),
            placement,
            Path(run_dir) / "capacity-probe.log",
        )
        plan = dataclasses.replace(plan, scenarios=capacity.resolve(plan.scenarios, rate))
    host = fingerprint.host()
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
        git=dict(git) if git is not None else fingerprint.git_info(root),
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
    # The server in a cgroup of its own for the run (cgroups.py), restarts included.
    groups = cgroups.for_run(run.run_id, {"server": server.cpus})
    server.cgroup = groups.get("server")
    try:
        server.start()
        run.server = {**server.describe(), "cgroup": groups.describe("server")}
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
        try:
            _finish(run, started, progress, server, network, raising=True)
        finally:
            groups.remove()  # once the server is stopped: what it left in its group is killed
        raise
    try:
        _finish(run, started, progress, server, network)
    finally:
        groups.remove()
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
