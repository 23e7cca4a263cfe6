"""send_order's error kinds against an in-process aiohttp server that misbehaves on purpose
(the conformance suite covers the real server); the tickets of a phase and the one worker loop."""

import asyncio
import socket
import time

import aiohttp
import pytest
from aiohttp import web
from hft_client.args import parse_args
from hft_client.stats import Tally
from hft_client.worker import (
    Phase,
    Watchdog,
    check_reachable,
    send_order,
    session_for,
    timed_send,
    worker_loop,
)

# measuring: the Python client's timeouts (0.1-0.5 s, the 1 s default), timed for real
pytestmark = pytest.mark.measuring


async def _serve(handler):
    app = web.Application()
    app.router.add_post("/order", handler)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]
    return runner, f"http://127.0.0.1:{port}/order"


async def _ok(request):
    await request.read()
    return web.json_response({"status": "accepted"})


async def _bad_request(request):
    return web.json_response({"error": "bad price", "field": "price"}, status=400)


async def _server_error(request):
    return web.Response(status=503)


async def _slow(request):
    await asyncio.sleep(1)
    return web.Response()


async def _hang_up(request):
    request.transport.close()  # a broken connection mid-answer
    await asyncio.sleep(0.1)
    return web.Response()


@pytest.mark.timeout(20)
@pytest.mark.parametrize(
    ("handler", "kind"),
    [
        (_ok, None),
        (_bad_request, "http_4xx"),
        (_server_error, "http_5xx"),
        (_slow, "timeout"),
        (_hang_up, "other"),
    ],
    ids=["ok", "4xx", "5xx", "timeout", "hang-up"],
)
def test_send_order_classifies_the_answer(handler, kind):
    async def scenario():
        runner, url = await _serve(handler)
        try:
            async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=0.2)) as session:
                return await send_order(session, url, b"{}")
        finally:
            await runner.cleanup()

    assert asyncio.run(scenario()) == kind


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.timeout(20)
def test_refused_connection_is_connect_and_unreachable():
    url = f"http://127.0.0.1:{_free_port()}"

    async def scenario():
        async with aiohttp.ClientSession() as session:
            return await send_order(session, url + "/order", b"{}")

    assert asyncio.run(scenario()) == "connect"
    assert asyncio.run(check_reachable(parse_args(["--url", url]))) == "connection refused"


@pytest.mark.timeout(20)
def test_watchdog_times_out_a_slow_answer_and_the_worker_goes_on():
    async def scenario():
        runner, url = await _serve(_slow)
        wd = Watchdog(1, timeout_ms=100)
        sweeper = asyncio.create_task(wd.run())
        try:
            async with aiohttp.ClientSession() as session:
                wd.tasks[0] = asyncio.current_task()
                t0 = time.perf_counter()
                kind = await timed_send(session, url, b"{}", wd, 0, time.perf_counter_ns())
                took = time.perf_counter() - t0
                await asyncio.sleep(0)  # the task is not left cancelled
                return kind, took
        finally:
            sweeper.cancel()
            await runner.cleanup()

    kind, took = asyncio.run(scenario())
    assert kind == "timeout"
    assert 0.1 <= took < 0.5


def test_closed_loop_tickets_come_from_the_counter_up_to_the_end_or_a_stop():
    phase = Phase()
    phase.end_k = 3
    assert list(phase.tickets(0)) == [(0, None), (1, None), (2, None)]
    phase.end_k = None
    tickets = phase.tickets(0)
    assert next(tickets) == (3, None)
    phase.stop()
    assert list(tickets) == []


def test_closed_loop_tickets_end_at_the_deadline():
    phase = Phase()
    phase.deadline_ns = time.perf_counter_ns() - 1
    assert list(phase.tickets(0)) == []


def test_open_loop_tickets_are_the_connections_orders_with_their_due_times():
    phase = Phase(rate=1000.0, connections=3)
    phase.t0_ns, phase.end_k = 100, 8
    assert list(phase.tickets(1)) == [(1, 1_000_100), (4, 4_000_100), (7, 7_000_100)]
    phase.end_k, phase.deadline_ns = None, 6_000_100  # --duration: nothing due at or after it
    assert list(phase.tickets(0)) == [(0, 100), (3, 3_000_100)]


async def _one_loop(argv: list, phase: Phase, record: bool) -> Tally:
    runner, url = await _serve(_ok)
    try:
        cfg = parse_args(["--url", url.removesuffix("/order"), "--connections", "1", *argv])
        tally = Tally.for_mode(cfg.rate is not None)
        wd = Watchdog(1, cfg.timeout_ms)
        sweeper = asyncio.create_task(wd.run())
        async with session_for(1) as session:
            await worker_loop(session, cfg, phase, tally if record else None, wd, 0, 0)
        sweeper.cancel()
        return tally
    finally:
        await runner.cleanup()


@pytest.mark.timeout(20)
def test_worker_loop_closed_records_each_measured_order_once():
    phase = Phase()
    phase.end_k = 4  # warm-up
    warm = asyncio.run(_one_loop(["--warmup", "4", "--orders", "6"], phase, record=False))
    assert (warm.ok, warm.latency.get_total_count(), phase.counter.next_k) == (0, 0, 4)
    phase.end_k = 10
    measured = asyncio.run(_one_loop(["--warmup", "4", "--orders", "6"], phase, record=True))
    assert (measured.ok, measured.latency.get_total_count(), sum(measured.errors.values())) == (6, 6, 0)
    assert phase.counter.next_k == 10


@pytest.mark.timeout(20)
def test_worker_loop_open_skips_warmup_and_records_from_the_intended_time():
    phase = Phase(rate=500.0, connections=1)
    # A schedule 100 ms in the past: every order is sent late, so its latency from the
    # intended time is at least 100 ms - 4 * 2 ms, and no send counts as paced.
    phase.t0_ns, phase.end_k = time.perf_counter_ns() - 100_000_000, 5
    t = asyncio.run(_one_loop(["--warmup", "2", "--orders", "3", "--rate", "500"], phase, record=True))
    assert (t.ok, t.latency.get_total_count(), t.uncorrected.get_total_count()) == (3, 3, 3)
    assert t.latency.get_min_value() >= 91_000_000
    assert t.pacing.get_total_count() == 0
    # Send lateness: every measured order, each sent at least 100 ms - 4 * 2 ms after its time.
    assert t.lateness.get_total_count() == 3 and t.lateness.get_min_value() >= 91_000_000
