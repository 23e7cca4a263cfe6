"""Failures counted by kind (Contract 2): a stand-in server that never answers, so every
order is a timeout under --timeout-ms: none counted as ok, the result still written and valid,
exit 1. It asserts on a timeout, so it is measuring (conftest.py); the stand-ins that answer
with an error status time nothing and are test_conformance_statuses.py, in the parallel pass.
"""

import selectors
import socket
import threading

import pytest
from conformance import run_client, schema_errors

# measuring: starts the real binaries and times them (root conftest.py)
pytestmark = [pytest.mark.measuring, pytest.mark.timeout(60)]

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


@pytest.fixture
def silent_server():
    server = SilentServer()
    yield server
    server.close()


def test_orders_without_an_answer_are_timeouts_and_exit_1(client, silent_server, tmp_path):
    run = run_client(
        client,
        tmp_path,
        "--url",
        silent_server.url,
        "--orders",
        str(ORDERS),
        "--warmup",
        "0",
        "--connections",
        str(CONNECTIONS),
        "--timeout-ms",
        str(TIMEOUT_MS),
        timeout_s=30,
    )
    assert run.returncode == 1, f"exit {run.returncode}: {run.stderr}"
    doc = run.doc
    assert schema_errors(doc) == []
    assert doc["ok"] == 0
    assert doc["errors"] == ORDERS, doc["error_kinds"]
    assert doc["error_kinds"]["timeout"] == ORDERS, doc["error_kinds"]
    assert silent_server.bytes_received > 0  # the orders did go out
