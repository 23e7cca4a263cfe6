"""bin/hft-server under our control: start on a free port, wait until healthy, /stats, stop.

Where the build knows `--listen-fd` (asked once per binary, from its `--help`), this process
binds `127.0.0.1:0` and listens itself (the kernel picks a free port, so a port in use never
stops a run), hands the socket to the server as `--listen-fd N`, and reaches the server only
at its own socket's address: the server's `hft-server listening on ...` line is then only the
signal that it is ready, whatever address it names. A server whose sandbox has a network of its
own (sandbox.py: a head's, and base's where it serves alike) is reachable through that socket
and nothing else. An older build (`hftbench ab` builds base from the pull request's base
commit) binds `127.0.0.1:0` itself, and the address its line prints is the one used. Its
stdout and stderr go to the run folder's server.log, which is also where that line is read
from (procs.py). A network scenario starts it inside its namespace (`wrapper` = `ip netns exec
NS`), where it binds that namespace's address itself (netcells.py). This is the one place that
starts the server: the conformance suite, clients/bench/throughput.py and the shell drivers
(through `hftbench serve`) use it too.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TypedDict, cast

from ..errors import UsageError
from ..results_shapes import ServerRecord
from . import cgroups, proc_sampler, procs
from .placement import format_cpu_list

# Read here and only here (procs.start_ready); server/src/main.rs prints it.
LISTENING = re.compile(r"hft-server listening on (http://\d+\.\d+\.\d+\.\d+:\d+)")
# The same line under --listen-fd: a readiness signal only; the address is this process's own.
READY = re.compile(r"hft-server listening on ")
LISTEN_FD = "--listen-fd"
BACKLOG = 4096  # the kernel caps it at net.core.somaxconn, as it does the server's own bind


class ServerStats(TypedDict, total=False):
    """GET /stats (server/README.md): counts since the last reset; the harness reads
    `total_orders` (checked present), the rest is there for whoever asks."""

    total_orders: int
    elapsed_seconds: float
    orders_per_second: float
    accepted: int
    rejected: int
    filled: int
    new: int
    partially_filled: int
    partially_filled_cancelled: int
    cancelled: int
    invalid_requests: int
    failed: int
    hung: int
    fills: int
    traded_quantity: int
    resting_orders: int
    symbols: int
    connections_refused: int
    connections_open: int


class ServerError(RuntimeError):
    """The server did not start, is not healthy, or answered /stats with something unexpected."""


# The line of a sandbox launcher (sandbox.server_launcher) that names the binary it runs.
LAUNCHER_MARK = "# The head's hft-server in a sandbox (hftbench/measure/sandbox.py); the binary: "


def real_binary(path: Path) -> Path:
    """The server a side serves: the binary a sandbox launcher runs, else `path` itself. What is
    hashed, so that a head serving base's binary behind its own launcher shows as base's."""
    try:
        with open(path, "rb") as f:
            start = f.read(4096)
    except OSError:
        return path
    if not start.startswith(b"#!"):
        return path
    for line in start.decode(errors="replace").splitlines():
        if line.startswith(LAUNCHER_MARK):
            return Path(line[len(LAUNCHER_MARK) :])
    return path


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


_HELP: dict[tuple[str, int, int, int], str] = {}


def help_text(binary: Path) -> str:
    """`binary --help`'s stdout, asked once per binary file (a rebuilt or replaced file is asked
    again); "" when it does not answer. A head's binary is its sandbox launcher: asked inside."""
    try:
        st = Path(binary).stat()
    except OSError:
        return ""
    key = (str(Path(binary).resolve()), st.st_ino, st.st_mtime_ns, st.st_size)
    if key not in _HELP:
        try:
            out = subprocess.run(
                [str(binary), "--help"], capture_output=True, text=True, timeout=5, stdin=subprocess.DEVNULL
            )
            _HELP[key] = out.stdout if out.returncode == 0 else ""
        except (OSError, subprocess.TimeoutExpired):
            _HELP[key] = ""
    return _HELP[key]


def takes_listen_fd(binary: Path) -> bool:
    """Whether this build serves on a socket it is handed (`--listen-fd`, server/src/main.rs);
    a build from before the flag binds its own port."""
    return LISTEN_FD in help_text(binary)


