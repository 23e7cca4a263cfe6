"""Where the server and the clients run: `--server-cpus` / `--client-cpus`, or the
HFTBENCH_SERVER_CPUS / HFTBENCH_CLIENT_CPUS variables the self-hosted runner sets.

The server gets `--cpus LIST`, which pins one worker thread to each CPU: on CPUs isolated
with isolcpus the kernel never spreads a process's threads by itself (server.py; a build
from before that flag, which `hftbench ab` may build for a base, gets a process mask). Each client process
is confined to the client CPUs; hft-floor and the clients marked pins_threads in
bench-config/clients.yaml (client-hft) also get `--cpus LIST`, which pins each of their
threads the same way. The other clients leave their threads to the
scheduler, so their CPUs should be ones it still balances (not isolated).
Unset, nothing is pinned and the scheduler places everything.
"""

from __future__ import annotations

import contextlib
import functools
import os
import resource
import subprocess
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from .. import roster
from ..config import FLOOR
from ..errors import UsageError

ENV_SERVER = "HFTBENCH_SERVER_CPUS"
ENV_CLIENT = "HFTBENCH_CLIENT_CPUS"
# A busy-polling client-hft on a CPU of its own runs at nice -20 (ENV_CLIENT_NICE), so that
# a neighbour on that CPU (a CI machine's other job) gets about 1 % of it in short slices
# instead of half of it: with a busy loop on the client's CPU and no priority, a duet's load
# P50 could not settle in 270 s. Not SCHED_FIFO (ENV_CLIENT_RT, now 0 unless a runner asks):
# a FIFO thread that never sleeps starves every normal task on its CPU until the kernel's
# fair server (RT throttling before 6.12) gives them 50 ms of each second at once, and the
# open-loop client then keeps no schedule for those 50 ms: the load series' P99 read 28-42 ms
# against 0.7 ms, and it measured the kernel's budget, not the server (docs/measurements.md,
# 2026-11-28). The nice is its session's autogroup's too: across sessions the kernel weighs
# groups, not processes (a nice -20 spinner beside another session's nice 19 tests got 56 %
# of the CPU, 99 % with its group at -20). Where the kernel refuses (no root, no
# CAP_SYS_NICE) the client runs at its nice and colocated() says so once.
ENV_CLIENT_NICE = "HFTBENCH_CLIENT_NICE"
CLIENT_NICE = -20
ENV_CLIENT_RT = "HFTBENCH_CLIENT_RT_PRIORITY"
CLIENT_RT_PRIORITY = 0  # SCHED_FIFO only for a runner whose client CPUs run nothing else (isolcpus)
# "1": a duet's two servers on CPUs of their own (colocated() says when that is worse)
ENV_DUET_SPLIT = "HFTBENCH_DUET_SPLIT"
ONLINE = Path("/sys/devices/system/cpu/online")
AUTOGROUP = Path("/proc/self/autogroup")


def pins_each_thread(client: str) -> bool:
    """Whether `client` takes --cpus (one thread pinned per CPU) and --busy-poll: hft-floor,
    and the clients whose roster line says pins_threads."""
    return client == FLOOR or client in roster.default().having("pins_threads")


def parse_cpu_list(text: str, source: str) -> tuple[int, ...]:
    """ "0-3,6" -> (0, 1, 2, 3, 6), in written order without repeats; UsageError naming
    `source` (the flag or variable) and the part that is wrong."""
    cpus: list[int] = []
    for part in text.split(","):
        part = part.strip()
        first, dash, last = part.partition("-")
        try:
            lo, hi = int(first), int(last if dash else first)
        except ValueError:
            raise UsageError(
                f"{source} {text!r}: {part!r} is not a CPU number or range (e.g. 2, 0-3 or 0-3,6)"
            ) from None
        if lo < 0 or lo > hi:
            raise UsageError(f"{source} {text!r}: {part!r} is not an ascending range of CPU numbers")
        cpus += [c for c in range(lo, hi + 1) if c not in cpus]
    return tuple(cpus)


def format_cpu_list(cpus: Iterable[int]) -> str:
    """(0, 1, 2, 5) -> "0-2,5": the kernel's own notation, consecutive runs folded."""
    runs: list[list[int]] = []
    for cpu in cpus:
        if runs and cpu == runs[-1][1] + 1:
            runs[-1][1] = cpu
        else:
            runs.append([cpu, cpu])
    return ",".join(f"{a}" if a == b else f"{a}-{b}" for a, b in runs)


def online_cpus(path: Path = ONLINE) -> set[int]:
    """The CPUs the kernel has online (isolated ones included, unlike the affinity mask)."""
    try:
        return set(parse_cpu_list(path.read_text().strip(), str(path)))
    except (OSError, UsageError):
        return set(range(os.cpu_count() or 1))


