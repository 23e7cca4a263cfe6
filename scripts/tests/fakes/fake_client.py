"""A stand-in for bin/client-<name> in hftbench's unit tests: the clients/README.md flags,
real POST /order requests on one keep-alive connection, a schema-valid result.

FAKE_BEHAVIOUR (environment): ok (default) | crash (SIGSEGV) | hang | invalid (writes a
result the schema rejects) | exit2 (cannot run) | errors (reports failed orders, exit 1).
FAKE_CLIENT: the client name written into the result.
"""

import argparse
import datetime as dt
import http.client
import json
import os
import signal
import socket
import sys
import time
from urllib.parse import urlparse

from hdrh.histogram import HdrHistogram

behaviour = os.environ.get("FAKE_BEHAVIOUR", "ok")
name = os.environ.get("FAKE_CLIENT", "rust")
p = argparse.ArgumentParser()
p.add_argument("--url", default="http://127.0.0.1:8080")
p.add_argument("--orders", type=int, default=1000)
p.add_argument("--duration", type=float)
p.add_argument("--connections", type=int, default=10)
p.add_argument("--warmup", type=int, default=100)
p.add_argument("--rate", type=float)
p.add_argument("--timeout-ms", type=int, default=1000)
p.add_argument("--scenario", default="adhoc")
p.add_argument("--seed", type=int, default=1)
p.add_argument("--output")
a = p.parse_args()

if behaviour == "exit2":
    print(
        f"client-{name}: cannot connect to {a.url} (connection refused); start bin/hft-server",
        file=sys.stderr,
    )
    sys.exit(2)
if behaviour == "crash":
    print("about to crash", file=sys.stderr, flush=True)
    os.kill(os.getpid(), signal.SIGSEGV)
if behaviour == "hang":
    time.sleep(3600)

u = urlparse(a.url)
conn = http.client.HTTPConnection(u.hostname, u.port, timeout=a.timeout_ms / 1000)
conn.connect()
conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # headers and body go separately
body = b'{"buy_sell":"buy","symbol":2330,"price":100.00,"quantity":100}'
hist = HdrHistogram(1, 60_000_000_000, 3)
started_at = dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
t0 = time.perf_counter()
for i in range(a.warmup + a.orders):
    start = time.perf_counter_ns()
    conn.request("POST", "/order", body=body, headers={"Content-Type": "application/json"})
    conn.getresponse().read()
    if i >= a.warmup:
        hist.record_value(max(1, time.perf_counter_ns() - start))
duration = time.perf_counter() - t0
failed = 2 if behaviour == "errors" else 0
ok = a.orders - failed


def lat():
    v = {
        f"p{k}": hist.get_value_at_percentile(q) / 1000
        for k, q in (("50", 50), ("90", 90), ("95", 95), ("99", 99), ("999", 99.9), ("9999", 99.99))
    }
    v.update(
        min=hist.get_min_value() / 1000,
        max=hist.get_max_value() / 1000,
        mean=hist.get_mean_value() / 1000,
        stddev=hist.get_stddev() / 1000,
    )
    return v


doc = {
    "schema_version": 1,
    "client": name,
    "client_version": "0.0.0-fake",
    "scenario": a.scenario,
    "mode": "open" if a.rate else "closed",
    "target_rate_rps": a.rate,
    "orders": a.orders,
    "connections": a.connections,
    "warmup": a.warmup,
    "seed": a.seed,
    "started_at": started_at,
    "duration_s": duration,
    "ok": ok,
    "errors": failed,
    "error_kinds": {"connect": 0, "timeout": failed, "http_4xx": 0, "http_5xx": 0, "other": 0},
    "throughput_rps": ok / duration,
    "latency_us": lat(),
    "histogram": {"format": "hdr-v2-deflate-base64", "unit": "ns", "data": hist.encode().decode()},
    "extra": {"fake": True},
}
if a.rate:
    doc["uncorrected_latency_us"] = lat()
    # The fake does not pace: every order counts as sent on time (lateness 0).
    late = HdrHistogram(1, 60_000_000_000, 3)
    late.record_value(0, a.orders)
    doc["send_lateness_us"] = dict.fromkeys(lat(), 0.0)
    doc["send_lateness_histogram"] = {
        "format": "hdr-v2-deflate-base64",
        "unit": "ns",
        "data": late.encode().decode(),
    }
if behaviour == "invalid":
    doc["latency_us"] = "fast"
with open(a.output, "w") as f:
    json.dump(doc, f)
sys.exit(1 if failed else 0)
