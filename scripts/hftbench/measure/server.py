"""bin/hft-server under our control: start on a free port, wait until healthy, /stats, stop.

The server binds `127.0.0.1:0` (the kernel picks a free port, so a port in use never stops a
run) and prints `hft-server listening on http://127.0.0.1:PORT`; its stdout and stderr go
to the run folder's server.log, which is also where that line is read from (procs.py). A
network scenario starts it inside its namespace (`wrapper` = `ip netns exec NS`) on that
namespace's address instead (netcells.py). This is the one place that starts the server: the
conformance suite, clients/bench/throughput.py and the shell drivers (through `hftbench
serve`) use it too.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ..errors import UsageError
from . import cgroups, proc_sampler, procs
from .placement import format_cpu_list

# Read here and only here (procs.start_ready); server/src/main.rs prints it.
LISTENING = re.compile(r"hft-server listening on (http://\d+\.\d+\.\d+\.\d+:\d+)")


class ServerError(RuntimeError):
    """The server did not start, is not healthy, or answered /stats with something unexpected."""


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


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

    def describe(self) -> dict[str, Any]:
        """The `server` object of results.json."""
        return {
            "binary": str(self.binary),
            "sha256": sha256(self.binary) if self.binary.is_file() else None,
            "version": self.binary_version() or self.version,
            "flags": self.flags + self._pin_flags(),
            "url": self.url,
        }

    def start(self) -> str:
        if not self.binary.is_file():
            raise UsageError(f"{self.binary} not found: build it with `make build-rust` (or `make build`)")
        self.url = ""
        deadline = time.monotonic() + self.start_timeout_s
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

    def _has_cpus_flag(self) -> bool:
        """Whether this build knows --cpus (`hftbench ab` may build a base from before it)."""
        if not hasattr(self, "_cpus_flag"):
            self._cpus_flag = "--cpus" in (self._ask("--help") or "")
        return self._cpus_flag

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

    def stats(self) -> dict[str, Any]:
        """GET /stats as a dict (total_orders = valid orders since the last reset)."""
        body = self._request("GET", "/stats")
        try:
            doc = json.loads(body)
        except json.JSONDecodeError as exc:
            raise ServerError(f"{self.url}/stats did not answer JSON: {body[:200]!r}") from exc
        if not isinstance(doc, dict) or "total_orders" not in doc:
            raise ServerError(f"{self.url}/stats has no total_orders: {body[:200]!r}")
        return doc

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
