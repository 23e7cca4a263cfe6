"""Send lateness (clients/README.md, "The result"): an open-loop result carries
`send_lateness_us` and `send_lateness_histogram` (actual send minus intended send, one value
per measured order), a closed-loop result carries neither. What is checked is what the
design guarantees, never how fast this machine is: the fields are there exactly in open loop,
the lateness is never negative, one value per measured order, and, since an order's corrected
latency is its lateness plus its uncorrected latency, no percentile of the lateness exceeds
the same percentile of the corrected latency when every order succeeded."""

from conformance import NO_TIMEOUT, decode, percentile_agrees, run_client, schema_errors

OPEN_ARGS = ("--rate", "500", "--orders", "300", "--warmup", "30", "--connections", "2", *NO_TIMEOUT)
CLOSED_ARGS = ("--orders", "100", "--warmup", "10", "--connections", "2", *NO_TIMEOUT)
KEYS = ("min", "p50", "p90", "p95", "p99", "p999", "p9999", "max")
HDR = 1e-3  # 3 significant digits: two values of one bucket differ by up to 0.1 %


def test_open_loop_result_carries_send_lateness(client, server, tmp_path):
    run = run_client(client, tmp_path, "--url", server.url, *OPEN_ARGS)
    assert run.returncode == 0, run.stderr
    doc = run.doc
    assert schema_errors(doc) == []
    assert doc["mode"] == "open"
    assert "send_lateness_us" in doc and "send_lateness_histogram" in doc, sorted(doc)
    late, corrected = doc["send_lateness_us"], doc["latency_us"]
    hist = decode(doc, "send_lateness_histogram")
    assert doc["send_lateness_histogram"]["unit"] == "ns"
    assert hist.get_total_count() == doc["orders"], "one lateness per measured order, warm-up not recorded"
    assert all(late[k] is not None and late[k] >= 0 for k in KEYS), late
    assert late["min"] <= late["p50"] <= late["p99"] <= late["max"], late
    for key, pct in (("p50", 50.0), ("p99", 99.0)):
        assert percentile_agrees(hist, pct, late[key]), (key, late[key])
    assert doc["errors"] == 0
    for key in ("p50", "p99", "max"):
        assert late[key] <= corrected[key] * (1 + HDR) + 0.001, (key, late[key], corrected[key])


def test_closed_loop_result_has_no_send_lateness(client, server, tmp_path):
    run = run_client(client, tmp_path, "--url", server.url, *CLOSED_ARGS)
    assert run.returncode == 0, run.stderr
    doc = run.doc
    assert schema_errors(doc) == []
    assert doc["mode"] == "closed"
    assert "send_lateness_us" not in doc and "send_lateness_histogram" not in doc, sorted(doc)
