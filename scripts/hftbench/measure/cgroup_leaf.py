"""The delegated cgroup v2 group of the runner's job unit, and the leaf its processes move to.

A group delegated to hftbench's user (cgroup v2; the self-hosted runner's job unit,
hft/runner/runner-units.sh: `Delegate=cpuset memory pids`) holds the job's processes, and v2
enables controllers only below a group without any ("no internal processes"). Where hftbench
can tell the group is its own to change (not_ours: the group and its cgroup.procs and
cgroup.subtree_control owned by its uid, what systemd's Delegate= hands a User=; as root, a
group systemd marked delegated), it first moves every process of that group into a leaf of
its own, `<group>/hft-bench-job` (take_over), then enables the controllers there, and
cgroups.py makes `hft-bench/...` beside the leaf; a later hftbench of the same job, started in
that leaf, uses its parent. A group that is not its own is left alone: no process of another
owner's group is ever moved. cgroup_parsing.detect decides where the leaf is; cgroups.probe moves.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

# The leaf the processes of a delegated group hftbench runs in are moved into, so that
# controllers can be enabled in that group for hft-bench/ beside it.
LEAF = "hft-bench-job"
# The extended attributes systemd sets on a group it delegated (trusted.* readable by root only).
DELEGATE_XATTRS = ("trusted.delegate", "user.delegate")


def _pids(text: str) -> list[int]:
    """cgroup.procs: one pid a line."""
    return [int(line) for line in text.split() if line.strip().isdigit()]


def _write(path: Path, value: str) -> None:
    with open(path, "w") as f:
        f.write(value)


def _read(path: Path) -> str:
    with open(path) as f:
        return f.read()


def holds_processes(group: Path) -> bool:
    """Whether the v2 group has processes of its own and is bound by the no-internal-process
    rule: every group but the real root (the one without a cgroup.type file)."""
    if not (group / "cgroup.type").is_file():
        return False
    try:
        return bool(_pids((group / "cgroup.procs").read_text()))
    except OSError:
        return False


def not_ours(group: Path, uid: int) -> str | None:
    """None where the v2 `group` is `uid`'s to reorganise, else why not, in words. Unprivileged:
    the group and its cgroup.procs and cgroup.subtree_control are owned by `uid` (what
    delegation is: systemd's Delegate= chowns exactly these to the unit's User=). Root owns
    every group, so owning says nothing: only a group marked delegated (the xattrs systemd
    sets) is its own; the unit a root shell runs in belongs to systemd."""
    if uid != 0:
        for path in (group, group / "cgroup.procs", group / "cgroup.subtree_control"):
            try:
                owner = path.stat().st_uid
            except OSError as exc:
                return f"cannot read {path} ({exc.strerror})"
            if owner != uid:
                return f"{path} is owned by uid {owner}, not by this user (uid {uid}): not delegated to it"
        return None
    for name in DELEGATE_XATTRS:
        try:
            if os.getxattr(group, name).strip() == b"1":
                return None
        except OSError:
            continue
        except AttributeError:  # no xattrs on this platform
            break
    return f"{group} is not marked delegated ({' or '.join(DELEGATE_XATTRS)}): it belongs to whoever made it"


def take_over(base: Path, leaf: Path | None, controllers: tuple[str, ...], attempts: int = 50) -> int:
    """Move every process of the v2 group `base` (ours: cgroup_parsing.detect checked not_ours) into
    `leaf`, then enable `controllers` for its children; the number of processes moved.
    A process the job forks meanwhile lands in the group again, and the kernel refuses the
    enabling (EBUSY) while any is there: then the next pass moves it. OSError where the kernel
    refuses anything else, or the group never empties."""
    if leaf is None:
        return 0
    leaf.mkdir(exist_ok=True)
    enable = " ".join(f"+{c}" for c in controllers)
    moved = 0
    for _ in range(attempts):
        for pid in _pids(_read(base / "cgroup.procs")):
            try:
                _write(leaf / "cgroup.procs", str(pid))
                moved += 1
            except ProcessLookupError:  # it exited meanwhile
                continue
        try:
            _write(base / "cgroup.subtree_control", enable)
            return moved
        except OSError as exc:
            if exc.errno != errno.EBUSY:
                raise
    raise OSError(
        errno.EBUSY, f"processes kept appearing after {attempts} passes", str(base / "cgroup.procs")
    )
