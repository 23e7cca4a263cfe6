"""The pipeline loses nothing (issue 17): `hftbench run` on the real bin/ with a client killed
or stopped mid-cell, the server killed mid-run, the disk full under the run folder.

Each test starts the real `hftbench run` (real server, real clients) and does the damage
from outside, to the real processes, while a cell is measuring. The one planted failure, a
server binary that will not start again, says why in its test.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest
from support.hftbench_fakes import REPO, children

BIN = REPO / "bin"
HFTBENCH = Path(os.environ.get("VIRTUAL_ENV", REPO / ".venv")) / "bin" / "hftbench"

pytestmark = [
    pytest.mark.timeboxed,
    pytest.mark.usefixtures("real_binaries"),
    pytest.mark.skipif(
        not os.access(BIN / "client-rust", os.X_OK), reason="needs bin/client-rust: run `make build`"
    ),
]

# `long` lasts 5-10 s, so the damage lands mid-cell; `short` is the cell after it.
CONFIG = """schema_version: 1
targets: {p50_us: 500, p99_us: 2000, throughput_rps: 1000}
scenarios:
  long: {description: hit mid-cell, orders: 200000, connections: 1, warmup: 100}
  mid: {description: a few seconds, orders: 60000, connections: 1, warmup: 100}
  short: {description: the cell after the fault, orders: 2000, connections: 1, warmup: 100}
suites:
  faults: {scenarios: [long, short], clients: [hft]}
"""


def start_run(tmp: Path, out: Path, scenarios: str, clients: str = "hft", *extra: str, bins: Path = BIN):
    config = tmp / "scenarios.yaml"
    config.write_text(CONFIG)
    cmd = [
        str(HFTBENCH),
        "run",
        "--config",
        str(config),
        "--bin",
        str(bins),
        "--scenarios",
        scenarios,
        "--clients",
        clients,
        "--no-floor",
        "--quiet",
        "--out",
        str(out),
        *extra,
    ]
    env = {**os.environ, "CI": "true"}
    pipes = {"stdout": subprocess.DEVNULL, "stderr": subprocess.PIPE}
    return subprocess.Popen(cmd, cwd=REPO, env=env, text=True, **pipes)


def wait_mid_cell(proc: subprocess.Popen, out: Path, client: str) -> dict[str, int]:
    """Block until `client` is running and the server has counted its orders; the children."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        kids = children(proc.pid)
        if f"client-{client}" in kids and (out / "results.json").is_file():
            url = json.loads((out / "results.json").read_text())["server"]["url"]
            with contextlib.suppress(OSError), urllib.request.urlopen(f"{url}/stats", timeout=2) as resp:
                if json.loads(resp.read())["total_orders"] > 0:
                    return kids
        time.sleep(0.05)
    proc.kill()
    pytest.fail(f"client-{client} never got going: {proc.communicate()[1]}")


def finish(proc: subprocess.Popen) -> str:
    try:
        return proc.communicate(timeout=180)[1]
    finally:
        if proc.poll() is None:
            proc.kill()


def cells(out: Path) -> list[tuple[str, str, str, str | None]]:
    doc = json.loads((out / "results.json").read_text())
    return [(c["scenario"], c["client"], c["status"], c["reason"]) for c in doc["cells"]]


def test_a_client_killed_mid_cell_fails_that_cell_and_the_run_goes_on(tmp_path):
    out = tmp_path / "run"
    proc = start_run(tmp_path, out, "long,short")
    os.kill(wait_mid_cell(proc, out, "hft")["client-hft"], signal.SIGKILL)
    err = finish(proc)
    assert proc.returncode == 1, err  # a failed cell, not a failed run
    assert cells(out) == [("long", "hft", "failed", "killed by SIGKILL"), ("short", "hft", "ok", None)]
    assert json.loads((out / "results.json").read_text())["complete"] is True
    assert "- ❌ long/hft: killed by SIGKILL" in (out / "report.md").read_text()
    assert "❌ long/hft: killed by SIGKILL" in err


