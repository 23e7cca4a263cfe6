"""ab's --build-timeout (measure/worktrees.py; issue 61): a head build that never ends is killed
at its limit with everything it started, and the verdict is a regression saying so in its
headline; without a limit the same build holds the run until it is stopped (so the limit is
what ends it); base's endless build makes the comparison invalid; the flag names itself when
wrong."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from hftbench import cli
from hftbench.errors import UsageError
from support.hftbench_fakes import ab_argv
from support.hostile_head import (
    BUILD,
    ROOT,
    SERVER,
    clean_up,
    endless_build,
    git,
    left_behind,
    needs_binaries,
    needs_sandbox,
    new_repo,
    wait_for_none_left,
)

pytestmark = pytest.mark.timeboxed  # its builds end at their limit or when stopped, not by rounds


def _endless_repo(tmp_path: Path, endless: str, side: str) -> Path:
    """A repository of two commits whose server is the real one; `side`'s build.sh is `endless`."""
    repo = tmp_path / "repo"
    new_repo(repo)
    install = "mkdir -p bin && install -m 755 server.sh bin/hft-server\n"
    (repo / "server.sh").write_text(f'#!/bin/sh\nexec {SERVER} "$@"\n')
    for name in ("base", "head"):
        (repo / "build.sh").write_text((endless if name == side else "") + install)
        git(repo, "add", ".")
        git(repo, "commit", "-qm", f"{name}: {'a build that never ends' if name == side else 'builds'}")
    return repo


def _ab(repo: Path, out: Path, timeout_s: str) -> list[str]:
    return ab_argv(
        repo,
        out,
        orders=300,
        rounds=2,
        extra=("--no-profile", "--build-cmd", BUILD, "--build-timeout", timeout_s, "--quiet"),
    )


@pytest.fixture
def tag():
    tag = uuid.uuid4().hex[:12]
    yield tag
    clean_up(tag, [])


@needs_binaries
@needs_sandbox
def test_a_head_build_that_never_ends_is_killed_at_its_limit_and_fails_the_check(tmp_path, tag):
    repo, out = _endless_repo(tmp_path, endless_build(tag), "head"), tmp_path / "ab"
    started = time.monotonic()
    code = _within(3 + 30, lambda: cli.main(_ab(repo, out, "3")))
    took = time.monotonic() - started
    verdict = json.loads((out / "verdict.json").read_text())
    headline = (out / "summary.md").read_text().splitlines()[0]
    assert code == 1 and verdict["status"] == "regression" and verdict["exit_code"] == 1, verdict
    assert "head's build did not finish in 3 s" in headline, headline
    assert verdict["build_timeout"]["side"] == "head" and verdict["ab"]["rounds_per_side"] == 0
    # The limit is what ended it: the build was alive until then, and ab ended right after.
    assert (out / "head" / "build.log").read_text().count("still building") >= 10
    assert took < 3 + 30, f"ab took {took:.0f} s for a 3 s build limit"
    assert not list((out / "head").glob("run_*")), "a round was measured without a head server"
    left = wait_for_none_left(tag)
    assert not left, f"the build's processes outlived its kill (the double fork too): {left}"
    assert not (out / "head" / "worktree").exists()


@needs_binaries
@needs_sandbox
def test_without_a_limit_the_same_build_holds_the_run_until_it_is_stopped(tmp_path, tag):
    """The control: --build-timeout 0 (no limit) and the same build is still running, with no
    verdict, well past the 3 s the test above gives it; the job's SIGTERM then ends ab, and the
    build goes with it."""
    repo, out = _endless_repo(tmp_path, endless_build(tag), "head"), tmp_path / "ab"
    cmd = [sys.executable, "-m", "hftbench", *_ab(repo, out, "0")]
    proc = subprocess.Popen(
        cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True
    )
    try:
        deadline = time.monotonic() + 60
        while "still building" not in _read(out / "head" / "build.log") and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(3 + 5)
        assert proc.poll() is None, (
            f"ab ended by itself (exit {proc.returncode}): {proc.stderr.read()[-2000:]}"
        )
        assert not (out / "verdict.json").exists() and left_behind(tag)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 130
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert not wait_for_none_left(tag), "an interrupted ab left its build's processes"


@needs_binaries
def test_a_base_build_that_never_ends_makes_the_comparison_invalid(tmp_path, tag):
    """Base builds outside the sandbox (trusted code, without a double fork here): at the limit
    its process group is killed, and nothing judged is not green."""
    repo, out = _endless_repo(tmp_path, endless_build(tag, escape=False), "base"), tmp_path / "ab"
    code = _within(2 + 30, lambda: cli.main(_ab(repo, out, "2")))
    verdict = json.loads((out / "verdict.json").read_text())
    headline = (out / "summary.md").read_text().splitlines()[0]
    assert code == 1 and verdict["status"] == "invalid", verdict
    assert "Invalid: base's build did not finish in 2 s" in headline, headline
    assert not (out / "head").exists() or not (out / "head" / "build.log").exists()  # head never built
    assert not wait_for_none_left(tag)


def test_the_build_timeout_flag_names_itself_when_wrong_and_0_means_no_limit():
    from hftbench.commands import flags

    assert flags._build_timeout(0.0) is None and flags._build_timeout(900.0) == 900.0
    for bad in (-1.0, float("nan")):
        with pytest.raises(UsageError, match="--build-timeout"):
            flags._build_timeout(bad)


def _within(seconds: int, run):
    """run(), failing the test (instead of hanging it) when it is still running after `seconds`:
    the alarm interrupts ab as a Ctrl-C would, so its build is killed on the way out."""

    def alarm(*_):
        raise AssertionError(f"ab still running after {seconds} s: the build's time limit did not end it")

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(seconds)
    try:
        return run()
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except FileNotFoundError:
        return ""
