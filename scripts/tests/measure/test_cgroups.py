"""Each side's server in a cgroup of its own (measure/cgroups.py, issue 61).

The parsing on fixed texts and fake trees; then, where this machine can make groups (root, a
writable cgroupfs with the controllers), the real thing: a group counts the CPU of children
that have exited, its removal kills what is left in it and nothing else, a process in the
sandbox cannot leave it, and the hostile head of hostile_head.spinning_children, whose
children burn CPU beside base and exit, reads as the expensive side it is with groups on and
as cheap as base with them off (`HFT_CGROUPS=off`: the attack succeeds, so the test can fail)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import numpy as np
import pytest
from hftbench.config import Scenario
from hftbench.design_names import DUET
from hftbench.errors import UsageError
from hftbench.measure import cgroup_parsing, cgroups, proc_sampler, sandbox
from hftbench.measure.plan import Plan
from hftbench.measure.rig import Rig
from hftbench.measure.served import Served
from support.hostile_head import ROOT, SERVER, clean_up, spinning_children, wait_for_none_left

CLIENT = ROOT / "bin" / "client-hft"

V1_SELF = """9:name=systemd:/
8:pids:/
4:memory:/process_api/e381
3:cpuset:/
2:cpuacct:/
1:cpu:/
0::/
"""
V2_SELF = "0::/user.slice/job.scope\n"


def _tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def test_own_paths_reads_each_hierarchy_and_the_unified_line():
    assert cgroup_parsing.own_paths(V1_SELF) == {
        "name=systemd": "/",
        "pids": "/",
        "memory": "/process_api/e381",
        "cpuset": "/",
        "cpuacct": "/",
        "cpu": "/",
        "": "/",
    }
    assert cgroup_parsing.own_paths("5:cpu,cpuacct:/a/b\n0::/x\n") == {
        "cpu": "/a/b",
        "cpuacct": "/a/b",
        "": "/x",
    }
    assert cgroup_parsing.own_paths("garbage\n") == {}


def test_a_v1_host_has_a_tree_per_controller_and_our_groups_go_under_our_own(tmp_path):
    root = _tree(tmp_path, {f"{c}/tasks": "" for c in ("cpu", "cpuacct", "cpuset", "memory", "pids")})
    (root / "memory" / "process_api" / "e381").mkdir(parents=True)
    (root / "unified").mkdir()
    layout = cgroup_parsing.detect(root, V1_SELF)
    assert layout.version == 1 and layout.problem is None
    assert layout.base == {
        "cpuset": root / "cpuset",
        "cpuacct": root / "cpuacct",
        "memory": root / "memory/process_api/e381",
        "pids": root / "pids",
    }
    # a group path the mount does not show (another cgroup namespace's): the mount's root
    assert cgroup_parsing.detect(root, "4:memory:/elsewhere\n").base["memory"] == root / "memory"


def test_a_v1_host_without_a_controller_is_none_and_says_which(tmp_path):
    root = _tree(tmp_path, {f"{c}/tasks": "" for c in ("cpuacct", "cpuset", "memory")})
    (root / "unified").mkdir()
    layout = cgroup_parsing.detect(root, V1_SELF)
    assert layout.version == 0
    assert "cgroup v1 without the pids hierarchy" in layout.problem and "cgroup2 tree" in layout.problem
    assert "does not exist" in cgroup_parsing.detect(tmp_path / "none", V1_SELF).problem


def test_a_v2_host_is_one_tree_and_needs_cpuset_memory_and_pids_where_we_run(tmp_path):
    scope = "user.slice/job.scope/cgroup.controllers"
    root = _tree(
        tmp_path,
        {
            "cgroup.controllers": "cpuset cpu io memory hugetlb pids rdma misc\n",
            scope: "cpuset cpu memory pids\n",
        },
    )
    layout = cgroup_parsing.detect(root, V2_SELF)
    assert layout.version == 2 and layout.base == {"": root / "user.slice" / "job.scope"}
    (root / "user.slice/job.scope/cgroup.controllers").write_text("cpu pids\n")  # not delegated
    layout = cgroup_parsing.detect(root, V2_SELF)
    assert layout.version == 0 and "cgroup v2 without the cpuset, memory controller" in layout.problem
    assert str(root / "user.slice/job.scope/cgroup.controllers") in layout.problem


def test_cpu_and_memory_texts():
    stat = "usage_usec 1500123\nuser_usec 1000000\nsystem_usec 500123\nnr_periods 0\n"
    assert cgroup_parsing.cpu_stat_usage_ns(stat) == 1_500_123_000
    with pytest.raises(ValueError, match="usage_usec"):
        cgroup_parsing.cpu_stat_usage_ns("user_usec 1\n")
    assert cgroup_parsing.cpuacct_usage_ns("988808322\n") == 988_808_322
    assert (
        cgroup_parsing.memory_bytes("1142784\n") == 1_142_784 and cgroup_parsing.memory_bytes("max\n") is None
    )
    assert cgroup_parsing.pids_of("12\n345\n\n") == [12, 345]


def test_the_limits_come_from_the_variables_and_a_bad_one_names_itself_and_the_fix():
    assert cgroup_parsing.limits({}) == (2 << 30, 1024)
    assert cgroup_parsing.limits({cgroup_parsing.ENV_MEMORY: "512M", cgroup_parsing.ENV_PIDS: "64"}) == (
        512 << 20,
        64,
    )
    assert cgroup_parsing.limits({cgroup_parsing.ENV_MEMORY: "1.5GiB"})[0] == 3 << 29
    assert cgroup_parsing.limits({cgroup_parsing.ENV_MEMORY: "1073741824"})[0] == 1 << 30
    with pytest.raises(UsageError, match=r"HFTBENCH_SERVER_MEMORY='lots'.*2G, 512M"):
        cgroup_parsing.limits({cgroup_parsing.ENV_MEMORY: "lots"})
    with pytest.raises(UsageError, match="more than 16 MiB"):
        cgroup_parsing.limits({cgroup_parsing.ENV_MEMORY: "1M"})
    with pytest.raises(UsageError, match=r"HFTBENCH_SERVER_PIDS='2'.*16 or more"):
        cgroup_parsing.limits({cgroup_parsing.ENV_PIDS: "2"})


def test_where_no_group_can_be_made_a_run_says_why_and_hft_cgroups_on_refuses(monkeypatch, capsys):
    problem = "cgroup v1 without the pids hierarchy under /sys/fs/cgroup"
    monkeypatch.setattr(cgroups, "probe", lambda: (cgroup_parsing.Layout(0, problem=problem), problem))
    monkeypatch.delenv(cgroups.ENV, raising=False)
    chosen = cgroups.policy()
    assert not chosen.enabled and chosen.note == f"none: {problem}"
    assert capsys.readouterr().err == ""  # a run records it; ab says it (say=True)
    groups = cgroups.for_run("run_x", {"server": (0,)})
    assert groups.get("server") is None and groups.describe("server") == {"none": f"none: {problem}"}
    cgroups.policy(say=True)
    assert problem in capsys.readouterr().err
    monkeypatch.setenv(cgroups.ENV, "on")
    with pytest.raises(UsageError, match=r"HFT_CGROUPS=on.*pids hierarchy.*Fix: run hftbench as root"):
        cgroups.policy()
    monkeypatch.setenv(cgroups.ENV, "off")
    assert cgroups.policy().note == f"none: {cgroups.ENV}=off"
    monkeypatch.setenv(cgroups.ENV, "sometimes")
    with pytest.raises(UsageError, match="use on, off or auto"):
        cgroups.policy()


# The real thing, where this machine can make groups.

needs_groups = pytest.mark.skipif(
    cgroups.probe()[1] is not None, reason=f"no cgroup can be made here ({cgroups.probe()[1]}): {cgroups.FIX}"
)
needs_sandbox = pytest.mark.skipif(sandbox.probe() is not None, reason=f"no sandbox here: {sandbox.probe()}")
needs_binaries = pytest.mark.usefixtures("real_binaries")  # conftest.py: skips without bin/; measuring
BURN = "i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done"  # ~0.15 s of one CPU in sh


@pytest.fixture
def groups(monkeypatch):
    monkeypatch.delenv(cgroups.ENV, raising=False)
    made = cgroups.for_run(f"test_{uuid.uuid4().hex[:8]}", {"head": ()})
    yield made
    made.remove()


@needs_groups
def test_a_group_counts_the_cpu_of_children_that_have_exited_and_proc_does_not(groups):
    group = groups.get("head")
    proc = subprocess.Popen(["sh", "-c", f"( {BURN} ); ( {BURN} ); sleep 30"], preexec_fn=group.preexec())
    try:
        deadline = time.monotonic() + 20
        while (group.cpu_seconds() or 0) < 0.1 and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.5)  # both subshells have burnt and exited: only sh and sleep are left
        live = proc_sampler.cpu_seconds(proc.pid) or 0.0
        assert group.holds(proc.pid) and len(group.pids()) == 2
        assert group.cpu_seconds() > 0.1 > live + 0.05, (group.cpu_seconds(), live)
        assert group.memory_peak() > 0
    finally:
        proc.kill()
        proc.wait()


@needs_groups
def test_removing_a_group_kills_what_is_left_in_it_and_nothing_else(groups):
    tag = uuid.uuid4().hex[:12]
    group = groups.get("head")
    inside = subprocess.Popen(["env", f"HFT_PWN={tag}", "sleep", "1000"], preexec_fn=group.preexec())
    outside = subprocess.Popen(["env", f"HFT_PWN={tag}", "sleep", "1000"])
    try:
        assert group.pids() == [inside.pid]
        groups.remove()
        assert inside.wait(timeout=5) == -9 and outside.poll() is None
        assert not group.path.exists() and not group.path.parent.exists()
    finally:
        # by PID: a starved `env` not yet exec'd into sleep carries no HFT_PWN for clean_up to
        # find, and outside.wait() then held its worker for the sleep's 1000 s (a busy make test)
        for proc in (inside, outside):
            proc.kill()
            proc.wait()
        clean_up(tag, [])


@needs_groups
def test_two_runs_with_the_same_run_id_get_groups_of_their_own(monkeypatch):
    """Run ids are folder names: two runs' `--out a/run` and `--out b/run` once shared a group,
    and the first to end killed the other's server (CI, 2026-12-02)."""
    monkeypatch.delenv(cgroups.ENV, raising=False)
    run_id = f"run_{uuid.uuid4().hex[:6]}"
    first, second = cgroups.for_run(run_id, {"server": ()}), cgroups.for_run(run_id, {"server": ()})
    other = subprocess.Popen(["sleep", "1000"], preexec_fn=second.get("server").preexec())
    try:
        assert first.get("server").path != second.get("server").path
        first.remove()
        assert other.poll() is None and second.get("server").holds(other.pid)
    finally:
        second.remove()
        assert other.wait(timeout=5) == -9