def test_a_stopped_client_is_killed_at_its_deadline_and_the_run_goes_on(tmp_path):
    # The real client stopped with SIGSTOP: alive, silent, never exiting. --timeout stands in
    # for the deadline derived from the scenario (cell.default_timeout_s: the expected time
    # + 60 s), which would keep this test waiting a minute.
    out = tmp_path / "run"
    proc = start_run(tmp_path, out, "long,short", "hft", "--timeout", "6")
    client = wait_mid_cell(proc, out, "hft")["client-hft"]
    os.kill(client, signal.SIGSTOP)
    try:
        err = finish(proc)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(client, signal.SIGKILL)  # only if hftbench failed to
    assert proc.returncode == 1, err
    reason = "timeout: no exit within 6 s (--timeout); the client was stopped (SIGSTOP), killed"
    assert cells(out) == [("long", "hft", "failed", reason), ("short", "hft", "ok", None)]
    assert f"- ❌ long/hft: {reason}" in (out / "report.md").read_text()


def _gone(pid: int) -> bool:
    """Exited: no such process, or a zombie waiting for init to reap it."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except (OSError, IndexError):
        return True


def test_hftbench_killed_by_sigkill_takes_its_server_and_its_stopped_client_with_it(tmp_path):
    # A stopped client never notices that its server is gone: only PR_SET_PDEATHSIG ends it
    # when hftbench dies without running any cleanup.
    out = tmp_path / "run"
    proc = start_run(tmp_path, out, "long,short")
    kids = wait_mid_cell(proc, out, "hft")
    os.kill(kids["client-hft"], signal.SIGSTOP)
    try:
        proc.kill()
        proc.wait()
        deadline = time.monotonic() + 10
        while not all(_gone(pid) for pid in kids.values()) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert {name: _gone(pid) for name, pid in kids.items()} == {name: True for name in kids}
    finally:
        for pid in kids.values():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)  # only if hftbench's children outlived it


def test_the_server_killed_mid_run_fails_its_cell_and_is_started_again(tmp_path):
    out = tmp_path / "run"
    proc = start_run(tmp_path, out, "long,short")
    os.kill(wait_mid_cell(proc, out, "hft")["hft-server"], signal.SIGKILL)
    err = finish(proc)
    assert proc.returncode == 1, err
    (long, short) = cells(out)
    assert long[:3] == ("long", "hft", "failed")
    died = "hft-server was killed by SIGKILL during the cell"
    assert long[3].startswith(f"{died} (see server.log); the client: ")
    assert short == ("short", "hft", "ok", None)  # on a server started again
    assert (out / "server.log").read_text().count("hft-server listening on") == 2
    assert "hft-server was killed by SIGKILL; restarting it" in err
    assert (out / "report.md").is_file(), err
    assert f"- ❌ long/hft: {died}" in (out / "report.md").read_text()


def test_a_server_that_does_not_start_again_fails_every_later_cell_that_needs_it(tmp_path):
    # Planted: the real server always starts, so after killing it we swap its binary for one
    # that exits at once, the way a server that crashes on start (a bad config, a lost
    # library) would. The clients stay the real ones.
    bins = tmp_path / "bin"
    bins.mkdir()
    for name in ("hft-server", "client-hft", "client-rust"):
        (bins / name).symlink_to(BIN / name)
    out = tmp_path / "run"
    proc = start_run(tmp_path, out, "long,short", "hft,rust", bins=bins)
    server = wait_mid_cell(proc, out, "hft")["hft-server"]
    broken = tmp_path / "broken"
    broken.write_text("#!/bin/sh\necho 'hft-server: cannot start (planted)' >&2\nexit 3\n")
    broken.chmod(0o755)
    os.replace(broken, bins / "hft-server")
    os.kill(server, signal.SIGKILL)
    err = finish(proc)
    assert proc.returncode == 1, err
    got = cells(out)
    assert got[0][:3] == ("long", "hft", "failed")
    assert got[0][3].startswith("hft-server was killed by SIGKILL during the cell")
    not_run = (
        "not run: hft-server was killed by SIGKILL before this cell and did not start again "
        f"({bins / 'hft-server'} exited with status 3 before its ready line; "
        f"last output: hft-server: cannot start (planted); see {out / 'server.log'})"
    )
    assert got[1:] == [
        ("long", "rust", "failed", not_run),
        ("short", "hft", "failed", not_run),
        ("short", "rust", "failed", not_run),
    ]
    assert "cannot start (planted)" in (out / "server.log").read_text()
    assert json.loads((out / "results.json").read_text())["complete"] is True


@contextlib.contextmanager
def small_tmpfs(size: str):
    """A tmpfs of `size` at a fresh mkdtemp folder, unmounted and removed on the way out."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    where = Path(tempfile.mkdtemp(prefix="hftbench-fault-tmpfs-"))
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "hftbench-fault", str(where)],
        capture_output=True,
        text=True,
    )
    if mounted.returncode != 0:
        where.rmdir()
        pytest.skip(f"cannot mount a tmpfs: {mounted.stderr.strip()}")
    try:
        yield where
    finally:
        if subprocess.run(["umount", str(where)], capture_output=True).returncode != 0:
            subprocess.run(["umount", "-l", str(where)], capture_output=True)
        where.rmdir()


