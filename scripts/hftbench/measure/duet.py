"""One duet round: base's and head's servers at once, pinned alike, and one client-hft that
sends every order to both, in an order drawn at random per pair (`--duet-url`).

Why: the host's speed changes every few seconds for every process at once (paired.py). In a
duet both builds see the same seconds, so each round's head / base ratio is free of them; the
gate tests those ratios over rounds (clustered.py), because the server processes and their
slots are drawn per round (per pair of rounds, balanced: rig.head_slot). The client's
`.hlog` of each side is still cut into blocks (`--interval-s BLOCK_S`) that start and end at
the same instant, for whoever reads them.

A round writes two ordinary run folders, `<out>/base/run_<stamp>_baseNN_<hex>` and
`<out>/head/run_<stamp>_headNN_<hex>` (results.json, the cell's JSON and .hlog, the server's
log), so every reader of run folders (report, history, compare) reads a duet's sides as it
reads any run. Which build serves side "a" (`--url`) and which side "b" (`--duet-url`) is
drawn per pair of rounds and swapped within the pair (rig.py), and slot a's server starts
first, so neither the URL order, the first connection nor the older process favours one
build, and the gate takes what the slots do out of its test (clustered.py).

Only what a duet can measure runs as one: client-hft, closed loop, one connection, on
loopback (`qualifies`). Everything else runs as paired rounds (ab.py).
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import time
from pathlib import Path

from .. import paths, roster
from ..config import Scenario
from ..results import UNMEASURED, Cell, ClientResult, Run
from ..schema import check_result
from . import cgroups, fingerprint, memory
from .cell import (
    build_command,
    client_binary,
    cpu_spent,
    default_timeout_s,
    describe_server_exit,
    held_interrupts,
    result_name,
    server_readings,
    start_client,
    why_not_clean,
)
from .placement import Placement
from .procs import end_session, log_tail
from .served import Served
from .server import Server, ServerError

BLOCK_S = 0.1  # a block: short against the host's regimes (seconds); client-hft's shortest interval
SIDES = ("base", "head")


def duet_client() -> str:
    """The client that interleaves two servers: the roster's `duet` (bench-config/clients.yaml)."""
    return roster.default().the_one("duet")


def qualifies(scenario: Scenario, client: str) -> str | None:
    """None when this cell can run as a duet, else why not (in words). Closed loop: its
    connections are lanes, each a connection to both sides sending each order to both. Open
    loop (the load series): any connections, the orders in pairs, one to each side, so both
    servers carry the same load at the same time."""
    if client != duet_client():
        return f"only client-{duet_client()} interleaves two servers (the roster's duet), not client-{client}"
    if scenario.link:
        return "a network scenario's server runs in its own namespace"
    if scenario.interval_s is not None:
        return "this scenario's intervals are a soak's, not a duet's blocks"
    return None


def run_round(
    sides: dict[str, Served],
    out: Path,
    pair: int,
    scenarios: list[Scenario],
    *,
    suite: str,
    targets: dict,
    placement: Placement,
    head_slot: str,
) -> dict[str, Run]:
    """Both servers, one client-hft per scenario, two run folders; returns them by side. A
    failed cell is a cell with its reason in both folders (never an exception); a server that
    does not start, or dies, fails that side's cells from then on and leaves the other side's
    unmeasured (a failure is data: judge/failures.py counts it). `head_slot` ("a" or "b"):
    which slot head's server takes (rig.py balances them over the rounds)."""
    stamp = paths.utc_stamp()
    dirs = {s: paths.round_dir(out, s, pair + 1, stamp=stamp) for s in SIDES}
    slot_a = "head" if head_slot == "a" else "base"
    slot_b = "head" if slot_a == "base" else "base"
    slot = {slot_a: "a", slot_b: "b"}
    servers = {
        s: Server(
            sides[s].bins / "hft-server",
            dirs[s] / "server.log",
            sides[s].flags,
            cpus=placement.server_of_slot(slot[s]),
        )
        for s in SIDES
    }
    # One host, one moment: both folders get the same fingerprint, taken once (the harness's
    # own tuning check: never a side's tree, whose script is the code under test).
    host, tools = fingerprint.host(), fingerprint.tools()
    if placement.describe():  # as run_plan records it: the placement is part of the runner's id
        host["placement"] = placement.describe()
    runs = {s: _new_run(dirs[s], sides[s], suite, targets, scenarios, host, tools) for s in SIDES}
    started = time.perf_counter()
    # Each side's server in a cgroup of its own (cgroups.py): its CPUs, limits, and its CPU
    # per order read from the group, so a head's exited children still count as its own.
    groups = cgroups.for_run(
        f"round_{stamp}_{pair + 1:02d}_{dirs['head'].name[-6:]}", {s: servers[s].cpus for s in SIDES}
    )
    try:
        for s in SIDES:
            servers[s].cgroup = groups.get(s)
        # Started in slot order, so which build's server is the older process is drawn per
        # round too: base always first read a 40-round A/A's latency-1c P99 as head −0.70 %
        # (3.2 standard errors; docs/measurements.md, 2026-11-28).
        down: dict[str, str] = {}  # side -> why its server is not serving (a failure is data)
        for s in (slot_a, slot_b):
            try:
                servers[s].start()
            except ServerError as exc:
                down[s] = f"hft-server did not start: {exc}"
                continue
            runs[s].server = servers[s].describe()
            runs[s].server["duet_slot"] = "a" if s == slot_a else "b"
            runs[s].server["cgroup"] = groups.describe(s)
        for scenario in scenarios:
            down.update(_died(servers, down))
            if down:
                cells = _broken(scenario, down)
            else:
                cells = _client(sides, servers, dirs, scenario, placement, slot_a, slot_b)
            for s in SIDES:
                runs[s].cells.append(cells[s])
                runs[s].write()
        for s in SIDES:
            runs[s].complete = True
    finally:
        for s in SIDES:
            servers[s].stop()
        groups.remove()  # what a side left in its group is killed with it
        for s in SIDES:
            runs[s].finished_at = paths.utc_iso()
            runs[s].wall_s = round(time.perf_counter() - started, 3)
            runs[s].write()
    return runs


