"""The runner: worker processes, one event loop per core, each with ONE aiohttp session holding
its share of the --connections; the parent coordinates the warm-up and measured phases and
hands what they measured to the stats stage's merge.

Why: aiohttp spends ~60 us of CPU per request on this kind of machine, so one event loop
(one core) tops out near 15K req/s; a second process uses the second core.

- Connection j (0..C-1) belongs to process j mod P, so the open loop keeps its schedule
  (order i is due at t0 + i/R on connection i mod C) with no state shared at all.
- The closed loop takes every order index from one counter shared by the processes
  (``SharedCounter``), so each k in 0..W+N-1 is sent exactly once, as with one process.
- Phases: each child warms up (closed loop) and says "ready"; when all are ready the parent
  sends "go" with the start of the measured phase (or open loop's t0), then collects each
  child's "done": counts and its merged histograms, encoded; stats.merge_tallies adds them up.
- SIGINT goes to the parent (children ignore it; a terminal's Ctrl-C reaches them too):
  the first one sends "stop" to every child, which stop sending and report what they have;
  a second one kills the parent, and the children stop when their pipe closes.
"""

import asyncio
import contextlib
import math
import multiprocessing
import multiprocessing.connection
import os
import signal
import time
from dataclasses import dataclass

from hdrh.histogram import HdrHistogram

from . import pacing, worker
from .args import Config
from .stats import Tally, merge_tallies, new_histogram

# Open loop: orders/s one process is given (it spends ~70 us each, and its pacing spins
# while waiting, so low rates stay in one process and leave the other core to the server).
OPEN_RATE_PER_PROCESS = 8000
# Open loop: t0 lies this far after "go", so every worker is waiting before order 0 is due.
START_MARGIN_NS = 5_000_000
# Overrides the process count (default: cores, capped by --connections); for measuring.
PROCESSES_ENV = "CLIENT_PYTHON_PROCESSES"


@dataclass
class RunOutcome:
    """Everything result.py needs from a run."""

    started_wall_ns: int  # wall clock at the start of the measured phase
    duration_s: float  # wall time of the measured phase
    tally: Tally  # every worker's counts and histograms, merged
    interrupted: bool  # SIGINT ended the run early
    processes: int


def process_count(cfg: Config) -> int:
    """Worker processes for this run: one per usable core, at most one per connection."""
    if os.environ.get(PROCESSES_ENV, "").isdigit():
        wanted = int(os.environ[PROCESSES_ENV])
    else:
        wanted = len(os.sched_getaffinity(0))
        if cfg.rate is not None:
            wanted = min(wanted, math.ceil(cfg.rate / OPEN_RATE_PER_PROCESS))
    return max(1, min(wanted, cfg.connections))


def make_go(cfg: Config) -> tuple[worker.Go, int]:
    """The start of the measured phase, decided now; and its wall-clock time."""
    now = time.perf_counter_ns()
    t0 = None
    if cfg.rate is None:
        start = now
    else:
        t0 = now + START_MARGIN_NS
        start = pacing.intended_ns(t0, cfg.warmup, cfg.rate)
    go = worker.Go(start_ns=start, t0_ns=t0)
    if cfg.duration_s is not None:
        go.deadline_ns = start + round(cfg.duration_s * 1e9)
    else:
        go.end_k = cfg.warmup + cfg.orders
    return go, time.time_ns() + (start - time.perf_counter_ns())


class SharedCounter:
    """The closed loop's order sequence, shared by the worker processes. One uncontended
    lock (a futex-backed semaphore, no syscall) per order: ~0.6 us against ~60 us of HTTP."""

    def __init__(self, ctx) -> None:
        self._lock = ctx.Lock()
        self._next = ctx.RawValue("q", 0)

    def take(self, end_k: int | None) -> int | None:
        with self._lock:
            k = self._next.value
            if end_k is not None and k >= end_k:
                return None
            self._next.value = k + 1
        return k


def event_loop_factory():
    try:
        import uvloop
    except ImportError:
        return asyncio.new_event_loop, "asyncio"
    return uvloop.new_event_loop, "uvloop"


def run(cfg: Config) -> RunOutcome:
    """Run the load in ``process_count`` processes (in this one when that is 1)."""
    n = process_count(cfg)
    if n == 1:
        return _run_inline(cfg)
    return _run_children(cfg, n)


# ---- one process ------------------------------------------------------------------------


def _run_inline(cfg: Config) -> RunOutcome:
    factory, _ = event_loop_factory()
    with asyncio.Runner(loop_factory=factory) as runner:
        return runner.run(_inline(cfg))


def _phase(cfg: Config, counter=None) -> worker.Phase:
    return worker.Phase(counter, rate=cfg.rate, connections=cfg.connections)