def fill(folder: Path) -> Path:
    """Write a file until the file system is full: the next write anywhere on it fails."""
    path = folder / "filler"
    chunk = b"\0" * 65536
    with open(path, "wb", buffering=0) as f:
        while True:
            try:
                f.write(chunk)
            except OSError as exc:
                assert exc.errno == errno.ENOSPC, exc
                break
    with contextlib.suppress(OSError), open(folder / "filler-tail", "wb", buffering=0) as f:
        while f.write(b"\0"):  # the last partial block
            pass
    return path


def test_a_full_disk_stops_the_run_with_the_file_and_the_fix_and_keeps_what_was_written(tmp_path):
    with small_tmpfs("16m") as disk:
        out = disk / "run"
        proc = start_run(tmp_path, out, "mid", "hft,rust", "--no-report")
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            if (out / "results.json").is_file() and json.loads((out / "results.json").read_text())["cells"]:
                break
            time.sleep(0.02)
        filler = fill(disk)  # while mid/rust measures: its result and results.json cannot be written
        before = (out / "results.json").read_text()
        err = finish(proc)
        assert proc.returncode == 2, err
        where = re.escape(str(out))
        message = rf"cannot write {where}/\S+: No space left on device; free space on its file system \(`df"
        assert re.search(message, err), err
        assert f"{out / 'results.json'} keeps the 1 cell written before" in err, err
        # Nothing written before is lost: results.json is the last whole one, the first cell's
        # result and histogram log are intact, and no temp file is left behind.
        assert (out / "results.json").read_text() == before
        (first,) = json.loads(before)["cells"]
        assert (first["scenario"], first["client"], first["status"]) == ("mid", "hft", "ok")
        assert json.loads((out / first["file"]).read_text()) == first["result"]
        assert (out / first["file"]).with_suffix(".hlog").stat().st_size > 0
        assert not [p.name for p in out.rglob(".*")]

        # The fix works: with space again the report is written from what was kept...
        filler.unlink()
        (disk / "filler-tail").unlink(missing_ok=True)
        report_cmd = [str(HFTBENCH), "report", str(out), "--no-compare"]
        report = subprocess.run(report_cmd, capture_output=True, text=True)
        assert report.returncode == 0, report.stderr
        kept = (out / "report.md").read_text()
        assert "### mid" in kept
        # ...and rewriting it on a full disk fails by name and leaves the old report whole.
        fill(disk)
        again = subprocess.run(report_cmd, capture_output=True, text=True)
        assert again.returncode == 2 and "No space left on device; free space" in again.stderr, again.stderr
        assert (out / "report.md").read_text() == kept
        assert not [p.name for p in out.rglob(".*")]
        shutil.rmtree(out)