def _died(servers: dict[str, Server], down: dict[str, str]) -> dict[str, str]:
    """The sides whose server has exited since it started (and was not down already)."""
    out = {}
    for s, server in servers.items():
        if s not in down and server.proc is not None and server.proc.poll() is not None:
            out[s] = f"{describe_server_exit(server.proc.returncode)} in an earlier cell of the round"
    return out


def _broken(sc: Scenario, down: dict[str, str]) -> dict[str, Cell]:
    """A cell a duet cannot run because a side's server is not serving: that side's cell fails
    with the reason (judge/failures.py counts it against that side), the other's is
    unmeasured (counted against neither: the fault is not its own)."""
    rel = result_name(sc.name, duet_client(), 1, 1)
    cells = {}
    for s in SIDES:
        if s in down:
            cells[s] = Cell.failure(sc.name, duet_client(), 1, down[s], file=rel)
        else:
            other = next(o for o in SIDES if o != s)
            why = f"not measured: the {other} server was not serving ({down[other]})"
            cells[s] = Cell(scenario=sc.name, client=duet_client(), status=UNMEASURED, reason=why, file=rel)
    return cells


def _new_run(
    path: Path, side: Served, suite: str, targets: dict, scenarios: list[Scenario], host: dict, tools: dict
) -> Run:
    return Run(
        path=path,
        run_id=path.name,
        suite=suite,
        started_at=paths.utc_iso(),
        finished_at=None,
        complete=False,
        fingerprint=dict(host),
        git=side.git_info(),
        tools=tools,
        server={},
        targets=dict(targets),
        scenarios={
            sc.name: {
                "orders": sc.orders,
                "connections": sc.connections,
                "warmup": sc.warmup,
                "block_s": BLOCK_S,
            }
            for sc in scenarios
        },
        repeats=1,
        cells=[],
    )


def _client(
    sides: dict[str, Served],
    servers: dict[str, Server],
    dirs: dict[str, Path],
    sc: Scenario,
    placement: Placement,
    slot_a: str,
    slot_b: str,
) -> dict[str, Cell]:
    """Run client-hft against both servers; one cell per side."""
    rel = result_name(sc.name, duet_client(), 1, 1)
    outs = {s: dirs[s] / rel for s in SIDES}
    for path in outs.values():
        path.parent.mkdir(parents=True, exist_ok=True)
    binary = client_binary(sides["base"].bins, duet_client())
    if not binary.is_file():
        why = f"{binary} not found; build it with `{build_command(duet_client())}`"
        return {s: Cell.failure(sc.name, duet_client(), 1, why, file=rel) for s in SIDES}
    cpu_before = {}
    memory_before = {}
    down = {}
    for s in SIDES:
        try:
            servers[s].reset_stats()
        except (OSError, ServerError) as exc:
            down[s] = f"POST /stats/reset failed before the cell: {exc}"
        cpu_before[s] = servers[s].cpu_seconds()
        memory_before[s] = memory.resident(servers[s])
    if down:
        return _broken(sc, down)
    cmd = [
        str(binary),
        *placement.client_flags(duet_client()),
        "--url",
        servers[slot_a].url,
        "--duet-url",
        servers[slot_b].url,
        *sc.client_args(duet_client()),
        "--interval-s",
        str(BLOCK_S),
        "--output",
        str(outs[slot_a]),
        "--duet-output",
        str(outs[slot_b]),
    ]
    log = outs[slot_a].with_suffix(".log")
    start = time.perf_counter()
    with open(log, "wb") as log_file:
        # Its own session (as cell.py): Ctrl-C reaches only us, and we end the client ourselves,
        # waiting for it, so no client outlives an interrupted ab.
        proc = None
        try:
            with held_interrupts():
                proc = start_client(cmd, log_file, placement)
            code = proc.wait(timeout=2 * default_timeout_s(sc))
        except subprocess.TimeoutExpired:
            end_session(proc)
            code = None
        except BaseException:
            if proc is not None:
                end_session(proc)
            raise
    wall = time.perf_counter() - start
    outs[slot_b].with_suffix(".log").write_bytes(log.read_bytes())  # each run folder whole
    if sc.mode == "closed":  # every order went to both sides: each is a whole run of sc
        cells = {
            s: _cell(s, servers[s], outs[s], rel, sc, code, wall, log, cpu_before[s], memory_before[s])
            for s in SIDES
        }
        return _not_its_own(cells, servers)
    # Open loop: each order went to one side, drawn at random; the sides add up to sc.
    share = dataclasses.replace(sc, orders=None)
    cells = {
        s: _cell(
            s,
            servers[s],
            outs[s],
            rel,
            share,
            code,
            wall,
            log,
            cpu_before[s],
            memory_before[s],
            check_server=False,
        )
        for s in SIDES
    }
    reason = _shares_add_up(cells, sc)
    if reason:
        cells = {s: dataclasses.replace(c, status="failed", reason=reason) for s, c in cells.items()}
    return _not_its_own(cells, servers)