class Server:
    """One hft-server process. Use as a context manager: `with Server(binary, log) as s: s.url`."""

    def __init__(
        self,
        binary: Path,
        log_path: Path,
        flags: list[str] | None = None,
        *,
        start_timeout_s: float = 20.0,
        cpus: tuple[int, ...] = (),
        host: str = "127.0.0.1",
        wrapper: list[str] | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.binary = Path(binary)
        self.log_path = Path(log_path)
        self.flags = list(flags or [])  # extra server flags (--workers N, --inject-delay-us N)
        self.cpus = tuple(cpus)  # placement: run the server on these CPUs
        self.host = host  # the address it binds (a network scenario: its namespace's veth)
        self.wrapper = list(wrapper or [])  # e.g. `ip netns exec NS`: where it runs
        self.env = env  # the server's environment (None: this process's), e.g. RUST_LOG
        self.start_timeout_s = start_timeout_s
        self.url: str = ""  # http://127.0.0.1:PORT once started
        self.version: str | None = None  # from /health when the server reports one
        self.proc: subprocess.Popen[bytes] | None = None
        # The side's cgroup (cgroups.py), set by the run before start: entered before exec, and
        # the CPU read from it; None: no group, the CPU from /proc.
        self.cgroup: cgroups.Group | None = None

    def __enter__(self) -> Server:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _ask(self, flag: str) -> str | None:
        """stdout of `hft-server FLAG` (--version, --help); None when it does not answer."""
        try:
            out = subprocess.run(
                [str(self.binary), flag], capture_output=True, text=True, timeout=5, stdin=subprocess.DEVNULL
            )
        except (OSError, subprocess.TimeoutExpired):
            return None
        return out.stdout if out.returncode == 0 else None

    def binary_version(self) -> str | None:
        """`hft-server --version` (clap: "hft-server 0.1.0"); None when it does not answer."""
        text = (self._ask("--version") or "").strip()
        return text.splitlines()[0] if text else None

    def describe(self) -> ServerRecord:
        """The `server` object of results.json."""
        return {
            "binary": str(self.binary),
            "sha256": sha256(real_binary(self.binary)) if self.binary.is_file() else None,
            "version": self.binary_version() or self.version,
            "flags": self.flags + self._pin_flags(),
            "url": self.url,
            # who bound the socket: the harness (passed in) or the server itself (an old build)
            "listen": LISTEN_FD if self.passes_socket() else "--addr",
        }

    def start(self) -> str:
        if not self.binary.is_file():
            raise UsageError(f"{self.binary} not found: build it with `make build-rust` (or `make build`)")
        self.url = ""
        deadline = time.monotonic() + self.start_timeout_s
        if self.passes_socket():
            self._start_on_socket()
            self.wait_healthy(deadline)
            return self.url
        # The log is appended to, so a restart after a crash keeps the first server's output.
        self.proc, match = procs.start_ready(
            [*self.wrapper, str(self.binary), "--addr", f"{self.host}:0", *self.flags, *self._pin_flags()],
            self.log_path,
            LISTENING,
            name=str(self.binary),
            timeout_s=self.start_timeout_s,
            preexec=self._before_exec(),
            env=self.env,
            error=ServerError,
        )
        self.url = match.group(1)
        self.wait_healthy(deadline)
        return self.url

    def passes_socket(self) -> bool:
        """Whether start() binds the socket and hands it in (--listen-fd): where the build knows
        the flag and the server runs in this process's network namespace (a network scenario's
        server, behind `wrapper`, binds in its own namespace)."""
        return not self.wrapper and takes_listen_fd(self.binary)

    def _start_on_socket(self) -> None:
        """Bind and listen on `host`:0 here, start the server with the socket as --listen-fd,
        and take the URL from the socket: never from what the server prints. This process's
        copy is closed once the server has started (or failed to), so a server that dies
        refuses connections rather than leaving them queued on a socket no one accepts."""
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            try:
                sock.bind((self.host, 0))
                sock.listen(BACKLOG)
            except OSError as exc:
                raise ServerError(
                    f"cannot listen on {self.host}:0 to pass the server a socket: {exc}; "
                    "pass a local IPv4 address as the host"
                ) from exc
            host, port = sock.getsockname()[:2]
            self.url = f"http://{host}:{port}"
            fd = sock.fileno()
            # The log is appended to, so a restart after a crash keeps the first server's output.
            self.proc, _ = procs.start_ready(
                [str(self.binary), LISTEN_FD, str(fd), *self.flags, *self._pin_flags()],
                self.log_path,
                READY,
                name=str(self.binary),
                timeout_s=self.start_timeout_s,
                preexec=self._before_exec(),
                env=self.env,
                error=ServerError,
                pass_fds=(fd,),
            )
        finally:
            sock.close()

    def _has_cpus_flag(self) -> bool:
        """Whether this build knows --cpus (`hftbench ab` may build a base from before it)."""
        return "--cpus" in help_text(self.binary)

    def _pin_flags(self) -> list[str]:
        """--cpus LIST: the server pins one worker thread per CPU (placement.py)."""
        return ["--cpus", format_cpu_list(self.cpus)] if self.cpus and self._has_cpus_flag() else []

    def _before_exec(self) -> Callable[[], None]:
        """Run in the child before exec: it dies with this process, even a SIGKILLed one (no
        server outlives an hftbench, ab or pytest run); a build without --cpus is confined to
        the CPUs instead."""
        if not self.cpus or self._has_cpus_flag():
            return self._in_cgroup(procs.die_with_parent)
        cpus = set(self.cpus)

        def confine() -> None:
            os.sched_setaffinity(0, cpus)
            procs.die_with_parent()

        return self._in_cgroup(confine)

    def _in_cgroup(self, then: Callable[[], None]) -> Callable[[], None]:
        """`then`, preceded by the move into the side's cgroup where it has one: in the child
        before exec, so nothing the server starts is ever outside it (cgroups.py)."""
        return self.cgroup.preexec(then) if self.cgroup is not None else then

    def wait_healthy(self, deadline: float) -> None:
        last = ""
        while time.monotonic() < deadline:
            try:
                body = self._request("GET", "/health", timeout=1.0)
                self.version = _version_of(body)
                return
            except (OSError, ServerError) as exc:
                last = str(exc)
            if self.proc is not None and self.proc.poll() is not None:
                break
            time.sleep(0.05)
        self.stop()
        raise ServerError(f"{self.url}/health never answered 200 ({last}); see {self.log_path}")

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stats(self) -> ServerStats:
        """GET /stats as a dict (total_orders = valid orders since the last reset)."""
        body = self._request("GET", "/stats")
        try:
            doc = json.loads(body)
        except json.JSONDecodeError as exc:
            raise ServerError(f"{self.url}/stats did not answer JSON: {body[:200]!r}") from exc
        if not isinstance(doc, dict) or "total_orders" not in doc:
            raise ServerError(f"{self.url}/stats has no total_orders: {body[:200]!r}")
        return cast(ServerStats, doc)

    def cpu_seconds(self) -> float | None:
        """CPU seconds the server has used so far, its process and every live one under it
        (a head's server runs under bwrap, sandbox.py: the server is a descendant, and whatever
        the PR's code started beside it counts too); None when /proc cannot tell. In a cgroup
        (self.cgroup): the group's, which keeps the CPU of processes that have exited."""
        if self.cgroup is not None and (spent := self.cgroup.cpu_seconds()) is not None:
            return spent
        if self.proc is None or (own := proc_sampler.cpu_seconds(self.proc.pid)) is None:
            return None
        return own + sum(proc_sampler.cpu_seconds(pid) or 0.0 for pid in procs.descendants(self.proc.pid))

    def cpu_source(self) -> str:
        """Where cpu_seconds reads: "cgroup" (the side's group) or "proc" (live processes)."""
        return "cgroup" if self.cgroup is not None and self.cgroup.cpu_seconds() is not None else "proc"

    def memory_peak(self) -> int | None:
        """The side's cgroup's memory high-water mark in bytes; None without a group."""
        return self.cgroup.memory_peak() if self.cgroup is not None else None

    def serving_pid(self) -> int | None:
        """The server process's own pid, for what samples one process (a soak's RSS and
        connections): proc.pid, or under the sandbox's launcher the first process below bwrap."""
        if self.proc is None:
            return None
        for pid in procs.descendants(self.proc.pid):
            try:
                if Path(f"/proc/{pid}/comm").read_text().strip() != "bwrap":
                    return pid
            except OSError:
                continue
        return self.proc.pid

    def reset_stats(self) -> None:
        self._request("POST", "/stats/reset")

    def stop(self, timeout_s: float = 5.0) -> int | None:
        """SIGCONT and SIGTERM, then SIGKILL after `timeout_s`; returns the exit status."""
        return None if self.proc is None else procs.stop(self.proc, timeout_s)

    def send_signal(self, sig: int) -> None:
        """For tests that stop (SIGSTOP) or kill the server under a client."""
        if self.proc is not None:
            self.proc.send_signal(sig)

    def _request(self, method: str, path: str, timeout: float = 5.0) -> bytes:
        req = urllib.request.Request(self.url + path, method=method, data=b"" if method == "POST" else None)
        try:
            with urllib.request.urlopen(req, timeout=timeout) as resp:
                return resp.read()
        except urllib.error.HTTPError as exc:
            raise ServerError(f"{method} {self.url}{path} answered HTTP {exc.code}") from exc


def _version_of(body: bytes) -> str | None:
    try:
        doc = json.loads(body)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None
    return str(doc["version"]) if isinstance(doc, dict) and "version" in doc else None
