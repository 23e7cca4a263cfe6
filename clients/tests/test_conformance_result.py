"""Each client's result of a small closed-loop run: schema, counts, the server's own count,
the .hlog, the encoded histogram against the stated percentiles, warm-up not recorded.

These start the real binaries but time nothing (a shape, a count, an exit status), so they are
not measuring (conftest.py) and run in make test's parallel pass; the interval log's timing is
test_conformance_intervals.py's, in the serial pass."""

import os

import pytest
from conformance import NO_TIMEOUT, decode, hlog_counts, percentile_agrees, run_client, schema_errors

ORDERS, WARMUP, CONNECTIONS = 400, 50, 4
_runs: dict = {}  # client -> (Run, total_orders the server counted); one run per client


@pytest.fixture
def basic(client, server, tmp_path_factory):
    if client not in _runs:
        server.reset_stats()
        out = tmp_path_factory.mktemp(f"basic-{client}")
        run = run_client(
            client,
            out,
            "--url",
            server.url,
            "--orders",
            str(ORDERS),
            "--warmup",
            str(WARMUP),
            "--connections",
            str(CONNECTIONS),
            "--scenario",
            "conformance",
            "--seed",
            "7",
            *NO_TIMEOUT,
        )
        _runs[client] = (run, server.stats()["total_orders"])
    return _runs[client]


def test_exits_0_and_validates_against_the_schema(basic):
    run, _ = basic
    assert run.returncode == 0, run.stderr
    assert schema_errors(run.doc) == []
    doc = run.doc
    assert (doc["client"], doc["scenario"], doc["mode"]) == (run.client, "conformance", "closed")
    assert (doc["connections"], doc["warmup"]) == (CONNECTIONS, WARMUP)


def test_ok_plus_errors_is_the_orders_asked(basic):
    doc = basic[0].doc
    assert doc["ok"] + doc["errors"] == doc["orders"] == ORDERS
    assert doc["errors"] == sum(doc["error_kinds"].values()) == 0


def test_server_counted_orders_plus_warmup(basic):
    _, total = basic
    assert total == ORDERS + WARMUP


def test_warmup_is_not_recorded(basic):
    doc = basic[0].doc
    assert decode(doc).get_total_count() == doc["ok"], "histogram count must be ok, not ok + warmup"


def test_hlog_is_readable_and_counts_ok(basic):
    run, _ = basic
    assert run.hlog.is_file(), f"no {run.hlog.name} beside {run.output.name}"
    counts = hlog_counts(run.hlog)
    assert counts.get(None) == run.doc["ok"], counts


def test_encoded_histogram_agrees_with_the_percentiles(basic):
    doc = basic[0].doc
    hist = decode(doc)
    for key, pct in (("p50", 50.0), ("p99", 99.0)):
        assert percentile_agrees(hist, pct, doc["latency_us"][key]), (key, doc["latency_us"][key])
    assert (
        doc["latency_us"]["min"]
        <= doc["latency_us"]["p50"]
        <= doc["latency_us"]["p99"]
        <= doc["latency_us"]["max"]
    )


# Measuring (conftest.py): the client is confined to the lowest CPU and must finish within 60 s;
# beside a busy loop on that CPU the parallel pass's SCHED_IDLE client ran past it (a clean
# clone's make test with one core busy, 2026-11-29).
@pytest.mark.measuring
@pytest.mark.parametrize("pooled", ["c", "cpp"])
def test_thread_pool_is_sized_to_the_cpus_the_client_may_use(pooled, server, tmp_path):
    # A runner pins the clients to a few cores: threads beyond those would take turns on
    # one core, and an order waits a whole scheduler time slice behind the other thread.
    one_cpu = {min(os.sched_getaffinity(0))}
    run = run_client(
        pooled,
        tmp_path,
        "--url",
        server.url,
        "--orders",
        "200",
        "--connections",
        "8",
        *NO_TIMEOUT,
        cpus=one_cpu,
    )
    assert run.returncode == 0, run.stderr
    assert run.doc["extra"]["workers"] == 1
    assert run.doc["ok"] == 200
