"""Fixtures of the conformance suite: the real server (one per session, one with an injected
delay, and fresh ones for tests that stop or kill it), and the `client` parameter: every
test that takes `client` runs once per client of the roster (bench-config/clients.yaml), built
or not."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from conformance import CLIENTS, INJECTED_DELAY_US, Server  # noqa: E402


def pytest_generate_tests(metafunc):
    if "client" in metafunc.fixturenames:
        metafunc.parametrize("client", CLIENTS)


@pytest.fixture(scope="session")
def server_logs(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("server-logs")


@pytest.fixture(scope="session")
def server(server_logs):
    srv = Server(server_logs)
    yield srv
    srv.stop()


@pytest.fixture(scope="session")
def delay_server(server_logs):
    srv = Server(server_logs, "--inject-delay-us", str(INJECTED_DELAY_US))
    yield srv
    srv.stop()


@pytest.fixture
def own_server(server_logs):
    """A server for this test alone, for tests that SIGSTOP or SIGKILL it."""
    srv = Server(server_logs)
    yield srv
    srv.stop()