def _not_its_own(cells: dict[str, Cell], servers: dict[str, Server]) -> dict[str, Cell]:
    """Where one side's server died during the cell, the other side's failed cell (the shared
    client saw a dead peer) is unmeasured, not the other side's failure."""
    dead = [s for s in SIDES if servers[s].proc is not None and servers[s].proc.poll() is not None]
    if len(dead) != 1:
        return cells
    alive = next(s for s in SIDES if s != dead[0])
    if cells[alive].ok:
        return cells
    why = f"not measured: the {dead[0]} server died during the cell ({cells[alive].reason})"
    return {**cells, alive: dataclasses.replace(cells[alive], status=UNMEASURED, reason=why)}


def _shares_add_up(cells: dict[str, Cell], sc: Scenario) -> str | None:
    """An open-loop duet's sides together: the orders asked for, and every one seen by a server."""
    if not all(c.ok and c.result for c in cells.values()):
        return None
    measured = sum(c.result.orders for c in cells.values())
    seen = sum(c.server_orders or 0 for c in cells.values())
    if sc.orders is not None and measured != sc.orders:
        return f"the two sides measured {measured:,} orders together, {sc.orders:,} were asked for"
    if seen != sc.warmup + measured:
        sent = sc.warmup + measured
        return f"orders lost: the client sent {sent:,} (warm-up included), the servers saw {seen:,}"
    return None


def _cell(
    side: str,
    server: Server,
    out: Path,
    rel: str,
    sc: Scenario,
    code: int | None,
    wall: float,
    log: Path,
    cpu_before: float | None,
    memory_before: memory.Reading,
    *,
    check_server: bool = True,
) -> Cell:
    def failed(reason: str, result: ClientResult | None = None) -> Cell:
        known = {"result": result, "wall_s": wall, "file": rel, "exit_code": code}
        return Cell.failure(sc.name, duet_client(), 1, reason, **known)

    died = server.proc.poll() if server.proc is not None else None
    if died is not None:  # the side's server died during the cell: the cause, before what the client saw
        return failed(f"{describe_server_exit(died)} during the cell (see server.log)")
    if code is None:
        return failed(f"timeout: client-hft --duet-url ran past {2 * default_timeout_s(sc):.0f} s; killed")
    if code not in (0, 1):
        return failed(f"client-hft --duet-url exited {code}: {log_tail(log, lines=1)[:300]}")
    try:
        doc = json.loads(out.read_text())
    except (OSError, json.JSONDecodeError, UnicodeDecodeError) as exc:
        return failed(f"{rel}: no readable result for the {side} side ({exc})")
    problem = check_result(doc)
    if problem:
        return failed(problem)
    result = ClientResult.from_dict(doc)
    try:
        server_orders = int(server.stats()["total_orders"])
    except (OSError, ServerError, ValueError) as exc:
        return failed(f"GET /stats of the {side} server failed after the run: {exc}", result)
    cpu_s = cpu_spent(server, cpu_before)
    reason = why_not_clean(result, sc, server_orders if check_server else None)
    if reason:
        return failed(reason, result)
    return Cell(
        scenario=sc.name,
        client=duet_client(),
        status="ok",
        result=result,
        wall_s=wall,
        file=rel,
        exit_code=code,
        server_orders=server_orders,
        server_cpu_s=cpu_s,
        **server_readings(server, cpu_s),
        **memory.cell_fields(memory_before, memory.resident(server)),
    )
