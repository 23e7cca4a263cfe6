"""cgroups.py's pure half: where this host's groups go (`detect`, a Layout) and what the
kernel's files say (/proc/self/cgroup, cpu.stat, cpuacct.usage, memory.*, cgroup.procs), as
functions of the files' texts, tested on fake trees; and the limits a server's group gets
(`$HFTBENCH_SERVER_MEMORY`, `$HFTBENCH_SERVER_PIDS`). cgroups.py makes, fills, reads and
removes the groups with them."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import UsageError
from . import cgroup_leaf
from .cgroup_leaf import LEAF

ENV_MEMORY = "HFTBENCH_SERVER_MEMORY"
ENV_PIDS = "HFTBENCH_SERVER_PIDS"
DEFAULT_MEMORY = 2 << 30  # bytes: the server needs tens of MiB; a head needing more is its fault
DEFAULT_PIDS = 1024  # tasks (threads count): the server runs a few dozen
# v1: the hierarchies a group needs (cpuacct for the CPU, cpuset for the CPUs, memory, pids);
# v2: the controllers enabled for it (cpu.stat's usage_usec needs none).
V1_CONTROLLERS = ("cpuset", "cpuacct", "memory", "pids")
V2_CONTROLLERS = ("cpuset", "memory", "pids")


def own_paths(text: str) -> dict[str, str]:
    """/proc/self/cgroup ("ID:CONTROLLERS:PATH" lines) as {controller: path}; the v2 line
    (ID 0, no controllers) under "". `name=systemd` and other named hierarchies are kept under
    their name."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        parts = line.strip().split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, path = parts
        for name in controllers.split(",") if controllers else [""]:
            out[name] = path
    return out


@dataclass(frozen=True)
class Layout:
    """Where this host's groups go. `version` 2 (unified: one tree, `base[""]`), 1 (one tree
    per controller: `base["cpuset"]` …) or 0 (none usable: `problem` says why in words). `base`
    is the directory of hftbench's own group in each tree: ours go below it."""

    version: int
    base: Mapping[str, Path] = field(default_factory=dict)
    problem: str | None = None
    # v2: the leaf below base that base's processes go into first (base is a group delegated to
    # us that holds processes, or hftbench already runs in that leaf); None: nothing to move.
    leaf: Path | None = None

    def describe(self) -> str:
        return {2: "cgroup v2", 1: "cgroup v1"}.get(self.version, f"no cgroups ({self.problem})")

    def note(self) -> str | None:
        """What hftbench changed in the group it runs in, in words; None where nothing."""
        if self.leaf is None:
            return None
        return (
            f"the processes of {self.leaf.parent} (delegated to this user) run in {self.leaf}: "
            "moved there so that controllers could be enabled for the servers' groups beside it "
            "(cgroup v2 enables them only below a group without processes)"
        )


def _own_dir(mount: Path, rel: str | None) -> Path:
    """The directory of the group `rel` (from /proc/self/cgroup) on `mount`; the mount itself
    where that path is not visible there (a cgroup namespace whose root is not the mount's)."""
    if rel:
        candidate = mount / rel.lstrip("/")
        if candidate.is_dir():
            return candidate
    return mount


def detect(root: Path, self_cgroup: str, uid: int | None = None) -> Layout:
    """The layout under `root` (/sys/fs/cgroup) for a process of `uid` (default: ours) whose
    /proc/self/cgroup is `self_cgroup`: v2 where `root` itself is the unified tree (its
    cgroup.controllers lists cpuset, memory and pids), v1 where each controller has its tree
    (root/cpuset …, a hybrid host's root/unified without controllers is not used), else
    version 0 with the reason. On v2, a group of ours holding processes gets a `leaf` to move
    them into (cgroup_leaf.take_over); one that is not ours is version 0, saying whose it is."""
    own = own_paths(self_cgroup)
    controllers_file = root / "cgroup.controllers"
    if controllers_file.is_file():
        try:
            have = controllers_file.read_text().split()
        except OSError as exc:
            return Layout(0, problem=f"cannot read {controllers_file} ({exc.strerror})")
        base = _own_dir(root, own.get(""))
        leaf = None
        if base.name == LEAF and base != root:  # an earlier hftbench of this job moved us here
            base, leaf = base.parent, base
        have_here = _controllers_at(base, have)
        missing = [c for c in V2_CONTROLLERS if c not in have_here]
        if missing:
            where = base / "cgroup.controllers"
            return Layout(0, problem=f"cgroup v2 without the {', '.join(missing)} controller in {where}")
        if leaf is None and cgroup_leaf.holds_processes(base):
            leaf = base / LEAF
        if leaf is not None:
            why_not = cgroup_leaf.not_ours(base, os.geteuid() if uid is None else uid)
            if why_not:
                return Layout(
                    0,
                    problem=(
                        f"cgroup v2 with processes in hftbench's own group {base} (controllers are "
                        f"enabled only below a group without any), and it is not ours to reorganise: "
                        f"{why_not}"
                    ),
                )
        return Layout(2, {"": base}, leaf=leaf)
    if not root.is_dir():
        return Layout(0, problem=f"{root} does not exist (no cgroupfs mounted)")
    base = {}
    missing = []
    for name in V1_CONTROLLERS:
        mount = root / name
        if (mount / "tasks").is_file():
            base[name] = _own_dir(mount, own.get(name))
        else:
            missing.append(name)
    if missing:
        hybrid = (root / "unified").is_dir()
        unified = " (a cgroup2 tree without controllers does not count)" if hybrid else ""
        what = f"cgroup v1 without the {', '.join(missing)} hierarchy under {root}{unified}"
        return Layout(0, problem=what)
    return Layout(1, base)