@needs_groups
@needs_sandbox
def test_in_the_sandbox_a_process_cannot_leave_its_group_and_outside_it_root_can(groups):
    """Back into the group hftbench runs in, in every hierarchy: the sandbox's /sys is
    read-only. Unsandboxed (as root) the same lines move it: the test can fail."""
    group = groups.get("head")
    targets = [base / "cgroup.procs" for base in group.layout.base.values()]
    script = (
        'read -r me _ < /proc/self/stat; for f in "$@"; do echo $me > $f && echo LEFT $f; done; '
        "cat /proc/self/cgroup"
    )
    cmd = ["sh", "-c", script, "escape", *map(str, targets)]
    jailed = subprocess.run(
        sandbox.wrap(cmd, writable=()), capture_output=True, text=True, preexec_fn=group.preexec()
    )
    assert "LEFT" not in jailed.stdout and "Read-only file system" in jailed.stderr
    assert group.rel in jailed.stdout  # /proc/self/cgroup: still in the side's group
    if os.geteuid() == 0:
        free = subprocess.run(cmd, capture_output=True, text=True, preexec_fn=group.preexec())
        assert "LEFT" in free.stdout, "unsandboxed root could not leave its group: the check shows nothing"


def _cpu_per_order(runs: list, side: str) -> tuple[float, set[str]]:
    cells = [c for r in runs for c in json.loads((r[side].path / "results.json").read_text())["cells"]]
    assert all(c["status"] == "ok" for c in cells), [c["reason"] for c in cells]
    return (
        sum(c["server_cpu_s"] for c in cells) / sum(c["server_orders"] for c in cells),
        {c.get("server_cpu_from") for c in cells},
    )


