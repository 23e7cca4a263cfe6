"""Each side's server in a cgroup of its own: its CPUs, a memory and a pids limit, and its CPU
read from the group, so that what its processes spend is counted even after they exit.

Why: CPU per order read from /proc counts the server and its *live* descendants. A head whose
server forks short-lived children that spin (on the CPU base shares with it) and exit reads
as cheap as base while it slows base down; the group's own counter (v2 `cpu.stat`
usage_usec, v1 `cpuacct.usage`) keeps the CPU of every process that was ever in it.

Per run and side a group `hft-bench/<run id>-<token>/<side>` (the token: two runs whose
folders share a name, `--out x/run` and `--out y/run`, must never share a group), made under
the cgroup hftbench itself runs in (in each hierarchy: so the limits set on the job still
hold, and only groups we made are touched), with
- `cpuset.cpus`: the side's CPUs (placement.py; unpinned: all its parent allows),
- a memory limit (`$HFTBENCH_SERVER_MEMORY`, default 2 GiB) and a pids limit
  (`$HFTBENCH_SERVER_PIDS`, default 1024): a head that forks without end or eats the host's
  memory is stopped by the kernel, and its cells fail as its own.

The server enters its group in the child between fork and exec (Server's preexec): whatever
it runs after that, bwrap and the head's code included, starts inside; no child can be forked
before the move and escape it, as one could between a spawn and a later write of its pid.
The head cannot leave either: in the sandbox /sys is read-only (bwrap `--ro-bind / /`) and
its capabilities are dropped, so no write to any `cgroup.procs` goes through.

After the run the side's group is emptied (SIGKILL to the pids listed in *its own*
`cgroup.procs`, nothing else) and removed, the run's group and `hft-bench/` with it where
empty (a concurrent run's keep them), also when the run fails.

A group delegated to hftbench's user (cgroup v2; the self-hosted runner's job unit) holds the
job's processes, and v2 enables controllers only below a group without any: cgroup_leaf.py
moves them into a leaf of their own first, where the group is hftbench's to change, and
`hft-bench/...` goes beside the leaf. results.json's `server.cgroup` says so (`note`).

Where groups cannot be made (not root and nothing delegated, a read-only cgroupfs, a
controller missing, v2 with processes in a group that is not hftbench's to change) every run
folder says why (results.json's `server.cgroup`), ab says it once on stderr, and CPU is read
from /proc as before; ab's `--require-sandbox` does not refuse for it (a runner installed
before its job unit delegated would refuse every pull request). `HFT_CGROUPS=on` refuses
instead (for a runner that can), `HFT_CGROUPS=off` never tries. The parsing is pure functions
of the files' texts, tested on fake trees (cgroup_parsing.py).
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import UsageError
from . import cgroup_leaf
from .cgroup_parsing import (
    V2_CONTROLLERS,
    Layout,
    anon_bytes,
    cpu_stat_usage_ns,
    cpuacct_usage_ns,
    detect,
    limits,
    memory_bytes,
    pids_of,
)
from .placement import format_cpu_list

ENV = "HFT_CGROUPS"  # on, off, auto (unset)
ROOT = Path("/sys/fs/cgroup")
SELF = Path("/proc/self/cgroup")
TOP = "hft-bench"
FIX = (
    "run hftbench as root where /sys/fs/cgroup is writable: cgroup v1 with the cpuset, cpuacct, "
    "memory and pids hierarchies, or cgroup v2 with those controllers and hftbench in the root "
    "group of its cgroup namespace (v2 enables controllers only below a group without "
    "processes); or, unprivileged, in a cgroup v2 group delegated to its user (systemd: "
    "Delegate=cpuset memory pids, as hft/runner/runner-units.sh's job unit has); or set "
    f"{ENV}=off to measure without groups"
)


# ---------------------------------------------------------------------------------------------
# The filesystem


def _write(path: Path, value: str) -> None:
    with open(path, "w") as f:
        f.write(value)


def _read(path: Path) -> str:
    with open(path) as f:
        return f.read()


class Group:
    """One side's group, `rel` (hft-bench/<run>-<token>/<side>) below each tree's base of `layout`."""

    def __init__(self, layout: Layout, rel: str) -> None:
        self.layout = layout
        self.rel = rel
        self.dirs = {name: base / rel for name, base in layout.base.items()}
        self._memory_peak_file: str | None = None

    @property
    def path(self) -> Path:
        """The directory its CPU is read from (v2: the group; v1: its cpuacct group)."""
        return self.dirs["" if self.layout.version == 2 else "cpuacct"]

    def _unique_dirs(self) -> list[Path]:
        return list(dict.fromkeys(self.dirs.values()))

    def create(self, cpus: Iterable[int], memory: int, pids: int) -> None:
        """Make the group and its parents, then its limits; OSError where the kernel refuses."""
        cpus = tuple(cpus)
        for attempt in range(3):
            try:
                self._make_dirs()
                break
            except FileNotFoundError:  # a run that ended removed hft-bench/ between two mkdirs
                if attempt == 2:
                    raise
        if self.layout.version == 2:
            leaf = self.dirs[""]
            if cpus:
                _write(leaf / "cpuset.cpus", format_cpu_list(cpus))
            _write(leaf / "memory.max", str(memory))
            _write(leaf / "pids.max", str(pids))
            return
        if cpus:
            _write(self.dirs["cpuset"] / "cpuset.cpus", format_cpu_list(cpus))
        _write(self.dirs["memory"] / "memory.limit_in_bytes", str(memory))
        _write(self.dirs["pids"] / "pids.max", str(pids))

    def _make_dirs(self) -> None:
        """The group's folders level by level: v2 enables the controllers for each parent's
        children; v1 fills each new cpuset from its parent's (one starts empty, and no task
        may join an empty cpuset)."""
        if self.layout.version == 2:
            enable = " ".join(f"+{c}" for c in V2_CONTROLLERS)
            parent = self.layout.base[""]
            for part in Path(self.rel).parts:
                _write(parent / "cgroup.subtree_control", enable)
                parent = parent / part
                parent.mkdir(exist_ok=True)
            return
        for name, base in self.layout.base.items():
            parent = base
            for part in Path(self.rel).parts:
                child = parent / part
                child.mkdir(exist_ok=True)
                if name == "cpuset":
                    for knob in ("cpuset.cpus", "cpuset.mems"):
                        if not _read(child / knob).strip():
                            _write(child / knob, _read(parent / knob).strip())
                parent = child

    def enter(self) -> None:
        """Move the calling process into the group (every tree). Meant for a preexec_fn: the
        child moves itself before it execs, so nothing it starts can be outside."""
        pid = str(os.getpid())
        for d in self._unique_dirs():
            _write(d / "cgroup.procs", pid)

    def preexec(self, then: Callable[[], None] | None = None) -> Callable[[], None]:
        """A preexec_fn: enter the group, then `then` (die_with_parent, the CPU mask)."""

        def run() -> None:
            self.enter()
            if then is not None:
                then()

        return run

    def pids(self) -> list[int]:
        """Every process in the group, in any of its trees (an empty list once it is gone)."""
        found: list[int] = []
        for d in self._unique_dirs():
            try:
                found += [p for p in pids_of(_read(d / "cgroup.procs")) if p not in found]
            except OSError:
                continue
        return found

    def holds(self, pid: int) -> bool:
        try:
            return pid in pids_of(_read(self.path / "cgroup.procs"))
        except OSError:
            return False

    def cpu_seconds(self) -> float | None:
        """CPU the group's processes have used since it was made, exited ones included; None
        when it cannot be read."""
        try:
            if self.layout.version == 2:
                return cpu_stat_usage_ns(_read(self.path / "cpu.stat")) / 1e9
            return cpuacct_usage_ns(_read(self.path / "cpuacct.usage")) / 1e9
        except (OSError, ValueError):
            return None

    def memory_peak(self) -> int | None:
        """The group's memory high-water mark in bytes since it was made (v2 memory.peak,
        memory.current before kernel 5.19; v1 memory.max_usage_in_bytes); None: unreadable."""
        d = self.dirs["" if self.layout.version == 2 else "memory"]
        v2 = self.layout.version == 2
        names = ("memory.peak", "memory.current") if v2 else ("memory.max_usage_in_bytes",)
        for name in names:
            try:
                return memory_bytes(_read(d / name))
            except (OSError, ValueError):
                continue
        return None

    def anon_memory(self) -> int | None:
        """The anonymous memory resident in the group now (bytes; memory.stat, anon_bytes): what
        its processes keep, the live ones; None when it cannot be read."""
        d = self.dirs["" if self.layout.version == 2 else "memory"]
        try:
            return anon_bytes(_read(d / "memory.stat"), self.layout.version)
        except (OSError, ValueError):
            return None

    def remove(self, timeout_s: float = 5.0) -> str | None:
        """SIGKILL what is left in the group (only its own pids), then remove it, and the run's
        group and hft-bench/ above it where empty (another side or run still there keeps them:
        it removes them); None when done, else what is left, in words."""
        deadline = time.monotonic() + timeout_s
        while (left := self.pids()) and time.monotonic() < deadline:
            for pid in left:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.02)
        stuck = []
        for d in self._unique_dirs():
            for path in (d, d.parent, d.parent.parent):  # the side's group, the run's, hft-bench/
                while True:
                    try:
                        path.rmdir()
                        break
                    except FileNotFoundError:
                        break
                    except OSError as exc:
                        if path != d and exc.errno in (errno.ENOTEMPTY, errno.EBUSY):
                            break
                        if time.monotonic() > deadline:
                            stuck.append(f"{path} ({exc.strerror})")
                            break
                        time.sleep(0.02)
        return "; ".join(stuck) or None

    def describe(self, memory: int, pids: int) -> dict[str, object]:
        """The `cgroup` object of results.json's `server`: with `note` where hftbench moved the
        processes of the group it runs in (Layout.note)."""
        described: dict[str, object] = {
            "path": str(self.path),
            "version": self.layout.version,
            "memory_max_bytes": memory,
            "pids_max": pids,
        }
        note = self.layout.note()
        return {**described, "note": note} if note else described


# ---------------------------------------------------------------------------------------------
# Policy: once per process


@dataclass(frozen=True)
class Policy:
    enabled: bool
    note: str  # what the verdict and the run folders say: ON_NOTE, or "none: <why>"
    layout: Layout = field(default_factory=lambda: Layout(0))

    def to_json(self) -> dict[str, object]:
        return {"groups": self.layout.describe() if self.enabled else "none", "note": self.note}


ON_NOTE = (
    "each side's server ran in a cgroup of its own (cpuset, memory and pids limits); "
    "CPU per order read from it"
)


def policy(*, say: bool = False) -> Policy:
    """Whether servers get groups here (module docstring); UsageError naming what is missing
    and the fix where HFT_CGROUPS=on requires them and none can be made. With `say`, a run
    without them is said once on stderr (ab); every run folder records it anyway (results.json's
    server.cgroup)."""
    mode = os.environ.get(ENV, "auto").strip().lower() or "auto"
    if mode not in ("on", "off", "auto"):
        raise UsageError(f"{ENV}={mode!r}: use on, off or auto")
    if mode == "off":
        return Policy(False, f"none: {ENV}=off")
    limits()  # a bad variable is said before anything runs
    layout, problem = probe()
    if problem is None:
        note = layout.note()
        if say and note:
            _warn(f"note: {note}")
        return Policy(True, f"{ON_NOTE}; {note}" if note else ON_NOTE, layout)
    if mode == "on":
        raise UsageError(
            f"each side's server must run in a cgroup of its own ({ENV}=on), and none can be "
            f"made here: {problem}. Fix: {FIX}"
        )
    if say:
        _warn(
            f"note: servers run without cgroups ({problem}); CPU per order counts live processes "
            f"only (exited children are nobody's); {ENV}=on refuses instead"
        )
    return Policy(False, f"none: {problem}", layout)


@functools.cache
def _warn(message: str) -> None:
    print(f"hftbench: {message}", file=sys.stderr, flush=True)


@functools.cache
def probe() -> tuple[Layout, str | None]:
    """This host's layout, and None when a group can be made and removed here, else why not.
    In a delegated v2 group holding processes, those are first moved into its leaf
    (cgroup_leaf.take_over)."""
    try:
        self_text = SELF.read_text()
    except OSError as exc:
        return Layout(0), f"cannot read {SELF} ({exc.strerror})"
    layout = detect(ROOT, self_text)
    if layout.version == 0:
        return layout, layout.problem
    try:
        if layout.leaf is not None:  # v2 only: a delegated group's processes into their leaf
            cgroup_leaf.take_over(layout.base[""], layout.leaf, V2_CONTROLLERS)
    except OSError as exc:
        where = exc.filename or layout.base[""]
        base = layout.base[""]
        return (
            layout,
            f"cgroup v2: cannot move the processes of {base} into {layout.leaf} ({where}: {exc.strerror})",
        )
    group = Group(layout, f"{TOP}/probe-{os.getpid()}-{uuid.uuid4().hex[:6]}/probe")
    memory, pids = limits()
    try:
        group.create((), memory, pids)
        subprocess.run(["true"], preexec_fn=group.preexec(), check=True, timeout=10)
    except OSError as exc:
        where = exc.filename or group.path
        problem = f"{layout.describe()}: cannot make a group ({where}: {exc.strerror})"
        if layout.version == 2 and exc.errno == errno.EBUSY:
            problem += "; v2 enables controllers only below a group without processes, and ours has them"
        group.remove(timeout_s=1.0)
        return layout, problem
    except subprocess.SubprocessError as exc:
        group.remove(timeout_s=1.0)
        return layout, f"{layout.describe()}: a process cannot join a group made in {group.path} ({exc})"
    left = group.remove(timeout_s=1.0)
    return layout, (f"{layout.describe()}: cannot remove a group ({left})" if left else None)


class RunGroups:
    """The groups of one run's sides: `for_run(run_id, {side: cpus})` makes them (none where
    the policy says no), `get(side)`, and `remove()` in a finally."""

    def __init__(self, groups: dict[str, Group], memory: int, pids: int, note: str) -> None:
        self.groups = groups
        self.memory, self.pids = memory, pids
        self.note = note

    def get(self, side: str) -> Group | None:
        return self.groups.get(side)

    def describe(self, side: str) -> dict[str, object]:
        group = self.groups.get(side)
        return group.describe(self.memory, self.pids) if group else {"none": self.note}

    def remove(self) -> None:
        for side, group in self.groups.items():
            left = group.remove()
            if left:
                _warn(f"warning: the {side} server's cgroup could not be removed: {left}")
        self.groups = {}


def for_run(run_id: str, sides: Mapping[str, Iterable[int]]) -> RunGroups:
    """A group per side (its CPUs: `sides[side]`, empty = all its parent allows) under
    hft-bench/<run_id>-<token>/ (unique: run ids are folder names, and folder names repeat), or
    none, with the reason, where the policy says no. A group that
    cannot be made after the probe could is an error naming it (OSError)."""
    chosen = policy()
    memory, pids = limits()
    if not chosen.enabled:
        return RunGroups({}, memory, pids, chosen.note)
    made: dict[str, Group] = {}
    # Unique per call: a group shared by two runs is emptied (SIGKILL) by whichever ends first,
    # the other's server with it (two tests' `--out tmp/run` in parallel, CI 2026-12-02).
    rel = f"{TOP}/{run_id}-{uuid.uuid4().hex[:8]}"
    try:
        for side, cpus in sides.items():
            made[side] = Group(chosen.layout, f"{rel}/{side}")
            made[side].create(tuple(cpus), memory, pids)
    except OSError as exc:  # the probe's group could be made: the side's CPUs, most likely
        RunGroups(made, memory, pids, "").remove()
        cpus = {s: format_cpu_list(c) or "all" for s, c in sides.items()}
        problem = f"cannot make {exc.filename or run_id} ({exc.strerror}; CPUs {cpus})"
        if os.environ.get(ENV, "").strip().lower() == "on":
            raise UsageError(
                f"{ENV}=on: {problem}. Fix: pass server CPUs the parent cpuset allows, or {FIX}"
            ) from None
        _warn(f"warning: servers run without cgroups: {problem}")
        return RunGroups({}, memory, pids, f"none: {problem}")
    return RunGroups(made, memory, pids, chosen.note)
