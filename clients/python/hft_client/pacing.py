"""Open-loop pacing (clients/README.md, "Measuring"): order i of the run, warm-up included,
is due at t0 + i / R, and the connection that sends it waits for that time.

asyncio's timers are too coarse for the contract's 50 us: under uvloop ``asyncio.sleep``
woke 0.4 ms early to 1.24 ms late (400 sleeps of 2.3-3.1 ms, 2026-11-22). So a worker sleeps
until 2 ms before the due time, then spins with
``await asyncio.sleep(0)``, which yields to the other workers on each turn, so every
spinning worker keeps the loop moving. The pacing error actually achieved is measured
per order (see worker.py) and reported in the result's ``extra.pacing_error_us``.
"""

import asyncio
import itertools
import time
from collections.abc import Iterable

# Sleep with the event loop's timer only while the due time is further than this away;
# the rest is spun. It must exceed the timer's worst lateness: with 1 ms, 3 of 10 runs at
# 1,000/s woke past due often enough for a pacing error p90 of 200-310 us (which phase a
# run's schedule has against the loop's millisecond clock decides it); with 2 ms, 8 of 8
# runs had p90 <= 7 us.
SPIN_WINDOW_NS = 2_000_000
# Longest single timer sleep, so a stop request (SIGINT) is seen within this time.
MAX_SLEEP_S = 0.05


def intended_ns(t0_ns: int, i: int, rate: float) -> int:
    """Intended send time of order i (0-based, warm-up included) at ``rate`` orders/s."""
    return t0_ns + round(i * 1e9 / rate)


def orders_of_worker(worker: int, connections: int, end: int | None) -> Iterable[int]:
    """The order indices below ``end`` (None = unbounded, for --duration) that worker
    ``worker`` of ``connections`` sends: order i goes to connection i mod C, which spreads
    the schedule evenly over the connections."""
    if end is None:
        return itertools.count(worker, connections)
    return range(worker, end, connections)


async def wait_until(due_ns: int, phase) -> bool:
    """Return at (or just after) monotonic time ``due_ns``, at once when it is past;
    False when ``phase.stopping`` became true while waiting."""
    while True:
        ahead = due_ns - time.perf_counter_ns() - SPIN_WINDOW_NS
        if ahead <= 0:
            break
        await asyncio.sleep(min(ahead / 1e9, MAX_SLEEP_S))
        if phase.stopping:
            return False
    while time.perf_counter_ns() < due_ns:
        await asyncio.sleep(0)
    return not phase.stopping
