"""The delegated cgroup v2 group of the runner's job unit (measure/cgroup_leaf.py, issue 61), on
fake trees: a group of ours holding the job's processes has them moved into a leaf first (the
kernel's no-internal-process rule, played by FakeKernel, refuses the side's group without the
move), a group that is not ours is left alone and the run says why, and as root only a group
marked delegated is ours."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest
from hftbench.measure import cgroup_leaf, cgroup_parsing, cgroups


def _tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


JOB = "system.slice/hft-runner-job@7.service"  # the runner's job unit, Delegate=cpuset memory pids
JOB_SELF = f"0::/{JOB}\n"


def _delegated_tree(root: Path) -> tuple[Path, int]:
    """A fake cgroup v2 tree whose job group holds the job's processes (101, 102), as systemd
    leaves a unit with Delegate=: the controllers enabled for it, its cgroup.procs and
    cgroup.subtree_control owned by the unit's user. That user's uid: 4242 where the test runs
    as root (it chowns them), else the test's own."""
    _tree(
        root,
        {
            "cgroup.controllers": "cpuset cpu io memory hugetlb pids\n",
            "cgroup.procs": "1\n",
            f"{JOB}/cgroup.controllers": "cpuset memory pids\n",
            f"{JOB}/cgroup.type": "domain\n",
            f"{JOB}/cgroup.procs": "101\n102\n",
            f"{JOB}/cgroup.subtree_control": "",
        },
    )
    job = root / JOB
    if os.geteuid() != 0:
        return job, os.geteuid()
    for path in (job, job / "cgroup.procs", job / "cgroup.subtree_control"):
        os.chown(path, 4242, -1)
    return job, 4242


class FakeKernel:
    """cgroup v2's rules for the writes cgroups.py and cgroup_leaf.py make in a fake tree: a pid written to a
    cgroup.procs leaves the group it was in; enabling controllers in a group that has
    processes is refused (EBUSY, the no-internal-process rule), enabling one the group lacks
    too (ENOENT). `forks`: pids that appear in a group just before its first enabling, as a
    process of the job forking while hftbench moves the others."""

    def __init__(self, root: Path, forks: dict[Path, list[int]] | None = None) -> None:
        self.root = root
        self.forks = dict(forks or {})

    def write(self, path: Path, value: str) -> None:
        path = Path(path)
        if path.name == "cgroup.procs":
            pid = value.strip()
            for procs in self.root.rglob("cgroup.procs"):
                procs.write_text("".join(f"{p}\n" for p in procs.read_text().split() if p != pid))
            path.write_text((path.read_text() if path.exists() else "") + f"{pid}\n")
            return
        if path.name == "cgroup.subtree_control":
            group = path.parent
            procs = group / "cgroup.procs"
            for pid in self.forks.pop(group, []):
                procs.write_text(procs.read_text() + f"{pid}\n")
            if group != self.root and procs.is_file() and cgroup_parsing.pids_of(procs.read_text()):
                raise OSError(errno.EBUSY, "Device or resource busy", str(path))
            have = self.controllers(group)
            if any(word.lstrip("+-") not in have for word in value.split()):
                raise OSError(errno.ENOENT, "No such file or directory", str(path))
        path.write_text(value)

    def controllers(self, group: Path) -> list[str]:
        """A group's cgroup.controllers: a group made here (mkdir) has what its parent enabled."""
        if (group / "cgroup.controllers").is_file():
            return (group / "cgroup.controllers").read_text().split()
        enabled = group.parent / "cgroup.subtree_control"
        return [w.lstrip("+") for w in enabled.read_text().split()] if enabled.is_file() else []


def _files(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): p.read_text() for p in sorted(root.rglob("*")) if p.is_file()}


