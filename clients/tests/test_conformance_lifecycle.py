"""Runs that end badly still leave a result: a server killed mid-run, and SIGINT."""

import signal

import pytest
from conformance import decode, finish, schema_errors, start_client

# measuring: starts the real binaries and times them (root conftest.py)
pytestmark = [pytest.mark.measuring, pytest.mark.timeout(60)]


def test_server_killed_mid_run_counts_failures_and_exits_1(client, own_server, tmp_path):
    own_server.reset_stats()
    # --duration bounds the run (and the failed attempts after the kill) to 2 s.
    args = (
        "--url",
        own_server.url,
        "--duration",
        "2",
        "--warmup",
        "20",
        "--connections",
        "4",
        "--timeout-ms",
        "200",
    )
    started = start_client(client, tmp_path, *args)
    own_server.wait_for_orders(200, timeout_s=20)
    own_server.send_signal(signal.SIGKILL)
    run = finish(client, started, timeout_s=30)
    assert run.returncode == 1, f"exit {run.returncode}: {run.stderr}"
    doc = run.doc
    assert schema_errors(doc) == []
    assert doc["ok"] > 0 and doc["errors"] > 0
    assert doc["ok"] + doc["errors"] == doc["orders"]
    assert doc["errors"] == sum(doc["error_kinds"].values())
    assert decode(doc).get_total_count() == doc["ok"]


def test_sigint_writes_the_result_so_far(client, server, tmp_path):
    server.reset_stats()
    # --duration bounds the run should SIGINT be ignored; the test expects it to end far sooner.
    started = start_client(client, tmp_path, "--url", server.url, "--duration", "20", "--connections", "4")
    server.wait_for_orders(300, timeout_s=20)
    started[0].send_signal(signal.SIGINT)
    run = finish(client, started, timeout_s=10)
    doc = run.doc
    assert schema_errors(doc) == []
    assert doc.get("interrupted") is True
    assert run.returncode == (1 if doc["errors"] else 0), run.stderr
    assert doc["ok"] > 0 and doc["ok"] + doc["errors"] == doc["orders"]
    assert decode(doc).get_total_count() == doc["ok"]
    assert doc["duration_s"] < 20
