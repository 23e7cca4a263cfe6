"""Issue 61, the network: each server reached only through a socket the harness binds and
hands in (`--listen-fd`, measure/server.py), and in the sandbox a network of its own
(`--unshare-net`, measure/sandbox.py). The harness never connects to an address a server
prints; a head's server reaches neither base's port nor any other address; a build from
before the flag is served the old way, and a head without it is refused under
--require-sandbox and named in the sandbox note otherwise.

The two attacks (support/hostile_head.py) run twice each: in the sandbox, where nothing arrives, and
without it, where the same server's attack arrives: the test can fail."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
from pathlib import Path

import pytest
from hftbench import cli
from hftbench.errors import UsageError
from hftbench.measure import sandbox
from hftbench.measure.server import LISTEN_FD, Server, takes_listen_fd
from support.hftbench_fakes import ab_argv
from support.hostile_head import SERVER, Outside, base_port_attack, egress_attack

needs_binaries = pytest.mark.usefixtures("real_binaries")  # conftest.py: skips without bin/; measuring
needs_sandbox = pytest.mark.skipif(
    os.environ.get("CI") != "true" and sandbox.probe() is not None,
    reason=f"no sandbox can start here ({sandbox.probe()}): {sandbox.FIX}",
)

LIE = "http://127.0.0.1:1"  # what the fake server prints under --listen-fd: never to be used

FAKE = '''#!{python}
"""A stand-in hft-server: /health only; records its arguments and its socket's port."""
import http.server, json, socket, sys

args = sys.argv[1:]
if args == ["--help"]:
    print("Usage: hft-server [OPTIONS]\\n      --addr <ADDR>\\n" + {help_extra!r})
    sys.exit(0)
if args == ["--version"]:
    print("hft-server 0.0.0-fake")
    sys.exit(0)