def test_a_delegated_group_holding_processes_moves_them_into_a_leaf_and_groups_go_beside_it(
    tmp_path, monkeypatch
):
    job, uid = _delegated_tree(tmp_path)
    leaf = job / cgroup_leaf.LEAF
    layout = cgroup_parsing.detect(tmp_path, JOB_SELF, uid=uid)
    assert layout.version == 2 and layout.base == {"": job} and layout.leaf == leaf
    monkeypatch.setattr(cgroups, "_write", FakeKernel(tmp_path).write)
    # Without the move the kernel refuses the side's group: the test can fail.
    with pytest.raises(OSError) as refused:
        cgroups.Group(cgroup_parsing.Layout(2, {"": job}), "hft-bench/run_x-0/head").create((), 64 << 20, 64)
    assert refused.value.errno == errno.EBUSY and cgroup_parsing.pids_of(
        (job / "cgroup.procs").read_text()
    ) == [
        101,
        102,
    ]
    # Every process, 103 forked during the first pass included, into the leaf; then the controllers.
    monkeypatch.setattr(cgroup_leaf, "_write", FakeKernel(tmp_path, forks={job: [103]}).write)
    assert cgroup_leaf.take_over(job, layout.leaf, cgroup_parsing.V2_CONTROLLERS) == 3
    assert (job / "cgroup.procs").read_text() == "" and cgroup_parsing.pids_of(
        (leaf / "cgroup.procs").read_text()
    ) == [
        101,
        102,
        103,
    ]
    assert (job / "cgroup.subtree_control").read_text() == "+cpuset +memory +pids"
    group = cgroups.Group(layout, "hft-bench/run_x-1/head")
    group.create((0,), 64 << 20, 64)
    assert group.path == job / "hft-bench" / "run_x-1" / "head"
    assert (group.path / "memory.max").read_text() == str(64 << 20) and (
        group.path / "cpuset.cpus"
    ).read_text() == "0"
    described = group.describe(64 << 20, 64)
    assert described["path"] == str(group.path) and f"run in {leaf}" in described["note"]
    # A later hftbench of the same job starts in the leaf: it uses its parent and moves nothing.
    again = cgroup_parsing.detect(tmp_path, f"0::/{JOB}/{cgroup_leaf.LEAF}\n", uid=uid)
    assert (
        again.base == {"": job}
        and again.leaf == leaf
        and cgroup_leaf.take_over(job, again.leaf, cgroup_parsing.V2_CONTROLLERS) == 0
    )
    # What a run says (policy, for_run), once probe found the layout.
    monkeypatch.setattr(cgroups, "probe", lambda: (layout, None))
    monkeypatch.delenv(cgroups.ENV, raising=False)
    assert cgroups.policy().note.startswith(cgroups.ON_NOTE) and str(leaf) in cgroups.policy().note
    made = cgroups.for_run("run_y", {"head": (), "base": ()})
    assert made.get("head").path.parent.parent == job / "hft-bench"
    assert "delegated to this user" in made.describe("base")["note"]


def test_a_group_that_is_not_ours_is_left_alone_and_the_run_says_why(tmp_path, monkeypatch):
    job, uid = _delegated_tree(tmp_path)
    before = _files(tmp_path)
    stranger = uid + 1
    layout = cgroup_parsing.detect(tmp_path, JOB_SELF, uid=stranger)
    assert layout.version == 0 and layout.leaf is None
    assert f"processes in hftbench's own group {job}" in layout.problem
    assert f"owned by uid {uid}, not by this user (uid {stranger})" in layout.problem
    monkeypatch.setattr(cgroups, "probe", lambda: (layout, layout.problem))
    monkeypatch.delenv(cgroups.ENV, raising=False)
    groups = cgroups.for_run("run_x", {"head": ()})
    assert groups.get("head") is None and "not ours to reorganise" in groups.describe("head")["none"]
    assert _files(tmp_path) == before and not (job / cgroup_leaf.LEAF).exists()
    # The real root group may hold processes (the rule spares it): nothing to move there.
    (tmp_path / "cgroup.subtree_control").write_text("cpuset memory pids")
    (tmp_path / "cgroup.controllers").write_text("cpuset memory pids\n")
    assert cgroup_parsing.detect(tmp_path, "0::/\n", uid=stranger) == cgroup_parsing.Layout(2, {"": tmp_path})


def test_as_root_only_a_group_marked_delegated_is_ours(tmp_path):
    """Root owns every group: the unit a root shell runs in is systemd's, and only the xattr
    systemd sets on a group it delegated makes it root's to reorganise."""
    job, _ = _delegated_tree(tmp_path)
    layout = cgroup_parsing.detect(tmp_path, JOB_SELF, uid=0)
    assert (
        layout.version == 0
        and "is not marked delegated (trusted.delegate or user.delegate)" in layout.problem
    )
    try:
        os.setxattr(job, "user.delegate", b"1")
    except OSError as exc:
        pytest.skip(f"{tmp_path} takes no user.* xattrs ({exc.strerror})")
    assert cgroup_parsing.detect(tmp_path, JOB_SELF, uid=0).leaf == job / cgroup_leaf.LEAF
