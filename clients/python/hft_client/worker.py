"""Workers: one coroutine per connection, each recording into its own HdrHistograms, inside
one worker process (its share of the connections, see processes.py); then the merge
(clients/README.md, "Measuring").

Closed loop takes every order index k from one counter shared by all processes: warm-up
(orders 0..W-1), then the measured phase, so ``duration_s`` covers measured orders only.
Open loop runs one schedule over warm-up and measured orders together (order i is due at
t0 + i/R and goes to connection i mod C); a barrier between the phases would delay a free
connection behind a slow one, which is the coordinated omission the open loop exists to
avoid.
"""

import asyncio
import os
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


class LocalCounter:
    """The closed loop's order sequence when one process sends everything."""

    def __init__(self) -> None:
        self.next_k = 0

    def take(self, end_k: int | None) -> int | None:
        k = self.next_k
        if end_k is not None and k >= end_k:
            return None
        self.next_k = k + 1
        return k


class Control:
    """Shared by the workers of one process: where the closed loop takes its next order,
    where it stops (order index or monotonic deadline), and the stop flag."""

    def __init__(self, counter=None) -> None:
        self.counter = counter if counter is not None else LocalCounter()
        self.end_k: int | None = None  # closed loop: stop at this order index
        self.deadline_ns: int | None = None  # --duration: stop sending at this monotonic time
        self.stopping = False

    def stop(self) -> None:
        self.stopping = True


async def send_order(session: aiohttp.ClientSession, url: str, body: bytes) -> str | None:
    """POST one order and read the whole answer; None when it got HTTP 200, else the error kind."""
    try:
        async with session.post(url, data=body) as resp:
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


class Watchdog:
    """--timeout-ms for all requests of one process with one timer, in place of aiohttp's
    per-request timeout (its timer handle and context cost ~10 us of the ~70 us a request
    takes). Each worker notes when its request started; a sweep every timeout/10 cancels
    the requests out for longer than the timeout, so one times out between T and 1.1 T.
    The worker turns that cancellation into the error kind "timeout"."""

    def __init__(self, workers: int, timeout_ms: int) -> None:
        self.started = [0] * workers  # monotonic ns its request started; 0 = none out
        self.fired = [False] * workers  # the sweep cancelled its request
        self.tasks: list = [None] * workers
        self.timeout_ns = timeout_ms * 1_000_000
        self.tick_s = max(timeout_ms / 10, 1) / 1000

    async def run(self) -> None:
        """Sweep until cancelled."""
        while True:
            await asyncio.sleep(self.tick_s)
            limit = time.perf_counter_ns() - self.timeout_ns
            for i, t in enumerate(self.started):
                if t and t <= limit and not self.fired[i]:
                    self.fired[i] = True
                    self.tasks[i].cancel()


async def timed_send(session, url, body: bytes, wd: Watchdog, i: int, start: int) -> str | None:
    """send_order for worker ``i`` under the watchdog; the request started at ``start``."""
    wd.started[i] = start
    try:
        return await send_order(session, url, body)
    except asyncio.CancelledError:
        if not wd.fired[i]:
            raise  # a real cancellation
        wd.fired[i] = False
        wd.tasks[i].uncancel()
        return "timeout"
    finally:
        wd.started[i] = 0


def _count(stats: WorkerStats, kind: str | None) -> bool:
    if kind is None:
        stats.ok += 1
        return True
    stats.errors[kind] += 1
    return False


async def closed_worker(
    session, cfg: Config, ctl: Control, stats: WorkerStats | None, wd: Watchdog, i: int
) -> None:
    """Send the next order as soon as the previous answer is read; record unless warm-up."""
    url, seed, stamp, clock = URL(cfg.order_url), cfg.seed, UtcStamp(), time.perf_counter_ns
    take = ctl.counter.take
    wd.tasks[i] = asyncio.current_task()
    while not ctl.stopping:
        if ctl.deadline_ns is not None and clock() >= ctl.deadline_ns:
            return
        k = take(ctl.end_k)
        if k is None:
            return
        body = (body_prefix(seed, k) + stamp.now() + '"}').encode()
        start = clock()
        kind = await timed_send(session, url, body, wd, i, start)
        end = clock()
        if stats is not None and _count(stats, kind):
            stats.latency.record_value(max(end - start, 1))


