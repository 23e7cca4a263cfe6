"""The open-loop schedule: intended times and the split of orders over connections."""

import asyncio
import itertools
import time

from hft_client import pacing
from hft_client.worker import Phase


def test_intended_times_step_by_one_over_rate():
    assert [pacing.intended_ns(100, i, 1000.0) for i in range(3)] == [100, 1_000_100, 2_000_100]
    assert pacing.intended_ns(0, 3, 3.0) == 1_000_000_000


def test_every_order_goes_to_exactly_one_connection():
    parts = [list(pacing.orders_of_worker(w, 3, 10)) for w in range(3)]
    assert parts == [[0, 3, 6, 9], [1, 4, 7], [2, 5, 8]]
    assert sorted(itertools.chain(*parts)) == list(range(10))
    assert list(itertools.islice(pacing.orders_of_worker(1, 4, None), 3)) == [1, 5, 9]


def test_wait_until_never_returns_early_and_stops_on_request():
    ctl = Phase()

    async def scenario():
        due = time.perf_counter_ns() + 3_000_000
        assert await pacing.wait_until(due, ctl)
        returned = time.perf_counter_ns()
        ctl.stop()
        stopped = await pacing.wait_until(time.perf_counter_ns() + 10**10, ctl)
        return due, returned, stopped

    due, returned, stopped = asyncio.run(scenario())
    assert returned >= due and stopped is False
