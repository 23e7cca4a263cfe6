"""The network scenarios' path: the server in its own network namespace, joined to the
clients (in this namespace) by veth pairs, with bin/hft-linkem bridging them in a middle
namespace when the link profile emulates a link (this kernel has no netem).

    this namespace                hftb-<pid>-link                    hftb-<pid>-srv
    hftb<pid>c 10.213.x.y+1 ──veth── lc ⇄ hft-linkem ⇄ ls ──veth── srv0 10.213.x.y+2  hft-server
    (profile `none`: hftb<pid>c ──veth── srv0, no middle namespace, no emulator)

Everything we create carries the prefix `hftb` and the pid of the hftbench that made it.
`close()` removes it on every way out of a run (an exception, Ctrl-C, SIGTERM); the
processes started inside die with hftbench even on SIGKILL (PR_SET_PDEATHSIG), and the
namespaces such a crash leaves behind are removed by the next network run
(`sweep_leftovers`), which recognises them by the prefix and a pid no longer alive.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import cast

from ..config import LinkProfile
from ..results_shapes import LinkStats
from . import procs

PREFIX = "hftb"
NS_PATTERN = re.compile(rf"^{PREFIX}-(\d+)-(srv|link)$")
VETH_PATTERN = re.compile(rf"^{PREFIX}(\d+)c$")
SUBNET = "10.213"  # /30 per run inside 10.213.0.0/16, chosen from the pid
READY_TIMEOUT_S = 5.0
LINKEM_READY = re.compile(r"hft-linkem ready")


class NetPathError(RuntimeError):
    """The path cannot be built or used; the message names the missing piece and the fix."""


def ip_binary() -> str | None:
    return shutil.which("ip")


def missing_requirements(euid: int | None = None, ip: str | None = "") -> str | None:
    """Why this host cannot build the path (None when it can): root, and `ip` on PATH."""
    euid = os.geteuid() if euid is None else euid
    ip = ip_binary() if ip == "" else ip
    missing = []
    if euid != 0:
        missing.append(
            f"root (running as uid {euid}; network namespaces and veths need CAP_SYS_ADMIN and "
            "CAP_NET_ADMIN): run hftbench as root or with sudo"
        )
    if not ip:
        missing.append("`ip` (iproute2) on PATH: install it with `apt-get install iproute2` (make deps does)")
    return "the network scenario needs " + "; and ".join(missing) if missing else None


def _ip(ip: str, *args: str) -> str:
    try:
        out = subprocess.run(
            [ip, *args], capture_output=True, text=True, timeout=15, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise NetPathError(f"`ip {' '.join(args)}` could not run ({exc})") from exc
    if out.returncode != 0:
        raise NetPathError(f"`ip {' '.join(args)}` failed: {out.stderr.strip() or out.returncode}")
    return out.stdout


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def ours(ip: str) -> list[str]:
    """Every namespace of ours that exists now (any owner pid)."""
    names = [line.split()[0] for line in _ip(ip, "netns", "list").splitlines() if line.strip()]
    return [n for n in names if NS_PATTERN.match(n)]


def sweep_leftovers(ip: str, alive: Callable[[int], bool] = _alive) -> list[str]:
    """Remove what a crashed hftbench left (namespaces, their processes, a root-side veth):
    only names of ours whose owner pid is gone. Returns what was removed."""
    removed = []
    for ns in ours(ip):
        match = NS_PATTERN.match(ns)
        if match is None or alive(int(match.group(1))):
            continue
        for pid in _ip(ip, "netns", "pids", ns).split():
            with contextlib.suppress(ProcessLookupError, ValueError):
                os.kill(int(pid), signal.SIGKILL)
        _ip(ip, "netns", "delete", ns)
        removed.append(ns)
    for line in _ip(ip, "-o", "link", "show").splitlines():
        name = line.split(":")[1].strip().split("@")[0] if ":" in line else ""
        match = VETH_PATTERN.match(name)
        if match and not alive(int(match.group(1))):
            try:
                _ip(ip, "link", "delete", name)
            except NetPathError as exc:
                # Deleting its peer's namespace (above) removes the veth too, a moment later:
                # gone between the listing and here is what the sweep wants (a clean clone's
                # busy make test, 2026-11-29: `Cannot find device`).
                if "Cannot find device" not in str(exc):
                    raise
            removed.append(name)
    return removed


class NetPath:
    """One link profile's path for the length of a run (or until the profile changes)."""

    def __init__(self, profile: LinkProfile, bins_dir: Path, ip: str, pid: int | None = None) -> None:
        self.profile = profile
        self.linkem = Path(bins_dir) / "hft-linkem"
        self.ip = ip
        self.pid = os.getpid() if pid is None else pid
        self.ns_srv = f"{PREFIX}-{self.pid}-srv"
        self.ns_link = f"{PREFIX}-{self.pid}-link"
        self.veth = f"{PREFIX}{self.pid}c"  # our end, in this namespace
        self.client_ip = self.server_ip = ""
        self.created: list[str] = []  # namespaces made, removed by close()
        self.link_proc: subprocess.Popen[bytes] | None = None
        self.link_stats: Path | None = None

    # -- building and removing ---------------------------------------------------------
    def open(self) -> NetPath:
        if self.profile.emulate and not os.access(self.linkem, os.X_OK):
            raise NetPathError(f"{self.linkem} not found: run `make build-linkem` (or `make build`)")
        try:
            self._build()
        except BaseException:
            self.close()
            raise
        return self

    def _subnet(self) -> tuple[str, str]:
        used = _ip(self.ip, "-o", "-4", "addr", "show")
        for k in range(16384):
            idx = (self.pid + k) % 16384
            base = f"{SUBNET}.{idx >> 6}.{(idx & 63) * 4}"
            prefix = base.rsplit(".", 1)[0]
            client, server = f"{prefix}.{(idx & 63) * 4 + 1}", f"{prefix}.{(idx & 63) * 4 + 2}"
            if f" {client}/" not in used and f" {server}/" not in used:
                return client, server
        raise NetPathError(f"no free /30 left in {SUBNET}.0.0/16; remove stale addresses (ip -4 addr)")

    def _build(self) -> None:
        ip = self.ip
        self.client_ip, self.server_ip = self._subnet()
        for ns in [self.ns_srv] + ([self.ns_link] if self.profile.emulate else []):
            _ip(ip, "netns", "add", ns)
            self.created.append(ns)
            _ip(ip, "-n", ns, "link", "set", "lo", "up")
        if self.profile.emulate:
            _ip(ip, "link", "add", self.veth, "type", "veth", "peer", "name", "lc", "netns", self.ns_link)
            _ip(
                ip,
                "-n",
                self.ns_link,
                "link",
                "add",
                "ls",
                "type",
                "veth",
                "peer",
                "name",
                "srv0",
                "netns",
                self.ns_srv,
            )
            for dev in ("lc", "ls"):  # no addresses, no IPv6 chatter: the emulator's ports only
                _ip(ip, "-n", self.ns_link, "link", "set", dev, "addrgenmode", "none")
                _ip(ip, "-n", self.ns_link, "link", "set", dev, "up")
        else:
            _ip(ip, "link", "add", self.veth, "type", "veth", "peer", "name", "srv0", "netns", self.ns_srv)
        _ip(ip, "link", "set", self.veth, "addrgenmode", "none")
        _ip(ip, "addr", "add", f"{self.client_ip}/30", "dev", self.veth)
        _ip(ip, "link", "set", self.veth, "up")
        _ip(ip, "-n", self.ns_srv, "link", "set", "srv0", "addrgenmode", "none")
        _ip(ip, "-n", self.ns_srv, "addr", "add", f"{self.server_ip}/30", "dev", "srv0")
        _ip(ip, "-n", self.ns_srv, "link", "set", "srv0", "up")

    def close(self) -> None:
        """Stop the emulator, delete our namespaces (their veths go with them)."""
        self.stop_link()
        for ns in reversed(self.created):
            with contextlib.suppress(NetPathError):
                for pid in _ip(self.ip, "netns", "pids", ns).split():
                    with contextlib.suppress(ProcessLookupError, ValueError):
                        os.kill(int(pid), signal.SIGKILL)
            with contextlib.suppress(NetPathError):
                _ip(self.ip, "netns", "delete", ns)
        self.created.clear()
        with contextlib.suppress(NetPathError):  # gone with its peer's namespace, unless that failed
            if self.veth in _ip(self.ip, "-o", "link", "show"):
                _ip(self.ip, "link", "delete", self.veth)

    # -- what runs on it -----------------------------------------------------------------
    def in_server_ns(self) -> list[str]:
        """Command prefix that runs a program in the server's namespace."""
        return [self.ip, "netns", "exec", self.ns_srv]

    def start_link(self, stats_path: Path, log_path: Path, zero_delay: bool = False) -> None:
        """Start hft-linkem with the profile (zero_delay: the same path with nothing added,
        for the floor); waits for its ready line. No-op for a profile without emulator."""
        self.stop_link()
        if not self.profile.emulate:
            return
        p = self.profile
        delay, jitter, loss = (0.0, 0.0, 0.0) if zero_delay else (p.delay_us, p.jitter_us, p.loss_pct)
        cmd = [
            self.ip,
            "netns",
            "exec",
            self.ns_link,
            str(self.linkem),
            "--a",
            "lc",
            "--b",
            "ls",
            "--delay-us",
            f"{delay:g}",
            "--jitter-us",
            f"{jitter:g}",
            "--loss-pct",
            f"{loss:g}",
            "--seed",
            str(p.seed),
            "--spin-us",
            f"{p.spin_us:g}",
            "--stats",
            str(stats_path),
        ]
        stats_path.parent.mkdir(parents=True, exist_ok=True)
        self.link_stats = stats_path
        self.link_proc, _ = procs.start_ready(
            cmd,
            log_path,
            LINKEM_READY,
            name=str(self.linkem),
            timeout_s=READY_TIMEOUT_S,
            preexec=procs.die_with_parent,
            error=NetPathError,
        )

    def stop_link(self) -> LinkStats | None:
        """Stop the emulator; its stats (what it forwarded, lost, and the delay it applied)."""
        proc, self.link_proc = self.link_proc, None
        if proc is None:
            return None
        procs.stop(proc)
        try:
            return cast(LinkStats, json.loads(self.link_stats.read_text())) if self.link_stats else None
        except (OSError, json.JSONDecodeError):
            return None


def round_trip_added_us(stats: LinkStats | None, key: str = "p50") -> float | None:
    """The round trip the emulator added: its applied one-way delay (`key`) in each direction, summed."""
    if not stats:
        return None
    parts = [(stats.get(d) or {}).get("delay_us") for d in ("a_to_b", "b_to_a")]
    if any(p is None or p.get(key) is None for p in parts):
        return None
    return float(parts[0][key] + parts[1][key])
