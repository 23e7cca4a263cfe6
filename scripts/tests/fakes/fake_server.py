"""A stand-in for bin/hft-server in hftbench's unit tests: the same startup line and the
endpoints hftbench uses (/health, /stats, /stats/reset, /order), nothing else.

--lose N: leave the first N orders out of total_orders (to test the lost-orders check).
--die-after N: exit after N orders (to test a server that dies mid-run).
"""

import argparse
import json
import os
import signal
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

parser = argparse.ArgumentParser()
parser.add_argument("--addr", default="127.0.0.1:8080")
parser.add_argument("--lose", type=int, default=0)
parser.add_argument("--die-after", type=int, default=0)
args = parser.parse_args()

lock = threading.Lock()
state = {"total": 0, "seen": 0}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # else 40 ms delayed-ACK stalls per request

    def log_message(self, *a):  # quiet: the log is the test's server.log
        pass

    def _send(self, code, doc):
        body = json.dumps(doc).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path == "/health":
            self._send(200, {"status": "ok", "version": "fake-0"})
        elif self.path == "/stats":
            with lock:
                self._send(
                    200, {"total_orders": state["total"], "elapsed_seconds": 1.0, "orders_per_second": 0}
                )
        else:
            self._send(404, {"error": "not found", "field": "path"})

    def do_POST(self):
        length = int(self.headers.get("Content-Length", 0))
        body = self.rfile.read(length) if length else b""
        if self.path == "/stats/reset":
            with lock:
                state["total"] = 0
            self._send(200, {"status": "reset"})
        elif self.path == "/order":
            with lock:
                state["seen"] += 1
                if state["seen"] > args.lose:
                    state["total"] += 1
                seen = state["seen"]
            self._send(200, {"status": "accepted", "echo": len(body)})
            if args.die_after and seen >= args.die_after:
                os._exit(3)
        else:
            self._send(404, {"error": "not found", "field": "path"})


host, port = args.addr.rsplit(":", 1)
server = ThreadingHTTPServer((host, int(port)), Handler)
signal.signal(signal.SIGTERM, lambda *_: (server.server_close(), os._exit(0)))
print(f"hft-server listening on http://127.0.0.1:{server.server_address[1]}", flush=True)
print("fake server ready", file=sys.stderr, flush=True)
server.serve_forever()
