"""Child processes that say when they are ready: start one, wait for its ready line, stop it,
and reap a killed one without Popen's own lock, which an interrupt can leave held (reap).

hft-server ("hft-server listening on URL", server.py), `hft-floor --listen` ("hft-floor
listening on URL", netcells.py) and hft-linkem ("hft-linkem ready", netpath.py) each print
one line once they serve. Their output goes to a log file, never to a pipe (a pipe nobody
reads fills up and blocks the child), and the ready line is read from that file, from the
offset where this start began (a log appended by a restart keeps the earlier output).
A child that exits or stays silent is reported with its name, its exit status and the last
lines of its log, so the reason is in the message and not only in a file.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import re
import signal
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

_PR_SET_PDEATHSIG = 1
TAIL_LINES = 3


class StartError(RuntimeError):
    """The child exited or printed no ready line in time; the message says which and why."""


def die_with_parent() -> None:
    """preexec_fn: the child gets SIGKILL when its parent dies, even by SIGKILL, so no
    server or emulator outlives an hftbench or pytest run."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def descendants(pid: int) -> list[int]:
    """Every live process under `pid`, children's children too (/proc/PID/task/TID/children);
    what /proc cannot tell (a process gone meanwhile) is left out."""
    found: list[int] = []
    todo = [pid]
    while todo:
        try:
            tasks = list(Path(f"/proc/{todo.pop()}/task").iterdir())
        except OSError:
            continue
        for task in tasks:
            try:
                kids = [int(k) for k in (task / "children").read_text().split()]
            except (OSError, ValueError):
                continue
            found += kids
            todo += kids
    return found


def log_tail(log_path: Path, offset: int = 0, lines: int = TAIL_LINES) -> str:
    """The last `lines` non-empty lines written to `log_path` after `offset`, joined with
    " / " so they fit in one message line; "" when there are none."""
    try:
        with open(log_path, "rb") as f:
            f.seek(offset)
            text = f.read().decode(errors="replace")
    except OSError:
        return ""
    kept = [line.strip() for line in text.splitlines() if line.strip()][-lines:]
    return " / ".join(kept)


def start_ready(
    cmd: Sequence[str],
    log_path: Path,
    ready: re.Pattern[str],
    *,
    name: str,
    timeout_s: float,
    preexec: Callable[[], None] | None = None,
    env: Mapping[str, str] | None = None,
    error: type[Exception] = StartError,
    pass_fds: Sequence[int] = (),
) -> tuple[subprocess.Popen[bytes], re.Match[str]]:
    """Start `cmd` with stdout and stderr appended to `log_path` and `pass_fds` left open in
    it; return the process and the match of `ready` once its output has that line. Raises
    `error` naming `name` where it cannot be started, with the exit status and the log's last
    lines where it exits first, or stops it and raises when `timeout_s` passes without the
    line."""
    log_path = Path(log_path)
    log_path.parent.mkdir(parents=True, exist_ok=True)
    offset = log_path.stat().st_size if log_path.exists() else 0
    with open(log_path, "ab") as log:
        try:
            proc = subprocess.Popen(
                list(cmd),
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                preexec_fn=preexec,
                env=None if env is None else dict(env),
                pass_fds=tuple(pass_fds),
            )
        except (OSError, subprocess.SubprocessError) as exc:  # exec refused, or the preexec (cgroup) failed
            raise error(f"{name} could not be started: {exc}; see {log_path}") from exc
    deadline = time.monotonic() + timeout_s
    while True:
        with open(log_path, "rb") as f:
            f.seek(offset)
            match = ready.search(f.read().decode(errors="replace"))
        if match:
            return proc, match
        if proc.poll() is not None:
            raise error(
                f"{name} exited with status {proc.returncode} before its ready line; "
                f"last output: {log_tail(log_path, offset) or 'no output'}; see {log_path}"
            )
        if time.monotonic() > deadline:
            stop(proc)
            raise error(
                f"{name} printed no line matching {ready.pattern!r} within {timeout_s:g} s; "
                f"last output: {log_tail(log_path, offset) or 'no output'}; see {log_path}"
            )
        time.sleep(0.01)


def reap(proc: subprocess.Popen) -> int | None:
    """Wait for a child sent SIGKILL; its exit status (None where an earlier wait reaped it
    without keeping the status). Not proc.wait(): an interrupt (Ctrl-C, SIGTERM) handled right
    after Popen.wait(timeout) or poll() took Popen's own lock, before the `try` that releases it,
    leaves the lock held (CPython 3.11: 21 of 20,000 SIGALRMs timed to land in such a wait,
    scripts/experiments/popen-lock.py), and every later proc.wait() blocks on it for ever: so an
    interrupted ab once hung for good in a quiet make test (2026-12-03)."""
    if proc.returncode is None:
        try:
            _, status = os.waitpid(proc.pid, 0)
        except ChildProcessError:  # reaped already, by the wait the interrupt cut short
            return None
        proc.returncode = os.waitstatus_to_exitcode(status)
    return proc.returncode


def end_session(proc: subprocess.Popen) -> int | None:
    """SIGKILL a child started in a session of its own, and everything in that session, then
    reap it; one that has just exited is no error (an interrupt racing its exit must still reach
    the caller as the interrupt)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    return reap(proc)


def stop(proc: subprocess.Popen, timeout_s: float = 5.0) -> int | None:
    """SIGCONT (a test may have stopped it) and SIGTERM, then SIGKILL after `timeout_s`;
    returns the exit status (None where it cannot be known: reap)."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            proc.send_signal(signal.SIGCONT)
            proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            reap(proc)
    for pipe in (proc.stdout, proc.stderr):
        with contextlib.suppress(OSError):
            if pipe:
                pipe.close()
    return proc.returncode