def _duet(tmp_path: Path, name: str) -> tuple[float, tuple[float, float], set[str], list[dict]]:
    """Two duet rounds (ab's rig) of base, the real server, against the spinning head, both
    served in the sandbox as ab serves them; (head's CPU per order / base's, head's and base's
    CPU per order, where head's was read, head's results.json server object)."""
    tag = uuid.uuid4().hex[:12]
    bins = {}
    for side in ("base", "head"):
        real = tmp_path / name / side / "sandboxed" / "hft-server"
        real.parent.mkdir(parents=True)
        if side == "base":
            real.symlink_to(SERVER)
        else:
            real.write_text(spinning_children(tag))
            real.chmod(0o755)
        bins[side] = tmp_path / name / side / "bin"
        sandbox.server_launcher(real, bins[side] / "hft-server")
    (bins["base"] / "client-hft").symlink_to(CLIENT)
    scenarios = [Scenario(name="latency-1c", orders=5000, connections=1, warmup=500)]
    plan = Plan(suite="pr", scenarios=scenarios, clients=["hft"], colocate=True)
    rig = Rig.of(plan, DUET, {"p50_us": 500}, np.random.default_rng(7))
    sides = {side: Served(bins[side]) for side in ("base", "head")}
    try:
        runs = [rig.round(sides, tmp_path / name / f"r{pair}", pair) for pair in range(2)]
        left = wait_for_none_left(tag)
    finally:
        clean_up(tag, [])
    assert not left, f"the head's spinning loop outlived its server: {left}"
    head, head_from = _cpu_per_order(runs, "head")
    base, _ = _cpu_per_order(runs, "base")
    servers = [json.loads((r[s].path / "results.json").read_text())["server"] for r in runs for s in r]
    return head / base, (head, base), head_from, servers


