"""One cell: run one client once against a running server, then check what it wrote.

A cell is "ok" only when all of these hold:
- the client exited 0 or 1 within its timeout (2 = could not run; anything else = crashed);
- its result file exists, is JSON, and validates against result.schema.json;
- the result names the client and scenario we asked for;
- no measured order failed (`errors` = 0), and the server's /stats `total_orders` since the
  reset equals warm-up + measured orders sent (an order the server never saw is lost).
Otherwise the cell is "failed" with the reason; a valid result is kept either way.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict

from .. import roster
from ..config import FLOOR, Scenario
from ..results import Cell, ClientResult, orders_failed
from ..schema import check_result
from . import memory
from .placement import UNPINNED, Placement
from .proc_sampler import ProcSampler
from .procs import die_with_parent, end_session, log_tail
from .server import Server, ServerError

PESSIMISTIC_RPS = 200  # closed-loop rate assumed for the timeout: the slowest client on a busy box
TIMEOUT_SLACK_S = 60.0


def client_binary(bins_dir: Path, client: str) -> Path:
    return Path(bins_dir) / ("hft-floor" if client == FLOOR else f"client-{client}")


def build_command(client: str) -> str:
    """The make command that puts `client`'s binary into bin/ (the floor: all of `make build`)."""
    known = roster.default()
    return f"make {known[client].make_target}" if client in known else "make build"


def link_clients(clients_bin: Path, side_bin: Path, clients: list[str]) -> None:
    """Symlink the clients of `clients_bin` into a side's bin/ (ab, bisect: one build of the
    clients, a server per commit)."""
    from ..errors import UsageError

    for client in clients:
        src = client_binary(clients_bin, client)
        if not os.access(src, os.X_OK):
            raise UsageError(f"{src} missing: run `make build` in {clients_bin.parent} (ab uses its clients)")
        dst = client_binary(side_bin, client)
        if not dst.exists():
            dst.symlink_to(src.resolve())


def available_clients(bins_dir: Path, wanted: tuple[str, ...] | list[str] | None = None) -> list[str]:
    """The clients of `wanted` (default: the roster's) whose binary is in bins_dir."""
    wanted = roster.default().names if wanted is None else wanted
    return [c for c in wanted if os.access(client_binary(bins_dir, c), os.X_OK)]


def default_timeout_s(scenario: Scenario) -> float:
    """Per-cell timeout: generous for a slow client on a noisy machine, bounded for a hung one."""
    if scenario.duration_s is not None:
        expected = scenario.duration_s + scenario.warmup / PESSIMISTIC_RPS
    elif scenario.rate:
        expected = 1.5 * (scenario.warmup + (scenario.orders or 0)) / scenario.rate
    else:
        expected = (scenario.warmup + (scenario.orders or 0)) / PESSIMISTIC_RPS
    return expected + TIMEOUT_SLACK_S


def result_name(scenario: str, client: str, repeat: int, repeats: int) -> str:
    """`<scenario>/<client>.json`, or `<scenario>/<client>.r<i>.json` when repeating."""
    suffix = f".r{repeat}" if repeats > 1 else ""
    return f"{scenario}/{client}{suffix}.json"


def _describe_exit(code: int) -> str:
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit {code}"


INTERRUPTS = {signal.SIGINT, signal.SIGTERM}


@contextlib.contextmanager
def held_interrupts():
    """SIGINT and SIGTERM held off while a client is started, so that an interrupt cannot
    land between the fork and `proc` being known, where nobody would end the client; the
    caller enters it inside its try, so a held interrupt arrives where the client is killed."""
    old = signal.pthread_sigmask(signal.SIG_BLOCK, INTERRUPTS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def client_preexec(placement: Placement) -> Callable[[], None]:
    """The client dies with hftbench, even a SIGKILLed one (a stopped or stalled client would
    otherwise outlive it and write into the run folder), and runs on its CPUs when pinned;
    it takes interrupts again (held_interrupts' mask is inherited)."""
    confine = placement.confine_client()

    def preexec() -> None:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, INTERRUPTS)
        die_with_parent()
        if confine is not None:
            confine()

    return preexec


def start_client(cmd: list[str], log_file, placement: Placement) -> subprocess.Popen:
    """A client in its own session (Ctrl-C reaches only us; we end it ourselves, waiting for
    it), its output into `log_file`, placed and tied to us by client_preexec."""
    return subprocess.Popen(
        cmd,
        stdout=log_file,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        preexec_fn=client_preexec(placement),
    )


