"""The suite's own hft-server (conformance.Server) keeps no deadline of its own: the parallel
pass runs these tests at SCHED_IDLE, where a client may wait longer for a CPU than the
product's slowloris guard lets a connection sit idle, and then loses its connection."""

import http.client
import re
import subprocess
import time

import pytest
from conformance import binary

# server/README.md's example order
BODY = (
    b'{"buy_sell":"sell","symbol":1301,"price":100.05,"quantity":200,"market_type":"common",'
    b'"price_type":"limit","time_in_force":"rod","order_type":"stock","user_def":"hftbench",'
    b'"client_timestamp":"2026-11-22T10:00:00.123456Z"}'
)


def product_guard_s() -> float:
    """hft-server's default --header-read-timeout-ms, in seconds, as its --help states it."""
    text = subprocess.run([binary("hft-server"), "--help"], capture_output=True, text=True, check=True).stdout
    found = re.search(r"--header-read-timeout-ms <MS>.*?\[default: (\d+)\]", text, re.S)
    assert found, "hft-server --help no longer states --header-read-timeout-ms's default"
    return int(found.group(1)) / 1000


def order(conn: http.client.HTTPConnection) -> int:
    conn.request("POST", "/order", body=BODY, headers={"Content-Type": "application/json"})
    response = conn.getresponse()
    response.read()
    return response.status


@pytest.mark.slow  # it waits out the guard: about 10 s
def test_a_connection_idle_past_the_products_guard_is_still_served(server):
    guard = product_guard_s()
    assert 0 < guard <= 30, f"a {guard} s guard: this test would wait that long"
    host, port = server.url.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=guard + 30)
    try:
        assert order(conn) == 200
        time.sleep(guard + 0.5)
        # With the product's guard the server has closed the connection by now, and this
        # raises BrokenPipeError (http.client does not retry a POST).
        assert order(conn) == 200
    finally:
        conn.close()