async def _inline(cfg: Config) -> RunOutcome:
    phase = _phase(cfg)
    loop = asyncio.get_running_loop()
    # First SIGINT: stop sending, let answers in flight arrive (bounded by --timeout-ms),
    # write the result. A second SIGINT gets Python's default (KeyboardInterrupt).
    loop.add_signal_handler(signal.SIGINT, lambda: (phase.stop(), loop.remove_signal_handler(signal.SIGINT)))
    started = []

    async def ready():
        go, wall = make_go(cfg)
        started.extend((go.start_ns, wall))
        return go

    share = await worker.run_share(cfg, phase, range(cfg.connections), ready)
    if not phase.stopping:
        loop.remove_signal_handler(signal.SIGINT)
    if not started:  # stopped during warm-up
        started.extend((share.end_ns, time.time_ns()))
    start, wall = started
    return RunOutcome(wall, max(share.end_ns - start, 0) / 1e9, share.tally, phase.stopping, 1)


# ---- several processes ------------------------------------------------------------------


def _encode(hist: HdrHistogram | None) -> bytes | None:
    return None if hist is None or hist.get_total_count() == 0 else hist.encode()


def _decode(data: bytes | None) -> HdrHistogram | None:
    return None if data is None else HdrHistogram.decode(data)


def _child_main(cfg: Config, conns: range, pipe, counter: SharedCounter) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent forwards a stop
    factory, _ = event_loop_factory()
    with asyncio.Runner(loop_factory=factory) as runner:
        share = runner.run(_child(cfg, conns, pipe, counter))
    t = share.tally
    msg = ("done", share.end_ns, t.ok, t.errors)
    msg += tuple(_encode(h) for h in (t.latency, t.uncorrected, t.pacing, t.lateness))
    with contextlib.suppress(OSError):  # the parent is gone: nobody to report to
        pipe.send(msg)


async def _child(cfg: Config, conns: range, pipe, counter: SharedCounter) -> worker.ShareOutcome:
    phase = _phase(cfg, counter)
    loop = asyncio.get_running_loop()
    go = loop.create_future()

    def on_message() -> None:
        try:
            msg = pipe.recv()
        except (EOFError, OSError):  # the parent died: stop
            msg = ("stop",)
        if msg[0] == "stop":
            loop.remove_reader(pipe.fileno())
            phase.stop()
        if not go.done():
            go.set_result(msg[1] if msg[0] == "go" else None)

    loop.add_reader(pipe.fileno(), on_message)

    async def ready():
        pipe.send(("ready",))
        return await go

    share = await worker.run_share(cfg, phase, conns, ready)
    if not phase.stopping:
        loop.remove_reader(pipe.fileno())
    return share


class WorkerDied(RuntimeError):
    pass


def _send_all(pipes: list, msg: tuple) -> None:
    for pipe in pipes:
        with contextlib.suppress(OSError):  # that child has finished (stopped before "go")
            pipe.send(msg)


def _run_children(cfg: Config, n: int) -> RunOutcome:
    ctx = multiprocessing.get_context("fork")  # no re-import: a child starts in milliseconds
    counter = SharedCounter(ctx) if cfg.rate is None else None
    stop = []
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)  # children start ignoring it
    pipes, procs = [], []
    for p in range(n):
        mine, theirs = ctx.Pipe()
        proc = ctx.Process(target=_child_main, args=(cfg, range(p, cfg.connections, n), theirs, counter))
        proc.daemon = True  # never outlive the parent
        proc.start()
        theirs.close()
        pipes.append(mine)
        procs.append(proc)

    def on_sigint(_signum, _frame) -> None:
        stop.append(True)
        signal.signal(signal.SIGINT, signal.SIG_DFL)  # a second SIGINT kills

    signal.signal(signal.SIGINT, on_sigint)
    sent_stop = False

    def collect(what: str) -> list:
        nonlocal sent_stop
        got: dict = {}
        while len(got) < n:
            if stop and not sent_stop:
                sent_stop = True
                _send_all(pipes, ("stop",))
            waiting = [pipe for i, pipe in enumerate(pipes) if i not in got]
            # A short timeout so a SIGINT is forwarded promptly.
            for pipe in multiprocessing.connection.wait(waiting, timeout=0.05):
                i = pipes.index(pipe)
                try:
                    msg = pipe.recv()
                except EOFError:
                    procs[i].join(1)
                    raise WorkerDied(f"worker process {i} died (exit code {procs[i].exitcode})") from None
                assert msg[0] == what, msg
                got[i] = msg
        return [got[i] for i in range(n)]

    collect("ready")
    go, wall = make_go(cfg)
    _send_all(pipes, ("go", go))
    done = collect("done")
    for proc in procs:
        proc.join(5)
    if not stop:
        signal.signal(signal.SIGINT, previous)
    tallies = [
        Tally(_decode(lat) or new_histogram(), _decode(un), _decode(pa), _decode(la), ok, errors)
        for _, _, ok, errors, lat, un, pa, la in done
    ]
    end = max(msg[1] for msg in done)
    tally = merge_tallies(tallies, cfg.rate is not None)
    return RunOutcome(wall, max(end - go.start_ns, 0) / 1e9, tally, bool(stop), n)