def _controllers_at(base: Path, fallback: list[str]) -> list[str]:
    try:
        return (base / "cgroup.controllers").read_text().split()
    except OSError:
        return fallback


def cpu_stat_usage_ns(text: str) -> int:
    """v2 cpu.stat's usage_usec, in ns; ValueError naming the file when it has none."""
    for line in text.splitlines():
        key, _, value = line.partition(" ")
        if key == "usage_usec":
            return int(value) * 1000
    raise ValueError("cpu.stat has no usage_usec line")


def cpuacct_usage_ns(text: str) -> int:
    """v1 cpuacct.usage: one number, ns."""
    return int(text.strip())


def memory_bytes(text: str) -> int | None:
    """memory.peak / memory.current / memory.max_usage_in_bytes: a number of bytes ("max" and
    an empty file: None)."""
    text = text.strip()
    return int(text) if text and text != "max" else None


def anon_bytes(stat_text: str, version: int) -> int:
    """The group's anonymous memory in bytes from its memory.stat: v2 `anon`, v1 `total_rss`
    (the group and below) or `rss`. Anonymous, not memory.current: the page cache of the
    server's log and binary, and socket buffers, are charged to the group too and move with
    the host, not with what the server keeps. ValueError when the file has none."""
    stats = dict(line.split(" ", 1) for line in stat_text.splitlines() if " " in line)
    for key in ("anon",) if version == 2 else ("total_rss", "rss"):
        if key in stats:
            return int(stats[key])
    raise ValueError("memory.stat has no anon (v2) or rss (v1) line")


def pids_of(text: str) -> list[int]:
    """cgroup.procs / tasks: one pid a line."""
    return [int(line) for line in text.split() if line.strip().isdigit()]


SIZE_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def parse_size(text: str, source: str) -> int:
    """ "2G", "512M", "1073741824", "1.5G" (binary units, an optional "iB"/"B") -> bytes;
    UsageError naming `source` and the fix."""
    raw = text.strip().upper().removesuffix("IB").removesuffix("B")
    unit = raw[-1:] if raw[-1:] in SIZE_UNITS and raw[-1:] else ""
    number = raw[: len(raw) - len(unit)]
    try:
        value = float(number)
    except ValueError:
        value = -1.0
    if value <= 0:
        raise UsageError(f"{source}={text!r}: pass a size such as 2G, 512M or a number of bytes")
    size = int(value * SIZE_UNITS[unit])
    if size < 16 << 20:
        raise UsageError(f"{source}={text!r}: a server needs more than 16 MiB; pass 64M or more")
    return size


def limits(env: Mapping[str, str] = os.environ) -> tuple[int, int]:
    """(memory bytes, pids) a side's group is limited to: $HFTBENCH_SERVER_MEMORY and
    $HFTBENCH_SERVER_PIDS, else the defaults; UsageError naming the variable."""
    memory = parse_size(env[ENV_MEMORY], ENV_MEMORY) if env.get(ENV_MEMORY, "").strip() else DEFAULT_MEMORY
    text = env.get(ENV_PIDS, "").strip()
    if not text:
        return memory, DEFAULT_PIDS
    if not text.isdigit() or int(text) < 16:
        raise UsageError(f"{ENV_PIDS}={text!r}: pass a number of tasks, 16 or more (default {DEFAULT_PIDS})")
    return memory, int(text)
