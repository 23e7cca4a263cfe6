"""Failures counted by kind (Contract 2): stand-in servers that never answer (every order
a timeout under --timeout-ms) or answer every order with one HTTP status (each a 4xx or 5xx).
Each time: none counted as ok, the result still written and valid, exit 1.
"""

import selectors
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from conformance import run_client, schema_errors

pytestmark = pytest.mark.timeout(60)

TIMEOUT_MS = 100
ORDERS, CONNECTIONS = 6, 2


class SilentServer:
    """A TCP listener on 127.0.0.1:0 that reads and drops everything it is sent."""

    def __init__(self) -> None:
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.setblocking(False)
        self._sel = selectors.DefaultSelector()
        self._sel.register(self._listener, selectors.EVENT_READ)
        self._stop = threading.Event()
        self.bytes_received = 0
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        host, port = self._listener.getsockname()
        return f"http://{host}:{port}"

    def _serve(self) -> None:
        while not self._stop.is_set():
            for key, _ in self._sel.select(timeout=0.05):
                sock = key.fileobj
                if sock is self._listener:
                    conn, _ = self._listener.accept()
                    conn.setblocking(False)
                    self._sel.register(conn, selectors.EVENT_READ)
                    continue
                try:
                    data = sock.recv(65536)
                except OSError:
                    data = b""
                if not data:
                    self._sel.unregister(sock)
                    sock.close()
                self.bytes_received += len(data)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(5)
        for key in list(self._sel.get_map().values()):
            key.fileobj.close()
        self._sel.close()


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


@pytest.fixture
def silent_server():
    server = SilentServer()
    yield server
    server.close()


def test_orders_without_an_answer_are_timeouts_and_exit_1(client, silent_server, tmp_path):
    run = run_client(
        client, tmp_path, "--url", silent_server.url, "--orders", str(ORDERS), "--warmup", "0",
        "--connections", str(CONNECTIONS), "--timeout-ms", str(TIMEOUT_MS), timeout_s=30,
    )  # fmt: skip
    assert run.returncode == 1, f"exit {run.returncode}: {run.stderr}"
    doc = run.doc
    assert schema_errors(doc) == []
    assert doc["ok"] == 0
    assert doc["errors"] == ORDERS, doc["error_kinds"]
    assert doc["error_kinds"]["timeout"] == ORDERS, doc["error_kinds"]
    assert silent_server.bytes_received > 0  # the orders did go out


@pytest.mark.parametrize(("status", "kind"), [(404, "http_4xx"), (422, "http_4xx"), (503, "http_5xx")])
def test_every_answer_with_an_error_status_counts_as_its_kind(client, status, kind, tmp_path):
    server = StatusServer(status)
    try:
        run = run_client(
            client, tmp_path, "--url", server.url, "--orders", str(ORDERS), "--warmup", "0",
            "--connections", str(CONNECTIONS), timeout_s=30,
        )  # fmt: skip
    finally:
        server.close()
    assert run.returncode == 1, f"exit {run.returncode}: {run.stderr}"
    doc = run.doc
    assert schema_errors(doc) == []
    assert doc["ok"] == 0
    assert doc["error_kinds"][kind] == ORDERS == doc["errors"], doc["error_kinds"]
