"""procs.start_ready: the one "start a child, wait for its ready line" of hftbench (the
server, hft-floor --listen, hft-linkem), driven with small real children."""

import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hftbench.measure import procs
from hftbench.measure.server import Server, ServerError
from support.hftbench_fakes import make_bins

# measuring: a child's ready line within a timeout (0.5 s, 20 s). Beside the serial pass under
# SCHED_IDLE a Python child once printed nothing in 0.5 s (a clean clone's make test, 2026-11-29)
pytestmark = pytest.mark.measuring

READY = re.compile(r"ready on (\S+)")


def child(code: str) -> list[str]:
    return [sys.executable, "-c", code]


def test_the_ready_line_is_read_from_the_log_and_its_match_returned(tmp_path):
    log = tmp_path / "child.log"
    proc, match = procs.start_ready(
        child("import time; print('warming up'); print('ready on tcp://x:1', flush=True); time.sleep(60)"),
        log,
        READY,
        name="child",
        timeout_s=20,
    )
    try:
        assert match.group(1) == "tcp://x:1"
        assert proc.poll() is None
    finally:
        assert procs.stop(proc) == -15  # SIGTERM ended it
    assert "warming up" in log.read_text()


def test_a_child_that_cannot_be_started_raises_the_callers_error_naming_it(tmp_path):
    """A preexec that fails (its cgroup gone) is the caller's error, so a server restart that
    fails is a reason its cells fail with, not a crash of the run."""

    def gone() -> None:
        raise FileNotFoundError("/sys/fs/cgroup/hft-bench/run/server/cgroup.procs")

    with pytest.raises(ServerError, match=r"^child could not be started: .*preexec"):
        procs.start_ready(
            child("print('ready on x')"),
            tmp_path / "c.log",
            READY,
            name="child",
            timeout_s=5,
            preexec=gone,
            error=ServerError,
        )
    with pytest.raises(procs.StartError, match=r"could not be started: .*No such file"):
        procs.start_ready([str(tmp_path / "absent")], tmp_path / "c.log", READY, name="child", timeout_s=5)


def test_a_ready_line_left_in_the_log_by_an_earlier_start_does_not_count(tmp_path):
    log = tmp_path / "child.log"
    log.write_text("ready on tcp://old:1\n")
    with pytest.raises(procs.StartError, match="status 4"):
        procs.start_ready(child("raise SystemExit(4)"), log, READY, name="child", timeout_s=20)
    assert log.read_text().startswith("ready on tcp://old:1")  # appended to, not truncated


def test_a_child_that_exits_first_is_named_with_its_status_and_last_output(tmp_path):
    log = tmp_path / "child.log"
    with pytest.raises(RuntimeError) as info:
        procs.start_ready(
            child("import sys; print('one'); print('two', flush=True); sys.exit('cannot bind: in use')"),
            log,
            READY,
            name="bin/thing",
            timeout_s=20,
            error=RuntimeError,
        )
    message = str(info.value)
    assert message.startswith("bin/thing exited with status 1 before its ready line")
    assert "last output: one / two / cannot bind: in use" in message
    assert str(log) in message


def test_a_silent_child_is_stopped_at_the_timeout(tmp_path):
    log = tmp_path / "child.log"
    pid_file = tmp_path / "pid"
    code = f"import os, time; open({str(pid_file)!r}, 'w').write(str(os.getpid()))\n"
    code += "print('starting', flush=True); time.sleep(60)"
    with pytest.raises(
        procs.StartError, match=r"printed no line matching .* within 0.5 s; last output: starting"
    ):
        procs.start_ready(child(code), log, READY, name="child", timeout_s=0.5)
    assert not Path(f"/proc/{pid_file.read_text()}").exists()  # stopped and reaped, not left running


def test_server_failure_names_the_binary_status_and_log_tail(tmp_path):
    bins = make_bins(tmp_path, {})
    (bins / "hft-server").write_text("#!/bin/sh\necho 'hft-server: --workers 0 is not allowed' >&2\nexit 2\n")
    server = Server(bins / "hft-server", tmp_path / "server.log")
    with pytest.raises(ServerError) as info:
        server.start()
    assert str(info.value) == (
        f"{bins / 'hft-server'} exited with status 2 before its ready line; "
        f"last output: hft-server: --workers 0 is not allowed; see {tmp_path / 'server.log'}"
    )


def test_server_env_reaches_the_server(tmp_path):
    bins = make_bins(tmp_path, {})
    real = (bins / "hft-server").read_text()
    (bins / "hft-server").write_text(real.replace("exec ", 'echo "marker=$HFTB_MARKER"; exec ', 1))
    with Server(
        bins / "hft-server", tmp_path / "server.log", env={"PATH": "/usr/bin:/bin", "HFTB_MARKER": "m42"}
    ) as s:
        assert s.url.startswith("http://127.0.0.1:")
    assert "marker=m42" in (tmp_path / "server.log").read_text()


# What an interrupt handled just after Popen.wait(timeout) or poll() took Popen's own lock leaves
# behind (procs.reap; scripts/experiments/popen-lock.py counts how often): the lock held, so that
# Popen's own wait can never look again. Held here by hand.
def test_a_killed_child_is_reaped_with_popens_lock_left_held():
    proc = subprocess.Popen(child("import time; time.sleep(60)"))
    proc._waitpid_lock.acquire()
    try:
        proc.kill()
        with pytest.raises(subprocess.TimeoutExpired):
            proc.wait(timeout=0.2)  # without a timeout: for ever (an interrupted ab, 2026-12-03)
        assert procs.reap(proc) == -signal.SIGKILL and proc.returncode == -signal.SIGKILL
    finally:
        proc._waitpid_lock.release()


def test_a_child_is_stopped_with_popens_lock_left_held():
    proc = subprocess.Popen(child("import time; time.sleep(60)"))
    proc._waitpid_lock.acquire()
    try:
        assert procs.stop(proc, timeout_s=0.2) == -signal.SIGTERM
    finally:
        proc._waitpid_lock.release()


def test_ending_a_session_kills_the_child_and_what_it_started_and_reaps_it(tmp_path):
    pid_file = tmp_path / "grandchild"
    code = "import subprocess, time\n"
    code += f"open({str(pid_file)!r}, 'w').write(str(subprocess.Popen(['sleep', '60']).pid))\n"
    proc = subprocess.Popen(child(code + "time.sleep(60)"), start_new_session=True)
    while not pid_file.exists() or not pid_file.read_text():
        time.sleep(0.01)
    assert procs.end_session(proc) == -signal.SIGKILL
    grandchild = Path(f"/proc/{pid_file.read_text()}/stat")
    deadline = time.monotonic() + 10  # init reaps the orphan: gone, or a zombie killed by SIGKILL
    while _state(grandchild) not in (None, "Z"):
        assert time.monotonic() < deadline, "the session's other process outlived it"
        time.sleep(0.01)
    assert procs.end_session(proc) == -signal.SIGKILL  # once more: no error, the same status


def _state(stat: Path) -> str | None:
    try:
        return stat.read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return None  # gone
