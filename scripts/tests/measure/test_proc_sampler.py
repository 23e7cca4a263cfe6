"""The /proc sampler: the parsers on fixed texts, then against a real process that holds
memory and TCP connections."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest
from hftbench.measure import proc_sampler as ps

STAT = "4242 (hft server) (x)) S 1 4242 4242 0 -1 4194560 900 0 0 0 150 75 0 0 20 0 3 0 100 0 0"
TCP = """  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 111 1
   1: 0100007F:1F90 0100007F:C350 01 00000000:00000000 00:00000000 00000000     0        0 222 1
   2: 0100007F:C350 0100007F:1F90 01 00000000:00000000 00:00000000 00000000     0        0 333 1
   3: 0100007F:1F90 0100007F:C351 06 00000000:00000000 00:00000000 00000000     0        0 444 1
"""


def test_parsers_on_fixed_texts():
    assert ps.rss_kib("Name:\tx\nVmPeak:\t 9 kB\nVmRSS:\t  51234 kB\n") == 51234
    with pytest.raises(ValueError):
        ps.rss_kib("Name:\tkthreadd\n")
    assert ps.cpu_ticks(STAT) == 150 + 75  # a ')' inside the command name does not shift the fields
    inodes = ps.socket_inodes(["/dev/null", "socket:[222]", "socket:[111]", "pipe:[9]", "socket:[444]"])
    assert inodes == {"222", "111", "444"}
    # the listener (0A) and a TIME_WAIT (06) are not connections; 333 is another process's
    assert ps.established(TCP, inodes) == 1


HOLDER = """
import socket, sys, time
ballast = bytearray(64 * 1024 * 1024)
for i in range(0, len(ballast), 4096):
    ballast[i] = 1
srv = socket.socket(); srv.bind(("127.0.0.1", 0)); srv.listen()
clients = [socket.create_connection(srv.getsockname()) for _ in range(3)]
accepted = [srv.accept()[0] for _ in range(3)]
print("ready", flush=True)
sys.stdin.read()
"""


@pytest.mark.timeout(60)
def test_samples_a_real_process_until_it_ends(tmp_path):
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout.readline().strip() == "ready"
        path = tmp_path / "server.csv"
        with ps.ProcSampler(proc.pid, path, period_s=0.05) as sampler:
            while len(sampler.samples) < 4:
                time.sleep(0.01)
            # the process ends while sampled: the sampler stops and says why
            proc.stdin.close()
            proc.wait(timeout=30)
            while sampler.error is None:  # its next read finds /proc/PID gone
                time.sleep(0.01)
        assert sampler.error is not None and f"/proc/{proc.pid}" in sampler.error
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    first, rows = sampler.samples[0], ps.read_csv(path)
    assert [r.t_s for r in rows] == [round(s.t_s, 3) for s in sampler.samples]
    assert first.rss_kib > 64 * 1024
    assert first.connections == 6  # 3 client ends and 3 accepted ends, the listener not counted
    assert first.cpu_pct is None and all(s.cpu_pct is not None and s.cpu_pct >= 0 for s in rows[1:])
    assert all(b.t_s > a.t_s and b.cpu_s >= a.cpu_s for a, b in zip(rows, rows[1:], strict=False))
