"""Failures counted by kind (Contract 2): stand-in servers that answer every order with one
HTTP status (each a 4xx or 5xx): none counted as ok, the result still written and valid, exit 1.
These time nothing (no deadline, and a --timeout-ms no order reaches: conformance.NO_TIMEOUT),
so they are not measuring (conftest.py) and run in make test's parallel pass; the timeouts are
test_conformance_failures.py's.
"""

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from conformance import NO_TIMEOUT, run_client, schema_errors

ORDERS, CONNECTIONS = 6, 2


class StatusServer:
    """An HTTP/1.1 keep-alive server on 127.0.0.1:0 that reads each request whole and
    answers it with one fixed status and an empty JSON error body."""

    def __init__(self, status: int) -> None:
        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                body = b'{"error":"stand-in","field":null}'
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args) -> None:  # no line per request on stderr
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


@pytest.mark.parametrize(("status", "kind"), [(404, "http_4xx"), (422, "http_4xx"), (503, "http_5xx")])
def test_every_answer_with_an_error_status_counts_as_its_kind(client, status, kind, tmp_path):
    server = StatusServer(status)
    try:
        run = run_client(
            client,
            tmp_path,
            "--url",
            server.url,
            "--orders",
            str(ORDERS),
            "--warmup",
            "0",
            "--connections",
            str(CONNECTIONS),
            *NO_TIMEOUT,
        )
    finally:
        server.close()
    assert run.returncode == 1, f"exit {run.returncode}: {run.stderr}"
    doc = run.doc
    assert schema_errors(doc) == []
    assert doc["ok"] == 0
    assert doc["error_kinds"][kind] == ORDERS == doc["errors"], doc["error_kinds"]