def _stopped(pid: int) -> bool:
    """Whether a process is stopped (SIGSTOP, a debugger): a hang worth naming as such."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state in ("T", "t")


def _deadline(scenario: Scenario, timeout_s: float | None) -> str:
    """Where a cell's deadline comes from, for the timeout's reason."""
    if timeout_s:
        return "--timeout"
    expected = default_timeout_s(scenario) - TIMEOUT_SLACK_S
    return f"the scenario's expected {expected:.0f} s + {TIMEOUT_SLACK_S:.0f} s"


def _server_exit(server: Server | None) -> str | None:
    """None while the server runs; else what its exit was, for the cell's reason."""
    if server is None or server.proc is None or server.proc.poll() is None:
        return None
    return f"{describe_server_exit(server.proc.returncode)} during the cell (see server.log)"


def describe_server_exit(code: int) -> str:
    """'hft-server was killed by SIGKILL', 'hft-server exited with status 101'."""
    return f"hft-server was {_describe_exit(code)}" if code < 0 else f"hft-server exited with status {code}"


def server_samples_path(result_path: Path) -> Path:
    """`<scenario>/<client>[.rN].server.csv`: the server's /proc samples during a soak cell."""
    return Path(result_path).with_suffix(".server.csv")


def _server_sampler(server: Server | None, scenario: Scenario, out: Path):
    """A soak cell samples the server's RSS, CPU and connections while the client runs."""
    if not scenario.soak or server is None or server.proc is None:
        return contextlib.nullcontext()
    return ProcSampler(server.serving_pid() or server.proc.pid, server_samples_path(out))


@dataclass(frozen=True)
class CellSetup:
    """What every cell of one run shares: where the binaries are and the results go, how many
    repeats name the result files, the per-cell timeout (None: from the scenario), the result
    schema (None: the repository's) and where the clients run."""

    bins_dir: Path
    run_dir: Path
    repeats: int = 1
    timeout_s: float | None = None
    schema_path: Path | None = None
    placement: Placement = UNPINNED


