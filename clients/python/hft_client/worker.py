"""Workers: one coroutine per connection, each recording into its own HdrHistograms; then
the merge (clients/README.md, "Measuring").

Closed loop runs two phases over one shared order counter: warm-up (orders 0..W-1), then
the measured phase, so ``duration_s`` covers measured orders only. Open loop runs one
schedule over warm-up and measured orders together (order i is due at t0 + i/R and goes
to connection i mod C); a barrier between the phases would delay a free connection
behind a slow one, which is the coordinated omission the open loop exists to avoid.
"""

import asyncio
import os
import signal
import time
from dataclasses import dataclass, field

import aiohttp
from hdrh.histogram import HdrHistogram
from yarl import URL  # parsed once per worker, not once per request

from . import pacing
from .args import Config
from .order import UtcStamp, body_prefix

ERROR_KINDS = ("connect", "timeout", "http_4xx", "http_5xx", "other")
HEADERS = {"Content-Type": "application/json"}


def new_histogram() -> HdrHistogram:
    """Nanoseconds, 1 ns .. 60 s, 3 significant digits, as every client (clients/README.md)."""
    return HdrHistogram(1, 60_000_000_000, 3)


@dataclass
class WorkerStats:
    """What one worker measured; only its own coroutine writes it (no lock needed)."""

    latency: HdrHistogram = field(default_factory=new_histogram)  # open loop: from the intended time
    uncorrected: HdrHistogram | None = None  # open loop: from the actual send
    pacing: HdrHistogram | None = None  # open loop: actual send - intended, when the connection was free
    ok: int = 0
    errors: dict = field(default_factory=lambda: dict.fromkeys(ERROR_KINDS, 0))


@dataclass
class RunOutcome:
    """Everything result.py needs from a run."""

    started_wall_ns: int  # wall clock at the start of the measured phase
    duration_s: float  # wall time of the measured phase
    workers: list  # list[WorkerStats]
    interrupted: bool  # SIGINT ended the run early


class Control:
    """Shared by the workers: the next order of the closed loop, the deadline, and the stop flag."""

    def __init__(self) -> None:
        self.next_k = 0
        self.end_k: int | None = None  # closed loop: stop at this order index
        self.deadline_ns: int | None = None  # --duration: stop sending at this monotonic time
        self.stopping = False

    def stop(self) -> None:
        self.stopping = True


async def send_order(session: aiohttp.ClientSession, url: str, body: bytes) -> str | None:
    """POST one order and read the whole answer; None when it got HTTP 200, else the error kind."""
    try:
        async with session.post(url, data=body, headers=HEADERS) as resp:
            await resp.read()
            status = resp.status
    except TimeoutError:
        return "timeout"
    except aiohttp.ClientConnectorError:
        return "connect"
    except (aiohttp.ClientError, OSError):
        return "other"
    if status == 200:
        return None
    if 400 <= status < 500:
        return "http_4xx"
    if 500 <= status < 600:
        return "http_5xx"
    return "other"


def _count(stats: WorkerStats, kind: str | None) -> bool:
    if kind is None:
        stats.ok += 1
        return True
    stats.errors[kind] += 1
    return False


async def closed_worker(session, cfg: Config, ctl: Control, stats: WorkerStats | None) -> None:
    """Send the next order as soon as the previous answer is read; record unless warm-up."""
    url, seed, stamp, clock = URL(cfg.order_url), cfg.seed, UtcStamp(), time.perf_counter_ns
    while not ctl.stopping:
        k = ctl.next_k
        if ctl.end_k is not None and k >= ctl.end_k:
            return
        if ctl.deadline_ns is not None and clock() >= ctl.deadline_ns:
            return
        ctl.next_k = k + 1
        body = (body_prefix(seed, k) + stamp.now() + '"}').encode()
        start = clock()
        kind = await send_order(session, url, body)
        end = clock()
        if stats is not None and _count(stats, kind):
            stats.latency.record_value(max(end - start, 1))


