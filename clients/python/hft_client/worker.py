"""Workers: one coroutine per connection, each recording into its own ``stats.Tally``, inside
one worker process (its share of the connections, see runner.py). Every worker runs the one
loop ``worker_loop`` over the tickets of its ``Phase`` (clients/README.md, "Measuring").

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
from collections.abc import Iterator
from dataclasses import dataclass

import aiohttp
from yarl import URL  # parsed once per worker, not once per request

from . import pacing
from .args import Config
from .order import UtcStamp, body_prefix
from .stats import Tally, merge_tallies

HEADERS = {"Content-Type": "application/json"}


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


class Phase:
    """Shared by the workers of one process, set before each phase: its ticket source (the
    closed loop's counter, or the open loop's schedule), where it ends (order index or
    monotonic deadline), and the stop flag (SIGINT), which lasts over the phases."""

    def __init__(self, counter=None, *, rate: float | None = None, connections: int = 1) -> None:
        self.counter = counter if counter is not None else LocalCounter()
        self.rate = rate  # open loop: orders/s; None = closed loop
        self.connections = connections  # open loop: order i goes to connection i mod C
        self.t0_ns: int | None = None  # open loop: intended send time of order 0
        self.end_k: int | None = None  # stop at this order index (None: --duration)
        self.deadline_ns: int | None = None  # --duration: no order starts (is due) at or after it
        self.stopping = False

    def stop(self) -> None:
        self.stopping = True

    def tickets(self, conn: int) -> Iterator[tuple[int, int | None]]:
        """The orders connection ``conn`` (0..C-1) sends in this phase, as (k, intended send
        time in monotonic ns, None in closed loop): the shared counter's next numbers, or,
        in open loop, the connection's orders of the schedule."""
        if self.rate is None:
            return self._counted()
        return self._scheduled(conn)

    def _counted(self) -> Iterator[tuple[int, None]]:
        take, end_k, deadline, clock = self.counter.take, self.end_k, self.deadline_ns, time.perf_counter_ns
        while not self.stopping:
            if deadline is not None and clock() >= deadline:
                return
            k = take(end_k)
            if k is None:
                return
            yield k, None

    def _scheduled(self, conn: int) -> Iterator[tuple[int, int]]:
        t0, rate, deadline = self.t0_ns, self.rate, self.deadline_ns
        for i in pacing.orders_of_worker(conn, self.connections, self.end_k):
            due = pacing.intended_ns(t0, i, rate)
            if deadline is not None and due >= deadline:
                return
            yield i, due


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


async def worker_loop(
    session, cfg: Config, phase: Phase, tally: Tally | None, wd: Watchdog, w: int, conn: int
) -> None:
    """The one worker loop, closed and open alike: for each ticket (k, due) of connection
    ``conn``, wait for ``due`` (open loop; late if the previous answer is still out, never
    skipped), send order k, read the answer, and record into ``tally`` unless it is None
    (closed-loop warm-up) or k is a warm-up order (open loop). Closed loop records latency
    from the send; open loop from the intended time, and from the actual send apart."""
    url, seed, stamp, clock = URL(cfg.order_url), cfg.seed, UtcStamp(), time.perf_counter_ns
    wd.tasks[w] = asyncio.current_task()
    warmup = cfg.warmup
    for k, due in phase.tickets(conn):
        prefix = body_prefix(seed, k)
        was_free = False
        if due is not None:
            was_free = clock() < due
            if not await pacing.wait_until(due, phase):
                return
        body = (prefix + stamp.now() + '"}').encode()
        start = clock()
        kind = await timed_send(session, url, body, wd, w, start)
        end = clock()
        if tally is None or k < warmup:
            continue
        if due is not None:
            # Send lateness: every measured order, sent or failed, free connection or busy.
            tally.lateness.record_value(max(start - due, 0))
            if was_free:
                tally.pacing.record_value(max(start - due, 1))
        if tally.count(kind):
            if due is None:
                tally.latency.record_value(max(end - start, 1))
            else:
                tally.latency.record_value(max(end - due, 1))
                tally.uncorrected.record_value(max(end - start, 1))


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
    """The coordinator's start signal for the measured phase (monotonic ns; runner.py)."""

    start_ns: int  # closed loop: start of the measured phase
    end_k: int | None = None  # closed loop: stop at this order index (--orders)
    deadline_ns: int | None = None  # --duration: stop sending at this time
    t0_ns: int | None = None  # open loop: intended time of order 0


@dataclass
class ShareOutcome:
    """What one worker process measured over its connections, merged."""

    end_ns: int  # monotonic time its last answer was read
    tally: Tally


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


async def run_share(cfg: Config, phase: Phase, conns: range, ready) -> ShareOutcome:
    """Run the connections ``conns`` (global indices 0..C-1) of this process. Closed loop:
    warm up (orders from the shared counter), then ``await ready()`` returns the ``Go`` of
    the measured phase (None: stopped before it). Open loop: ``ready()`` returns t0 first,
    and one phase covers warm-up and measured orders."""
    open_loop = cfg.rate is not None
    tallies = [Tally.for_mode(open_loop) for _ in conns]
    wd = Watchdog(len(conns), cfg.timeout_ms)
    sweeper = asyncio.create_task(wd.run())

    async def run_phase(record: bool) -> None:
        loops = (
            worker_loop(session, cfg, phase, tally if record else None, wd, w, conn)
            for w, (conn, tally) in enumerate(zip(conns, tallies, strict=True))
        )
        await asyncio.gather(*loops)

    end = time.perf_counter_ns()
    async with session_for(len(conns)) as session:
        if not open_loop:
            phase.end_k = cfg.warmup
            await run_phase(record=False)
        go = await ready()
        if go is not None and not phase.stopping:
            phase.t0_ns, phase.end_k, phase.deadline_ns = go.t0_ns, go.end_k, go.deadline_ns
            await run_phase(record=True)
        end = time.perf_counter_ns()
    sweeper.cancel()
    return ShareOutcome(end_ns=end, tally=merge_tallies(tallies, open_loop))
