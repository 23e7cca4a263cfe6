"""The runner's pieces that need no server: the shared order counter and the process count."""

import multiprocessing
import os

from hft_client.args import parse_args
from hft_client.runner import SharedCounter, process_count


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
