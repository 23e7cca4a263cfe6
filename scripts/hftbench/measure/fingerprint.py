"""What a run was measured on: the host, its tuning, the git state, the tool versions.

The tuning knobs come from `hft/scripts/setup_hft_system.sh --check --json` (its schema is
hft/scripts/fingerprint.schema.json) of the harness's own checkout when the script is there;
otherwise a few of them are read directly from /sys and /proc, so a fingerprint always says
governor, THP and SMT. A side's commit (ab's, bisect's) is described from the harness's clone
by its sha (commit_info): nothing here runs in a tree the code under test could write.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path
from typing import cast

from .. import __version__, paths
from ..results_shapes import Fingerprint, GitInfo, Tuning
from .worktrees import git_cmd

TOOL_COMMANDS = {
    "python": [sys.executable, "--version"],
    "cargo": ["cargo", "--version"],
    "rustc": ["rustc", "--version"],
    "go": ["go", "version"],
    "gcc": ["gcc", "--version"],
    "cmake": ["cmake", "--version"],
    "node": ["node", "--version"],
}


def _run(cmd: list[str], cwd: Path | None = None, timeout: float = 10.0) -> str | None:
    """First line of stdout, or None when the command is missing or fails."""
    if shutil.which(cmd[0]) is None and not Path(cmd[0]).is_file():
        return None
    try:
        out = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=True)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip()


def _read(path: str) -> str | None:
    try:
        return Path(path).read_text().strip()
    except OSError:
        return None


def _cpu_model() -> str | None:
    for line in (_read("/proc/cpuinfo") or "").splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or None


def _mem_total_gib() -> float | None:
    for line in (_read("/proc/meminfo") or "").splitlines():
        if line.startswith("MemTotal:"):
            return round(int(line.split()[1]) / 1024 / 1024, 1)
    return None


def _os_name() -> str | None:
    for line in (_read("/etc/os-release") or "").splitlines():
        if line.startswith("PRETTY_NAME="):
            return line.split("=", 1)[1].strip('"')
    return None


def _bracketed(text: str | None) -> str | None:
    """'always [madvise] never' -> 'madvise'."""
    if text and "[" in text:
        return text.split("[", 1)[1].split("]", 1)[0]
    return text


def direct_tuning() -> dict[str, str]:
    """The knobs readable without the tuning script (values as text, 'unavailable' if absent)."""

    def text(v: str | None) -> str:
        return v if v else "unavailable"

    return {
        "governor": text(_read("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")),
        "thp": text(_bracketed(_read("/sys/kernel/mm/transparent_hugepage/enabled"))),
        "smt": text(_read("/sys/devices/system/cpu/smt/control")),
        "isolcpus": _read("/sys/devices/system/cpu/isolated") or "none",
        "swappiness": text(_read("/proc/sys/vm/swappiness")),
    }


def tuning(root: Path | None = None) -> Tuning:
    """The tuning check: the script's JSON (+ "source") or the direct reading as a fallback.

    Read once per process and root: `hftbench ab` and `calibrate` start a run every few
    seconds on the same host, and the check (a bash script reading /sys) cost each one more
    than its measuring did."""
    return copy.deepcopy(_tuning(root))


@functools.lru_cache(maxsize=8)
def _tuning(root: Path | None) -> Tuning:
    script = paths.tuning_script(root)
    if script.is_file():
        out = _run(["bash", str(script), "--check", "--json"], timeout=30)
        if out:
            try:
                doc = json.loads(out)
                doc["source"] = str(script.relative_to(root or paths.repo_root()))
                return cast(Tuning, doc)
            except (json.JSONDecodeError, ValueError):
                pass
    knobs = {k: {"value": v, "status": "unknown"} for k, v in direct_tuning().items()}
    return {
        "source": "direct (/sys, /proc): hft/scripts/setup_hft_system.sh missing or failed",
        "knobs": knobs,
    }


def host(root: Path | None = None) -> Fingerprint:
    """The fingerprint object of results.json. `root`: the harness's own checkout, whose tuning
    script runs (default: paths.repo_root()); never a tree of a commit under test, whose script
    would run unsandboxed."""
    load = os.getloadavg() if hasattr(os, "getloadavg") else (None, None, None)
    return {
        "hostname": platform.node(),
        "os": _os_name(),
        "kernel": platform.release(),
        "arch": platform.machine(),
        "cpu_model": _cpu_model(),
        "cores": os.cpu_count(),
        "memory_gib": _mem_total_gib(),
        "virtualization": _run(["systemd-detect-virt"]) or None,
        "load_avg": [round(x, 2) for x in load] if load[0] is not None else None,
        "tuning": tuning(root),
    }


def _detached_branch() -> str:
    """The branch a detached checkout stands for: the name CI gives it, if any, else HEAD."""
    return os.environ.get("GITHUB_HEAD_REF") or os.environ.get("GITHUB_REF_NAME") or "HEAD"


def git_info(root: Path | None = None) -> GitInfo:
    """commit, branch, dirty, message, author of the checkout (all None outside git): the
    harness's own (`hftbench run`, calibrate), never a tree of a commit under test."""
    root = root or paths.repo_root()

    def git(*args: str) -> str | None:
        return _run(git_cmd(root, *args))

    status = git("status", "--porcelain", "--untracked-files=no")
    branch = git("rev-parse", "--abbrev-ref", "HEAD")
    if branch == "HEAD":  # detached (CI checkouts): the name CI gives it, if any
        branch = _detached_branch()
    return {
        "commit": git("rev-parse", "HEAD"),
        "branch": branch,
        "dirty": None if status is None else bool(status),
        "message": git("log", "-1", "--format=%s"),
        "author": git("log", "-1", "--format=%an <%ae>"),
    }