async def open_worker(session, cfg: Config, ctl: Control, stats: WorkerStats, orders: range, t0: int) -> None:
    """Send each order of ``orders`` at its intended time (late if the previous one is still
    out, never skipped); record latency from the intended time and from the actual send."""
    url, seed, stamp, clock = URL(cfg.order_url), cfg.seed, UtcStamp(), time.perf_counter_ns
    rate, warmup = cfg.rate, cfg.warmup
    for i in orders:
        due = pacing.intended_ns(t0, i, rate)
        if ctl.deadline_ns is not None and due >= ctl.deadline_ns:
            return
        prefix = body_prefix(seed, i)
        was_free = clock() < due
        if not await pacing.wait_until(due, ctl):
            return
        body = (prefix + stamp.now() + '"}').encode()
        start = clock()
        kind = await send_order(session, url, body)
        end = clock()
        if i < warmup:
            continue
        if was_free:
            stats.pacing.record_value(max(start - due, 1))
        if _count(stats, kind):
            stats.latency.record_value(max(end - due, 1))
            stats.uncorrected.record_value(max(end - start, 1))


async def check_reachable(cfg: Config, timeout_s: float = 1.5) -> str | None:
    """None when a TCP connection to the server opens, else the reason (for the exit-2 line)."""
    host, port = cfg.host_port
    try:
        _, writer = await asyncio.wait_for(asyncio.open_connection(host, port), timeout_s)
    except TimeoutError:
        return f"no answer within {timeout_s:.1f} s"
    except OSError as err:
        # asyncio's strerror is "Connect call failed (...)"; the errno text names the cause.
        return (os.strerror(err.errno) if err.errno else str(err)).lower()
    writer.close()
    return None


async def run_load(cfg: Config) -> RunOutcome:
    """Run warm-up and the measured phase; the caller has checked the server is reachable."""
    ctl = Control()
    loop = asyncio.get_running_loop()
    # First SIGINT: stop sending, let answers in flight arrive (bounded by --timeout-ms),
    # write the result. A second SIGINT gets Python's default (KeyboardInterrupt).
    loop.add_signal_handler(signal.SIGINT, lambda: (ctl.stop(), loop.remove_signal_handler(signal.SIGINT)))
    n = cfg.connections
    connector = aiohttp.TCPConnector(limit=n, limit_per_host=n)
    timeout = aiohttp.ClientTimeout(total=cfg.timeout_ms / 1000)
    workers = [WorkerStats() for _ in range(n)]
    session = aiohttp.ClientSession(
        connector=connector,
        timeout=timeout,
        skip_auto_headers=("User-Agent",),
        cookie_jar=aiohttp.DummyCookieJar(),  # the server sets no cookies; skip the jar per request
    )
    async with session:
        if cfg.rate is None:
            ctl.end_k = cfg.warmup
            await asyncio.gather(*(closed_worker(session, cfg, ctl, None) for _ in range(n)))
            started_wall, start = time.time_ns(), time.perf_counter_ns()
            if cfg.duration_s is not None:
                ctl.end_k, ctl.deadline_ns = None, start + round(cfg.duration_s * 1e9)
            else:
                ctl.end_k = cfg.warmup + cfg.orders
            await asyncio.gather(*(closed_worker(session, cfg, ctl, w) for w in workers))
        else:
            for w in workers:
                w.uncorrected, w.pacing = new_histogram(), new_histogram()
            t0 = time.perf_counter_ns() + 1_000_000  # 1 ms to get every worker started
            start = pacing.intended_ns(t0, cfg.warmup, cfg.rate)
            started_wall = time.time_ns() + (start - time.perf_counter_ns())
            if cfg.duration_s is not None:
                ctl.deadline_ns, end_i = start + round(cfg.duration_s * 1e9), None
            else:
                end_i = cfg.warmup + cfg.orders
            await asyncio.gather(
                *(
                    open_worker(session, cfg, ctl, w, pacing.orders_of_worker(j, n, end_i), t0)
                    for j, w in enumerate(workers)
                )
            )
        end = time.perf_counter_ns()
    if not ctl.stopping:
        loop.remove_signal_handler(signal.SIGINT)
    return RunOutcome(started_wall, max(end - start, 0) / 1e9, workers, ctl.stopping)


def merge(histograms: list) -> HdrHistogram:
    """Sum of the non-empty histograms. hdrh's ``add`` takes min() with an empty histogram's
    min of 0, so the merge starts from a decoded copy of the first non-empty one."""
    filled = [h for h in histograms if h is not None and h.get_total_count() > 0]
    if not filled:
        return new_histogram()
    merged = HdrHistogram.decode(filled[0].encode())
    for h in filled[1:]:
        merged.add(h)
    return merged