async def open_worker(
    session, cfg: Config, ctl: Control, stats: WorkerStats, orders: range, t0: int, wd: Watchdog, w: int
) -> None:
    """Send each order of ``orders`` at its intended time (late if the previous one is still
    out, never skipped); record latency from the intended time and from the actual send."""
    url, seed, stamp, clock = URL(cfg.order_url), cfg.seed, UtcStamp(), time.perf_counter_ns
    wd.tasks[w] = asyncio.current_task()
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
        kind = await timed_send(session, url, body, wd, w, start)
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


@dataclass
class Go:
    """The coordinator's start signal for the measured phase (monotonic ns; processes.py)."""

    start_ns: int  # closed loop: start of the measured phase
    end_k: int | None = None  # closed loop: stop at this order index (--orders)
    deadline_ns: int | None = None  # --duration: stop sending at this time
    t0_ns: int | None = None  # open loop: intended time of order 0


@dataclass
class ShareOutcome:
    """What one worker process measured over its connections, merged."""

    end_ns: int  # monotonic time its last answer was read
    ok: int
    errors: dict
    latency: HdrHistogram
    uncorrected: HdrHistogram | None
    pacing: HdrHistogram | None


def session_for(connections: int) -> aiohttp.ClientSession:
    """One session whose connector holds at most ``connections`` keep-alive connections.
    No aiohttp timeout: the Watchdog applies --timeout-ms (connect included)."""
    connector = aiohttp.TCPConnector(limit=connections, limit_per_host=connections)
    return aiohttp.ClientSession(
        connector=connector,
        timeout=aiohttp.ClientTimeout(total=None, connect=None, sock_connect=None, sock_read=None),
        headers=HEADERS,  # merged once per request from the session, not passed in each call
        # Nothing the server needs: no User-Agent, and no compression asked or decoded.
        skip_auto_headers=("User-Agent", "Accept-Encoding"),
        auto_decompress=False,
        cookie_jar=aiohttp.DummyCookieJar(),  # the server sets no cookies; skip the jar per request
    )


async def run_share(cfg: Config, ctl: Control, conns: range, ready) -> ShareOutcome:
    """Run the connections ``conns`` (global indices 0..C-1) of this process. Closed loop:
    warm up (orders from the shared counter), then ``await ready()`` returns the ``Go`` of
    the measured phase (None: stopped before it). Open loop: ``ready()`` returns t0 first."""
    workers = [WorkerStats() for _ in conns]
    wd = Watchdog(len(conns), cfg.timeout_ms)
    sweeper = asyncio.create_task(wd.run())
    end = time.perf_counter_ns()
    async with session_for(len(conns)) as session:
        if cfg.rate is None:
            ctl.end_k = cfg.warmup
            await asyncio.gather(*(closed_worker(session, cfg, ctl, None, wd, i) for i in range(len(conns))))
            go = await ready()
            if go is not None and not ctl.stopping:
                ctl.end_k, ctl.deadline_ns = go.end_k, go.deadline_ns
                measured = (closed_worker(session, cfg, ctl, w, wd, i) for i, w in enumerate(workers))
                await asyncio.gather(*measured)
        else:
            for w in workers:
                w.uncorrected, w.pacing = new_histogram(), new_histogram()
            go = await ready()
            if go is not None and not ctl.stopping:
                ctl.deadline_ns = go.deadline_ns
                end_i = None if cfg.duration_s is not None else cfg.warmup + cfg.orders
                schedules = [pacing.orders_of_worker(j, cfg.connections, end_i) for j in conns]
                await asyncio.gather(
                    *(
                        open_worker(session, cfg, ctl, w, orders, go.t0_ns, wd, i)
                        for i, (w, orders) in enumerate(zip(workers, schedules, strict=True))
                    )
                )
        end = time.perf_counter_ns()
    sweeper.cancel()
    open_loop = cfg.rate is not None
    return ShareOutcome(
        end_ns=end,
        ok=sum(w.ok for w in workers),
        errors={k: sum(w.errors[k] for w in workers) for k in ERROR_KINDS},
        latency=merge([w.latency for w in workers]),
        uncorrected=merge([w.uncorrected for w in workers]) if open_loop else None,
        pacing=merge([w.pacing for w in workers]) if open_loop else None,
    )


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