class Health(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = b'{{"status":"ok"}}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *a):
        pass


if "--listen-fd" in args:
    sock = socket.socket(fileno=int(args[args.index("--listen-fd") + 1]))
    server = http.server.HTTPServer(sock.getsockname(), Health, bind_and_activate=False)
    server.socket.close()
    server.socket = sock
    line = "{lie}"
else:
    host = args[args.index("--addr") + 1].rsplit(":", 1)[0]
    server = http.server.HTTPServer((host, 0), Health)
    line = f"http://{{host}}:{{server.server_address[1]}}"
try:  # in a sandbox the file system is read-only
    with open(sys.argv[0] + ".calls", "a") as f:
        f.write(json.dumps({{"args": args, "port": server.socket.getsockname()[1]}}) + "\\n")
except OSError:
    pass
print(f"hft-server listening on {{line}}", flush=True)
server.serve_forever()
'''


def fake_server(path: Path, *, listen_fd: bool) -> Path:
    """A server build that knows --listen-fd (listen_fd) or predates it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    extra = "      --listen-fd <N>\n" if listen_fd else ""
    path.write_text(FAKE.format(python=sys.executable, help_extra=extra, lie=LIE))
    path.chmod(0o755)
    return path


def calls(binary: Path) -> list[dict]:
    return [json.loads(line) for line in Path(f"{binary}.calls").read_text().splitlines()]


def refused(url: str) -> bool:
    host, port = url.removeprefix("http://").rsplit(":", 1)
    try:
        socket.create_connection((host, int(port)), timeout=2).close()
    except ConnectionRefusedError:
        return True
    return False


def test_a_build_with_listen_fd_is_handed_the_harness_socket_and_reached_only_there(tmp_path):
    binary = fake_server(tmp_path / "new" / "hft-server", listen_fd=True)
    assert takes_listen_fd(binary)
    with Server(binary, tmp_path / "server.log") as server:
        (call,) = calls(binary)
        assert call["args"][:2] == [LISTEN_FD, call["args"][1]] and "--addr" not in call["args"]
        assert server.url == f"http://127.0.0.1:{call['port']}" and server.url != LIE
        assert LIE in (tmp_path / "server.log").read_text()  # it printed the lie; the harness ignored it
        with urllib.request.urlopen(server.url + "/health", timeout=5) as reply:
            assert reply.status == 200
        assert server.describe()["listen"] == LISTEN_FD
        url = server.url
    # The harness kept no copy of the socket: with the server gone, nothing listens there.
    assert refused(url)


def test_a_build_from_before_the_flag_binds_its_own_port_and_its_line_is_used(tmp_path):
    binary = fake_server(tmp_path / "old" / "hft-server", listen_fd=False)
    assert not takes_listen_fd(binary)
    with Server(binary, tmp_path / "server.log") as server:
        (call,) = calls(binary)
        assert call["args"][:2] == ["--addr", "127.0.0.1:0"] and LISTEN_FD not in call["args"]
        assert server.url == f"http://127.0.0.1:{call['port']}"
        assert server.describe()["listen"] == "--addr"


def test_a_server_behind_a_wrapper_binds_in_the_namespace_it_is_started_in(tmp_path):
    """A network scenario's server runs in its own namespace (`ip netns exec`): a socket bound
    here would be in the wrong one, so it binds its own port there, as before."""
    binary = fake_server(tmp_path / "new" / "hft-server", listen_fd=True)
    with Server(binary, tmp_path / "server.log", wrapper=["env"]) as server:
        (call,) = calls(binary)
        assert call["args"][:2] == ["--addr", "127.0.0.1:0"] and not server.passes_socket()


def test_a_head_without_listen_fd_is_refused_when_required_and_named_in_the_note_otherwise(tmp_path):
    old = fake_server(tmp_path / "old" / "hft-server", listen_fd=False)
    new = fake_server(tmp_path / "new" / "hft-server", listen_fd=True)
    box = sandbox.Policy(True, sandbox.ON_NOTE)
    with pytest.raises(UsageError, match=r"has no --listen-fd.*--require-sandbox.*Fix: rebase"):
        sandbox.isolate_network(sandbox.Policy(True, sandbox.ON_NOTE, required=True), old)
    shared = sandbox.isolate_network(box, old)
    assert shared.enabled and shared.note.startswith("network shared: head's server has no --listen-fd")
    assert shared.to_json()["note"] == shared.note
    isolated = sandbox.isolate_network(sandbox.Policy(True, sandbox.ON_NOTE, required=True), new)
    assert isolated.note == sandbox.ON_NOTE + sandbox.NET_NOTE
    off = sandbox.Policy(False, "unsandboxed: HFT_SANDBOX=off")
    assert sandbox.isolate_network(off, old) == off


@needs_binaries
def test_the_real_server_serves_on_the_socket_the_harness_hands_it(tmp_path):
    assert takes_listen_fd(SERVER), "bin/hft-server has no --listen-fd: rebuild it (make build)"
    with Server(SERVER, tmp_path / "server.log") as server:
        assert server.passes_socket() and server.stats()["total_orders"] == 0
        line = (tmp_path / "server.log").read_text()
        assert f"hft-server listening on {server.url}" in line  # it prints the socket it was handed


@needs_sandbox
def test_an_old_build_in_the_sandbox_still_serves_on_the_hosts_network(tmp_path):
    """Told --addr (a base from before the flag), the launcher keeps the host's network: the
    port the server binds itself is reachable from outside."""
    old = fake_server(tmp_path / "built" / "hft-server", listen_fd=False)
    launcher = tmp_path / "bin" / "hft-server"
    sandbox.server_launcher(old, launcher)
    with Server(launcher, tmp_path / "server.log") as server:
        assert not server.passes_socket()
        with urllib.request.urlopen(server.url + "/health", timeout=5) as reply:
            assert reply.status == 200


def _hostile(path: Path, attack: str) -> Path:
    """The head's built server: the attack, then the real server (as its main() could)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f'#!/bin/sh\n{attack}exec {SERVER} "$@"\n')
    path.chmod(0o755)
    return path


@needs_binaries
@needs_sandbox
def test_the_heads_server_sends_no_order_to_bases_port_from_the_sandbox(tmp_path):
    with Server(SERVER, tmp_path / "base.log") as base:  # base: trusted, its own socket on loopback
        head = _hostile(tmp_path / "head" / "sandboxed" / "hft-server", base_port_attack(base.url))
        launcher = tmp_path / "head" / "bin" / "hft-server"
        sandbox.server_launcher(head, launcher)
        with Server(launcher, tmp_path / "boxed.log") as boxed:
            assert boxed.passes_socket() and boxed.stats()["total_orders"] == 0
        boxed_log = (tmp_path / "boxed.log").read_text()
        assert "order refused" in boxed_log and "order sent to base" not in boxed_log
        assert base.stats()["total_orders"] == 0, "the sandboxed head's server sent an order to base's port"
        # The same server without the sandbox reaches base: the attack is real.
        with Server(head, tmp_path / "open.log"):
            pass
        assert "order sent to base" in (tmp_path / "open.log").read_text()
        assert base.stats()["total_orders"] >= 1


@needs_binaries
@needs_sandbox
def test_the_heads_server_reaches_no_outside_address_from_the_sandbox(tmp_path):
    tag = uuid.uuid4().hex[:12]
    with Outside() as outside:
        head = _hostile(
            tmp_path / "head" / "sandboxed" / "hft-server", egress_attack("127.0.0.1", outside.port, tag)
        )
        launcher = tmp_path / "head" / "bin" / "hft-server"
        sandbox.server_launcher(head, launcher)
        with Server(launcher, tmp_path / "boxed.log") as boxed:
            assert boxed.stats()["total_orders"] == 0
        boxed_log = (tmp_path / "boxed.log").read_text()
        assert "egress refused" in boxed_log and "egress sent" not in boxed_log
        time.sleep(0.5)
        assert not outside.received, f"the sandboxed head's server reached outside: {outside.received}"
        # The same server without the sandbox reaches the listener: the attack is real.
        with Server(head, tmp_path / "open.log"):
            pass
        deadline = time.monotonic() + 5
        while not any(f"pwned {tag}".encode() in r for r in outside.received) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert any(f"pwned {tag}".encode() in r for r in outside.received), outside.received
        assert "egress sent" in (tmp_path / "open.log").read_text()


# `hftbench ab` with builds from before the flag: a server.sh that hides --listen-fd from its
# --help is what such a build looks like to the harness (it then binds its own port, --addr).
OLD = (
    f'#!/bin/sh\nif [ "$1" = --help ]; then {SERVER} --help | grep -v -e --listen-fd; exit 0; fi\n'
    f'exec {SERVER} "$@"\n'
)
NEW = f'#!/bin/sh\nexec {SERVER} "$@"\n'


def _ab_repo(root: Path, base_server: str, head_server: str) -> Path:
    repo = root / "repo"
    repo.mkdir()

    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)

    git("init", "-q")
    git("config", "user.email", "t@example.com")
    git("config", "user.name", "t")
    (repo / "build.sh").write_text("mkdir -p bin && install -m 755 server.sh bin/hft-server\n")
    for message, server in (("base", base_server), ("head", head_server)):
        (repo / "server.sh").write_text(server)
        git("add", ".")
        git("commit", "-qm", message)
    return repo


def _ab(repo: Path, out: Path, *extra: str) -> int:
    return cli.main(
        ab_argv(
            repo,
            out,
            orders=300,
            rounds=2,
            extra=("--no-profile", "--build-cmd", "sh build.sh", "--quiet", *extra),
        )
    )


def _listen(out: Path, side: str) -> set[str]:
    return {json.loads(p.read_text())["server"]["listen"] for p in (out / side).glob("run_*/results.json")}


@needs_binaries
@needs_sandbox
def test_ab_serves_a_base_from_before_the_flag_the_old_way_and_says_so(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv(sandbox.ENV, raising=False)
    out = tmp_path / "ab"
    code = _ab(_ab_repo(tmp_path, OLD, NEW), out, "--require-sandbox")
    assert code in (0, 1), capsys.readouterr().err
    assert "server has no --listen-fd (its commit predates it)" in capsys.readouterr().err
    assert _listen(out, "base") == {"--addr"} and _listen(out, "head") == {LISTEN_FD}
    note = json.loads((out / "verdict.json").read_text())["ab"]["sandbox"]["note"]
    assert note == sandbox.ON_NOTE + sandbox.hardening_note() + sandbox.NET_NOTE


@needs_binaries
@needs_sandbox
def test_ab_refuses_a_head_without_the_flag_when_required_and_names_it_otherwise(
    tmp_path, capsys, monkeypatch
):
    monkeypatch.delenv(sandbox.ENV, raising=False)
    repo = _ab_repo(tmp_path, NEW, OLD)
    assert _ab(repo, tmp_path / "required", "--require-sandbox") == 2
    err = capsys.readouterr().err
    assert "has no --listen-fd" in err and "Fix: rebase the pull request" in err, err
    assert not list((tmp_path / "required").glob("*/run_*")), "rounds were measured"
    out = tmp_path / "local"
    assert _ab(repo, out) in (0, 1)
    note = json.loads((out / "verdict.json").read_text())["ab"]["sandbox"]["note"]
    assert note.startswith("network shared: head's server has no --listen-fd; ")
    assert _listen(out, "head") == {"--addr"} and _listen(out, "base") == {LISTEN_FD}