@dataclass(frozen=True)
class Placement:
    """CPUs for the server and for the clients; empty = not pinned."""

    server: tuple[int, ...] = ()
    clients: tuple[int, ...] = ()
    # client-hft spins on its sockets (--busy-poll): it has a CPU of its own beside the server's
    busy_poll: bool = False
    # A duet's second server on a CPU of its own (slot b; slot a takes `server`), where the
    # runner has one to give: then neither side's CPU work can slow the other (duet.py).
    second_server: tuple[int, ...] = ()
    # client-hft's SCHED_FIFO priority while it busy-polls on a CPU of its own (0: none)
    rt_priority: int = 0
    # the client's nice while it busy-polls on a CPU of its own (0: as hftbench's)
    nice: int = 0

    def server_of_slot(self, slot: str) -> tuple[int, ...]:
        """The CPUs of a duet's server in slot "a" or "b" (the build in each: rig.head_slot)."""
        return self.second_server if slot == "b" and self.second_server else self.server

    def client_flags(self, client: str) -> list[str]:
        if not (self.clients and pins_each_thread(client)):
            return []
        flags = ["--cpus", format_cpu_list(self.clients)]
        if self.busy_poll:
            flags.append("--busy-poll")
            if self.rt_priority:
                flags += ["--rt-priority", str(self.rt_priority)]
        return flags

    def confine_client(self) -> Callable[[], None] | None:
        """A preexec_fn that confines the client process to the client CPUs (None: unpinned)."""
        if not self.clients:
            return None
        cpus, nice = set(self.clients), self.nice

        def confine() -> None:
            os.sched_setaffinity(0, cpus)
            if nice:
                with contextlib.suppress(OSError):  # refused: colocated() has said so
                    os.setpriority(os.PRIO_PROCESS, 0, nice)
                    # With autogroup (kernel.sched_autogroup_enabled) a nice weighs only within
                    # its session's group, and each session's group gets an equal share: a
                    # client in a session of its own (cell.start_client) gives the group its nice.
                    if os.getsid(0) == os.getpid() and AUTOGROUP.exists():
                        AUTOGROUP.write_text(str(nice))

        return confine

    def check(self) -> None:
        """UsageError when no process may run on the client CPUs (a cgroup cpuset can forbid
        CPUs that are online): said once before the run, not as a failure in every cell."""
        if not self.clients:
            return
        try:
            subprocess.run(
                [sys.executable, "-c", ""], preexec_fn=self.confine_client(), check=True, timeout=30
            )
        except (OSError, subprocess.SubprocessError) as exc:
            raise UsageError(
                f"cannot run a client on CPUs {format_cpu_list(self.clients)} ({exc}); "
                "pass CPUs that this machine's cpuset allows (/sys/fs/cgroup/cpuset.cpus.effective)"
            ) from None

    def describe(self) -> dict[str, str]:
        """What results.json records (fingerprint.placement); {} when nothing is pinned."""
        out = {}
        if self.server:
            out["server_cpus"] = format_cpu_list(self.server)
        if self.second_server:
            out["second_server_cpus"] = format_cpu_list(self.second_server)
        if self.clients:
            out["client_cpus"] = format_cpu_list(self.clients)
        return out

    def colocated(self) -> Placement:
        """The gate's placement (a suite with `colocate: true`): the server(s) together on
        one CPU, and client-hft busy-polling on a CPU of its own.

        Pinned (a tuned runner): the last server CPU and the first client CPU. Unpinned (a
        shared VM): the last CPU this process may use for the server(s) and the first for
        the client. On one CPU, all three share it: nothing better is possible there.

        Why not everything on one CPU: a client sharing the servers' CPU couples the two
        sides of a duet through the scheduler (a server that spins 4 us more per order made
        the other side's P50 rise as much as its own: a uniform delay read x0.98 on the 2-core
        VM; docs/measurements.md, 2026-11-26). Beside them, spinning, the client sees a
        slowdown at its full size.

        The two servers of a duet share that CPU unless the runner asks for a CPU each
        ($HFTBENCH_DUET_SPLIT=1, with two or more server CPUs; which build takes which is drawn
        per pair of rounds: rig.head_slot). Split, a head that works after its replies cannot
        take time from base, but the two CPUs' own noise no longer cancels: on 16 vCPUs
        (scripts/experiments/dedicated-calibrate.sh, 2026-11-28) an A/A round's latency-1c P50
        ratio spread 8.6 % split against 0.68 % shared, and the gate guarded nothing at 10 %.
        Shared, the server's own CPU per order sees such work whole (×2.06 either way), so the
        verdict still fails it; a runner whose calibration guards its split placement may choose it.

        The busy-polling client runs at nice -20 (client_nice(); SCHED_FIFO where a runner asks
        for it: client_rt_priority()): its CPU is its own by design, and on a shared machine a
        neighbour must not take it off its sockets."""
        rt, nice = client_rt_priority(), client_nice()
        if self.server and self.clients and self.clients[0] not in self.server:
            second = (self.server[-2],) if len(self.server) > 1 and duet_split() else ()
            return Placement(
                (self.server[-1],),
                (self.clients[0],),
                busy_poll=True,
                second_server=second,
                rt_priority=rt,
                nice=nice,
            )
        allowed = sorted(self.server or os.sched_getaffinity(0))
        server = allowed[-1]
        others = [c for c in sorted(self.clients or os.sched_getaffinity(0)) if c != server]
        if not others:
            return Placement((server,), (server,))
        return Placement((server,), (others[0],), busy_poll=True, rt_priority=rt, nice=nice)