@needs_binaries
@needs_groups
@needs_sandbox
def test_a_head_whose_exited_children_spin_pays_for_them_only_in_its_cgroup(tmp_path, monkeypatch):
    monkeypatch.delenv(cgroups.ENV, raising=False)
    ratio, each, read_from, servers = _duet(tmp_path, "on")
    assert (
        read_from == {"cgroup"} and servers[0]["cgroup"]["memory_max_bytes"] == cgroup_parsing.DEFAULT_MEMORY
    )
    left = [s["cgroup"]["path"] for s in servers if Path(s["cgroup"]["path"]).exists()]
    assert not left, f"the rounds' groups were not removed: {left}"
    assert ratio > 2.0, (
        f"with groups, head's CPU per order is {ratio:.2f} x base's ({each}): the children escaped"
    )
    monkeypatch.setenv(cgroups.ENV, "off")
    ratio_off, each, read_from, servers = _duet(tmp_path, "off")
    assert read_from == {"proc"} and servers[0]["cgroup"] == {"none": f"none: {cgroups.ENV}=off"}
    # the attack, without groups: children that have exited are nobody's CPU
    assert ratio_off < 1.6, f"without groups head still read {ratio_off:.2f} x base's ({each})"
    print(f"head / base CPU per order: {ratio:.2f} with groups, {ratio_off:.2f} without", file=sys.stderr)