def commit_info(repo: Path, sha: str, branch: str | None = None) -> GitInfo:
    """git_info's fields for commit `sha`, read by sha from `repo` (the harness's clone, which
    ab and bisect export their commits from), never from the folder it was built in: that one
    is the code's to write. dirty is False (a commit was built as it is); branch is `branch`,
    else the name CI gives a detached checkout (as git_info's); message and author are None
    where `repo` cannot say."""
    out = _run(git_cmd(repo, "log", "-1", "--no-show-signature", "--format=%H%x00%s%x00%an <%ae>", sha, "--"))
    commit, message, author = (out.split("\0") + [None, None, None])[:3] if out else (None, None, None)
    return {
        "commit": commit or sha,
        "branch": branch or _detached_branch(),
        "dirty": False,
        "message": message,
        "author": author,
    }


@functools.lru_cache(maxsize=1)
def _tool_versions() -> tuple[tuple[str, str | None], ...]:
    versions = []
    for name, cmd in TOOL_COMMANDS.items():
        out = _run(cmd, timeout=10)
        versions.append((name, out.splitlines()[0] if out else None))
    return tuple(versions)


def tools() -> dict[str, str | None]:
    """Versions of the toolchains that built bin/ (first line of `<tool> --version`), asked
    once per process (a run every few seconds in ab would pay ~10 subprocesses each)."""
    return {"hftbench": __version__, **dict(_tool_versions())}


# --- the runner id: which runs are comparable ---------------------------------------------

STABLE_FIELDS = ("cpu_model", "cores", "kernel", "governor", "isolcpus", "smt")


def stable_fields(fingerprint: Fingerprint) -> dict[str, str | int | None]:
    """The host fields that make runs comparable (not load, not hostname).

    Read from the top level, else from fingerprint.py's `tuning.knobs.<name>.value`.
    """
    knobs = (fingerprint.get("tuning") or {}).get("knobs") or {}
    out: dict[str, str | int | None] = {}
    for name in STABLE_FIELDS:
        value = fingerprint.get(name)
        if value is None and isinstance(knobs.get(name), dict):
            value = knobs[name].get("value")
        if value is None and name == "isolcpus":
            value = fingerprint.get("isolated_cpus")
        out[name] = value
    # Pinned runs compare only with runs pinned alike; unpinned ones keep their old id.
    if fingerprint.get("placement"):
        out["placement"] = fingerprint["placement"]
    return out


def runner_id(fingerprint: Fingerprint) -> str:
    """A short hash of the stable host fields: runs on the same runner share it.

    A fingerprint that is only {"id": …} (a run materialized from the store) keeps its id.
    """
    if isinstance(fingerprint.get("id"), str):
        return fingerprint["id"]
    blob = json.dumps(stable_fields(fingerprint), sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:12]


def tuned(fingerprint: Fingerprint) -> bool | None:
    """Whether every judged tuning knob is tuned; None when none was judged."""
    knobs = (fingerprint.get("tuning") or {}).get("knobs") or {}
    statuses = [k.get("status") for k in knobs.values() if isinstance(k, dict)]
    judged = [s for s in statuses if s in ("tuned", "not tuned")]
    return all(s == "tuned" for s in judged) if judged else None