UNPINNED = Placement()


def client_rt_priority(env: Mapping[str, str] = os.environ) -> int:
    """The busy-polling client's SCHED_FIFO priority: $HFTBENCH_CLIENT_RT_PRIORITY (0 = none,
    1..99), else CLIENT_RT_PRIORITY; UsageError naming the variable when it is not one."""
    text = env.get(ENV_CLIENT_RT, "").strip()
    if not text:
        return CLIENT_RT_PRIORITY
    if not text.isdigit() or int(text) > 99:
        raise UsageError(f"{ENV_CLIENT_RT}={text!r}: pass 0 (no real-time priority) or 1..99")
    return int(text)


def duet_split(env: Mapping[str, str] = os.environ) -> bool:
    """Whether a duet's servers take a server CPU each: $HFTBENCH_DUET_SPLIT is "1" (unset or
    "0": they share one); UsageError naming the variable when it is neither."""
    text = env.get(ENV_DUET_SPLIT, "").strip()
    if text not in ("", "0", "1"):
        raise UsageError(
            f"{ENV_DUET_SPLIT}={text!r}: pass 1 (a CPU for each server of a duet) or 0 (one CPU for both)"
        )
    return text == "1"


def client_nice(env: Mapping[str, str] = os.environ) -> int:
    """The busy-polling client's nice: $HFTBENCH_CLIENT_NICE (-20..0; 0 = none), else
    CLIENT_NICE, or 0 with a note on stderr when this process may not lower a nice (the
    client would be refused as well); UsageError naming the variable when it is not one."""
    text = env.get(ENV_CLIENT_NICE, "").strip()
    if not text:
        nice = CLIENT_NICE
    elif text.lstrip("-").isdigit() and -20 <= int(text) <= 0:
        nice = int(text)
    else:
        raise UsageError(f"{ENV_CLIENT_NICE}={text!r}: pass a nice from -20 (the highest priority) to 0")
    if nice and not may_lower_nice():
        _say_nice_refused(nice)
        return 0
    return nice


@functools.cache
def _say_nice_refused(nice: int) -> None:
    """Once per process: every round asks for the placement again."""
    print(
        f"placement: the client keeps hftbench's nice: lowering it to {nice} needs root or "
        f"CAP_SYS_NICE (a neighbour on the client's CPU will take it off its sockets)",
        file=sys.stderr,
    )


CAP_SYS_NICE = 23  # linux/capability.h


def may_lower_nice(own: int | None = None, status: str | None = None, nice_limit: int | None = None) -> bool:
    """Whether this process may lower a nice below its own (`own`): CAP_SYS_NICE in its
    effective set (/proc/self/status, `status`), or an RLIMIT_NICE soft limit (`nice_limit`)
    that allows a nice under it (the lowest allowed is 20 - limit). Read, never tried: a probe
    that renices itself would change the process it asks about."""
    own = os.getpriority(os.PRIO_PROCESS, 0) if own is None else own
    if own <= -20:
        return True  # already at the highest priority: the client's nice is never lower
    if status is None:
        try:
            status = Path("/proc/self/status").read_text()
        except OSError:
            status = ""
    for line in status.splitlines():
        if line.startswith("CapEff:"):
            if int(line.split()[1], 16) >> CAP_SYS_NICE & 1:
                return True
            break
    else:  # no capability sets to read (not Linux's procfs): root may, as on any Unix
        if os.geteuid() == 0:
            return True
    if nice_limit is None:
        nice_limit = resource.getrlimit(resource.RLIMIT_NICE)[0]
        if nice_limit == resource.RLIM_INFINITY:
            return True
    return 20 - nice_limit < own


def resolve(
    server_cpus: str | None,
    client_cpus: str | None,
    environ: Mapping[str, str] = os.environ,
    online: set[int] | None = None,
) -> Placement:
    """The flags, else the variables; every CPU must be online (UsageError naming it)."""
    online = online_cpus() if online is None else online
    chosen = []
    for flag, env, value in (
        ("--server-cpus", ENV_SERVER, server_cpus),
        ("--client-cpus", ENV_CLIENT, client_cpus),
    ):
        source = flag
        if value is None and environ.get(env):
            value, source = environ[env], env
        cpus = parse_cpu_list(value, source) if value else ()
        missing = [c for c in cpus if c not in online]
        if missing:
            raise UsageError(
                f"{source} {value}: CPU {format_cpu_list(missing)} is not online here "
                f"(online: {format_cpu_list(sorted(online))}); pass CPUs of {ONLINE}"
            )
        chosen.append(cpus)
    return Placement(*chosen)