def run_cell(
    setup: CellSetup,
    server: Server | None,
    scenario: Scenario,
    client: str,
    repeat: int = 1,
    *,
    floor_url: str | None = None,
) -> Cell:
    """Run `client` for `scenario` once, write its result under `setup.run_dir`, return the cell.

    `server` None is for the floor, which needs no server; `floor_url` points the floor at
    an echo server elsewhere (`hft-floor --listen`: a network scenario's path) instead of
    its own on loopback. Never raises for a client's failure: that is the returned cell's
    status and reason.
    """
    rel = result_name(scenario.name, client, repeat, setup.repeats)
    out = Path(setup.run_dir) / rel
    out.parent.mkdir(parents=True, exist_ok=True)
    log = out.with_suffix(".log")  # the client's stdout + stderr
    deadline = _deadline(scenario, setup.timeout_s)
    timeout_s = setup.timeout_s or default_timeout_s(scenario)
    placement = setup.placement

    def failed(reason: str, result: ClientResult | None = None, code: int | None = None, wall=None) -> Cell:
        if server_exit:  # the cause comes first: what the client saw follows from it
            reason = f"{server_exit}; the client: {reason}"
        return Cell.failure(
            scenario.name,
            client,
            repeat,
            reason,
            result=result,
            wall_s=wall,
            file=rel,
            exit_code=code,
            server_orders=server_orders,
        )

    server_orders: int | None = None
    cpu_before: float | None = None
    memory_before = memory.Reading(None, why="no server")
    server_exit: str | None = None  # set when the server died during the cell
    binary = client_binary(setup.bins_dir, client)
    if not os.access(binary, os.X_OK):
        return failed(f"{binary} not found; build it with `{build_command(client)}`")

    cmd = [str(binary), *placement.client_flags(client)]
    if floor_url is not None:
        cmd += ["--remote", "--url", floor_url]
    if server is not None:
        cmd += ["--url", server.url]
        try:
            server.reset_stats()
        except (OSError, ServerError) as exc:
            return failed(f"POST /stats/reset failed before the run: {exc}")
        cpu_before = server.cpu_seconds()
        memory_before = memory.resident(server)
    cmd += [*scenario.client_args(client), "--output", str(out)]

    start = time.perf_counter()
    with open(log, "wb") as log_file, _server_sampler(server, scenario, out):
        proc = None
        try:
            with held_interrupts():
                proc = start_client(cmd, log_file, placement)
            code = proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            stopped = _stopped(proc.pid)
            end_session(proc)  # its own session: takes any children with it
            server_exit = _server_exit(server)
            return failed(
                f"timeout: no exit within {timeout_s:.0f} s ({deadline}); "
                f"{'the client was stopped (SIGSTOP), ' if stopped else ''}killed",
                wall=time.perf_counter() - start,
            )
        except BaseException:  # Ctrl-C reaches only us (the client has its own session): stop it too
            if proc is not None:
                end_session(proc)
            raise
    wall = time.perf_counter() - start
    server_exit = _server_exit(server)

    if code not in (0, 1):
        detail = log_tail(log, lines=1)[:300]
        return failed(
            f"{_describe_exit(code)}: {detail}" if detail else _describe_exit(code), code=code, wall=wall
        )
    if not out.is_file():
        return failed(f"exit {code} but no result file {rel} was written", code=code, wall=wall)
    try:
        doc = json.loads(out.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        return failed(f"{rel} is not JSON: {exc}", code=code, wall=wall)
    problem = check_result(doc, setup.schema_path)
    if problem:
        return failed(problem, code=code, wall=wall)
    result = ClientResult.from_dict(doc)
    if result.client != client or result.scenario != scenario.name:
        return failed(
            f"result is for {result.client}/{result.scenario}, expected {client}/{scenario.name}",
            result,
            code,
            wall,
        )

    if server_exit:
        return failed(why_not_clean(result, scenario, None) or "no order failed", result, code, wall)
    if server is not None:
        try:
            server_orders = int(server.stats()["total_orders"])
        except (OSError, ServerError, ValueError) as exc:
            return failed(f"GET /stats failed after the run: {exc}", result, code, wall)
    cpu_s = cpu_spent(server, cpu_before)
    reason = why_not_clean(result, scenario, server_orders)
    if reason:
        return failed(reason, result, code, wall)
    return Cell(
        scenario=scenario.name,
        client=client,
        status="ok",
        reason=None,
        result=result,
        wall_s=wall,
        repeat=repeat,
        file=rel,
        exit_code=code,
        server_orders=server_orders,
        server_cpu_s=cpu_s,
        **server_readings(server, cpu_s),
        **(memory.cell_fields(memory_before, memory.resident(server)) if server is not None else {}),
    )


class ServerReadings(TypedDict, total=False):
    """results.Cell's keywords of where the server's CPU was read and its memory peak."""

    server_cpu_from: str
    server_memory_peak_bytes: int | None


def server_readings(server: Server | None, cpu_s: float | None) -> ServerReadings:
    """A measured cell's server_cpu_from (where `cpu_s` was read: "cgroup" or "proc") and
    server_memory_peak_bytes (its cgroup's peak so far), as Cell keywords; {} without them."""
    if server is None or cpu_s is None:
        return {}
    return {"server_cpu_from": server.cpu_source(), "server_memory_peak_bytes": server.memory_peak()}


def cpu_spent(server: Server | None, before: float | None) -> float | None:
    """The server's CPU seconds since `before` (its reading when the cell began); None when
    either reading is missing. Read after GET /stats, so the handling of that request counts
    on both sides alike."""
    after = server.cpu_seconds() if server is not None else None
    return None if before is None or after is None else round(max(after - before, 0.0), 6)


def why_not_clean(result: ClientResult, scenario: Scenario, server_orders: int | None) -> str | None:
    """None when a schema-valid result shows a clean run, else why not (pure)."""
    if result.errors:
        return orders_failed(result)
    if result.interrupted:
        return "the client was interrupted before the end"
    if scenario.orders is not None and result.orders != scenario.orders:
        return f"the client measured {result.orders:,} orders, {scenario.orders:,} were asked for"
    if server_orders is not None:
        sent = result.warmup + result.orders
        if server_orders < sent:
            return (
                f"orders lost: the client sent {sent:,} (warm-up included), "
                f"the server processed {server_orders:,}"
            )
        if server_orders > sent:
            return f"the server processed {server_orders:,} orders, the client says it sent {sent:,}"
    return None
