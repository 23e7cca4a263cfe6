"""`hftbench serve -- COMMAND`: the shell drivers' way to start hft-server (the fake one here)."""

import shutil
import subprocess
import sys
from pathlib import Path

from support.hftbench_fakes import make_bins

# The command under the server: asks /health at the URL it was given, writes what it saw,
# and exits 7, a status serve must pass on.
PROBE = """
import os, sys, urllib.request
url, pid = os.environ["HFTBENCH_SERVER_URL"], os.environ["HFTBENCH_SERVER_PID"]
with urllib.request.urlopen(url + "/health", timeout=5) as resp:
    status = resp.status
open(sys.argv[1], "w").write(f"{url} {pid} {status}")
sys.exit(7)
"""


def serve(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "hftbench", "serve", *args], capture_output=True, text=True, timeout=120
    )


def test_the_command_runs_against_the_server_which_is_stopped_after(tmp_path):
    bins = make_bins(tmp_path, {})
    seen = tmp_path / "seen"
    log = tmp_path / "server.log"
    proc = serve("--bin", str(bins), "--log", str(log), "--", sys.executable, "-c", PROBE, str(seen))
    assert proc.returncode == 7, proc.stderr
    url, pid, status = seen.read_text().split()
    assert url.startswith("http://127.0.0.1:") and status == "200"
    assert log.read_text().startswith(f"hft-server listening on {url}")
    assert not Path(f"/proc/{pid}").exists()  # stopped and reaped when the command ended


def test_a_server_that_does_not_start_exits_2_naming_it_and_runs_nothing(tmp_path):
    bins = make_bins(tmp_path, {})
    (bins / "hft-server").write_text("#!/bin/sh\necho 'hft-server: bad --cpus 9' >&2\nexit 2\n")
    marker = tmp_path / "ran"
    proc = serve("--bin", str(bins), "--", "touch", str(marker))
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"hftbench serve: {bins / 'hft-server'} exited with status 2")
    assert "last output: hft-server: bad --cpus 9" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert not marker.exists()
    kept = Path(proc.stderr.strip().rsplit("; see ", 1)[1])  # the temporary log stays when it fails
    assert kept.name == "server.log" and "bad --cpus 9" in kept.read_text()
    shutil.rmtree(kept.parent)


def test_no_command_is_a_usage_error(tmp_path):
    proc = serve("--bin", str(make_bins(tmp_path, {})))
    assert proc.returncode == 2
    assert "no command to run: pass it after --" in proc.stderr
