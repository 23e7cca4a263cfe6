"""send_order's error kinds against an in-process aiohttp server that misbehaves on purpose
(the conformance suite covers the real server)."""

import asyncio
import multiprocessing
import os
import socket
import time

import aiohttp
import pytest
from aiohttp import web
from hft_client.args import parse_args
from hft_client.processes import SharedCounter, process_count
from hft_client.worker import Watchdog, check_reachable, send_order, timed_send


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


def test_shared_counter_hands_out_each_order_once():
    ctx = multiprocessing.get_context("fork")
    counter = SharedCounter(ctx)
    assert [counter.take(3) for _ in range(4)] == [0, 1, 2, None]
    assert counter.take(None) == 3


def test_process_count_is_capped_by_connections_and_open_loop_rate(monkeypatch):
    monkeypatch.delenv("CLIENT_PYTHON_PROCESSES", raising=False)
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: {0, 1, 2, 3})
    assert process_count(parse_args([])) == 4
    assert process_count(parse_args(["--connections", "2"])) == 2
    assert process_count(parse_args(["--rate", "1000"])) == 1
    assert process_count(parse_args(["--rate", "20000"])) == 3
    monkeypatch.setenv("CLIENT_PYTHON_PROCESSES", "1")
    assert process_count(parse_args([])) == 1
