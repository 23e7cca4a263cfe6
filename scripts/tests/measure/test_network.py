"""The network scenarios on the real binaries: hft-linkem adds the delay it is configured
with (by its own account and by the round trip), a tiny `hftbench run` of net-lan ends with
results and the path's floor, namespaces and processes are removed after Ctrl-C, SIGTERM
and (at the next start) SIGKILL, and a host without `ip` or root gets a failure naming it
while the other cells run. After every test nothing of ours is left (`ip netns list`)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from hftbench.config import LinkProfile
from hftbench.measure import netpath
from support.hftbench_fakes import REPO

BIN = REPO / "bin"
HFTBENCH = Path(os.environ.get("VIRTUAL_ENV", REPO / ".venv")) / "bin" / "hftbench"
IP = shutil.which("ip")
NEEDED = ("hft-server", "hft-linkem", "hft-floor", "client-hft")

pytestmark = [
    pytest.mark.timeboxed,
    pytest.mark.usefixtures("real_binaries"),
    pytest.mark.skipif(
        os.geteuid() != 0 or IP is None or not all((BIN / b).is_file() for b in NEEDED),
        reason="needs root, `ip` and bin/ (" + ", ".join(NEEDED) + "): run `make build` as root",
    ),
]

ECHO = """
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], 0)); s.listen(); print(s.getsockname()[1], flush=True)
c, _ = s.accept(); c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
while (d := c.recv(65536)):
    c.sendall(d)
"""


def leftovers(pid: int) -> list[str]:
    """Namespaces and our root-side veth still there for the hftbench of `pid`."""
    names = [n for n in netpath.ours(IP) if n.startswith(f"{netpath.PREFIX}-{pid}-")]
    links = subprocess.run([IP, "-o", "link", "show"], capture_output=True, text=True).stdout
    return names + ([f"{netpath.PREFIX}{pid}c"] if f" {netpath.PREFIX}{pid}c@" in links else [])


def netns_pids(ns: str) -> list[str]:
    return subprocess.run([IP, "netns", "pids", ns], capture_output=True, text=True).stdout.split()


def processes_mentioning(text: str) -> list[int]:
    found = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit() and int(proc.name) != os.getpid():
            try:
                if text.encode() in (proc / "cmdline").read_bytes():
                    found.append(int(proc.name))
            except OSError:
                continue
    return found


def _default_sigint() -> None:
    # A job started in the background (`make test &`, some CI shells) inherits SIGINT ignored,
    # and Python then installs no KeyboardInterrupt handler: Ctrl-C is what the test sends.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def hftbench(*args: str, env: dict | None = None, **kw) -> subprocess.Popen:
    cmd = [str(HFTBENCH) if HFTBENCH.is_file() else "hftbench", "run", "--quiet", *args]
    return subprocess.Popen(
        cmd,
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env or os.environ,
        preexec_fn=_default_sigint,
        **kw,
    )


def wait_for(predicate, timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


@pytest.fixture
def path(tmp_path):
    """A lan-like path built in this process; removed (and checked) after the test."""
    built = []

    def make(delay_us: float, jitter_us: float = 0.0, loss_pct: float = 0.0) -> netpath.NetPath:
        profile = LinkProfile("test", delay_us=delay_us, jitter_us=jitter_us, loss_pct=loss_pct, seed=7)
        p = netpath.NetPath(profile, BIN, IP).open()
        built.append(p)
        return p

    yield make
    for p in built:
        p.close()
    assert leftovers(os.getpid()) == []


def ping_pong(p: netpath.NetPath, tmp_path: Path, count: int, zero_delay: bool = False):
    """`count` round trips of 300 bytes through the emulator; (the emulator's stats, RTTs in µs)."""
    echo = subprocess.Popen(
        [*p.in_server_ns(), sys.executable, "-c", ECHO, p.server_ip], stdout=subprocess.PIPE, text=True
    )
    try:
        port = int(echo.stdout.readline())
        p.start_link(tmp_path / "linkem.json", tmp_path / "linkem.log", zero_delay=zero_delay)
        rtts = []
        with socket.create_connection((p.server_ip, port), timeout=10) as c:
            c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            for _ in range(count):
                start = time.perf_counter()
                c.sendall(b"x" * 300)
                got = 0
                while got < 300:
                    got += len(c.recv(4096))
                rtts.append((time.perf_counter() - start) * 1e6)
        return p.stop_link(), rtts
    finally:
        echo.kill()
        echo.wait()


def test_the_emulator_applies_its_delay_and_jitter_both_ways(path, tmp_path):
    stats, rtts = ping_pong(path(delay_us=300, jitter_us=100), tmp_path, 300)
    for direction in ("a_to_b", "b_to_a"):
        d = stats[direction]
        assert d["frames"] >= 300 and d["lost"] == 0 and d["ring_full"] == 0 and d["send_errors"] == 0
        # Never earlier than delay - jitter (it applies at least what it scheduled); the
        # middle of uniform 200..400 µs, not the zero-delay forwarding below.
        assert d["delay_us"]["min"] >= 200.0, d
        assert d["delay_us"]["p50"] >= 280.0, d
    assert stats["config"]["delay_us"] == 300 and stats["config"]["jitter_us"] == 100
    assert min(rtts) >= 2 * 200.0  # physics: both directions held at least 200 µs


def test_at_zero_delay_the_emulator_only_forwards(path, tmp_path):
    stats, _ = ping_pong(path(delay_us=300, jitter_us=100), tmp_path, 200, zero_delay=True)
    assert stats["config"]["delay_us"] == 0
    for direction in ("a_to_b", "b_to_a"):
        assert stats[direction]["frames"] >= 200
        assert stats[direction]["delay_us"]["min"] < 100.0  # not the profile's 200..400 µs


def test_lost_frames_are_lost_and_tcp_recovers(path, tmp_path):
    stats, rtts = ping_pong(path(delay_us=20, loss_pct=3), tmp_path, 100)
    assert len(rtts) == 100  # every echo came back: the kernels retransmitted
    assert stats["a_to_b"]["lost"] + stats["b_to_a"]["lost"] >= 1
    assert max(rtts) >= 1000.0  # a retransmission waited for a timer, not a round trip


def test_a_tiny_net_lan_run_ends_with_results_and_the_path_floor(tmp_path):
    out = tmp_path / "run"
    proc = hftbench(
        "--scenarios", "net-lan", "--clients", "hft", "--orders", "300", "--warmup", "30", "--out", str(out)
    )
    stdout, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 0, stderr
    doc = json.loads((out / "results.json").read_text())
    cells = {(c["scenario"], c["client"]): c for c in doc["cells"]}
    assert set(cells) == {("floor", "floor"), ("net-lan", "floor"), ("net-lan", "hft")}
    assert all(c["status"] == "ok" for c in cells.values()), [c["reason"] for c in cells.values()]
    floor, hft = cells["net-lan", "floor"], cells["net-lan", "hft"]
    assert floor["link"]["config"]["delay_us"] == 0  # the path's floor: nothing added
    assert hft["link"]["config"]["delay_us"] == 25 and hft["link"]["config"]["jitter_us"] == 5
    for direction in ("a_to_b", "b_to_a"):
        assert hft["link"][direction]["frames"] >= 330
        assert hft["link"][direction]["delay_us"]["min"] >= 20.0
    assert hft["result"]["latency_us"]["min"] >= 2 * 20.0
    assert doc["scenarios"]["net-lan"]["link_profile"]["delay_us"] == 25
    report = (out / "report.md").read_text()
    assert "Over the link `lan`: 25 µs ± 5 one way" in report and "Emulator's own cost" in report
    assert "| hft |" in report.split("Over the link `lan`")[1]
    assert leftovers(proc.pid) == []


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupted_network_run_removes_its_namespaces(tmp_path, sig):
    out = tmp_path / "run"
    proc = hftbench(
        "--scenarios", "net-metro", "--clients", "hft", "--orders", "200000", "--no-floor", "--out", str(out)
    )
    try:
        wait_for(lambda: list((out / "net-metro").glob("hft.log")), 60, "the net-metro/hft cell to start")
        assert leftovers(proc.pid), "the path should exist while the cell runs"
        proc.send_signal(sig)
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, stderr
    assert leftovers(proc.pid) == []
    assert processes_mentioning(str(out)) == []  # hft-linkem (its --stats is in the run folder)
    doc = json.loads((out / "results.json").read_text())
    assert doc["complete"] is False


def test_a_killed_run_leaves_a_path_the_next_run_removes(tmp_path):
    first = tmp_path / "first"
    proc = hftbench(
        "--scenarios",
        "net-metro",
        "--clients",
        "hft",
        "--orders",
        "200000",
        "--no-floor",
        "--out",
        str(first),
    )
    try:
        wait_for(lambda: list((first / "net-metro").glob("hft.log")), 60, "the net-metro/hft cell to start")
        proc.kill()  # SIGKILL: no finally runs
        proc.wait()
        stale = leftovers(proc.pid)
        assert stale, "SIGKILL leaves the namespaces behind"
        # ... but not the processes in them: they die with hftbench (PR_SET_PDEATHSIG).
        wait_for(lambda: processes_mentioning(str(first)) == [], 10, "hft-linkem to die with hftbench")
        for ns in (n for n in stale if n.startswith(f"{netpath.PREFIX}-")):  # hft-server too
            wait_for(lambda ns=ns: not netns_pids(ns), 10, f"the processes in {ns} to die")

        second = hftbench(
            "--scenarios",
            "net-none",
            "--clients",
            "hft",
            "--orders",
            "100",
            "--warmup",
            "10",
            "--no-floor",
            "--no-report",
            "--out",
            str(tmp_path / "second"),
        )
        _, stderr = second.communicate(timeout=120)
        assert second.returncode == 0, stderr
        assert "removed what an earlier crashed run left" in stderr and f"hftb-{proc.pid}-srv" in stderr
        assert leftovers(proc.pid) == [] and leftovers(second.pid) == []
    finally:
        for ns in leftovers(proc.pid):  # the test failed half-way: do not leave ours behind
            subprocess.run([IP, "netns", "delete", ns], capture_output=True)


def _path_without_ip(tmp_path: Path) -> str:
    """A PATH with every program of this one except `ip`."""
    shadow = tmp_path / "path-without-ip"
    shadow.mkdir()
    for folder in os.environ.get("PATH", "").split(os.pathsep):
        for prog in Path(folder).glob("*") if Path(folder).is_dir() else []:
            target = shadow / prog.name
            if prog.name != "ip" and not target.exists():
                target.symlink_to(prog)
    return str(shadow)


def test_without_ip_the_network_cells_fail_naming_it_and_the_others_run(tmp_path):
    out = tmp_path / "run"
    env = {**os.environ, "PATH": _path_without_ip(tmp_path)}
    proc = hftbench(
        "--scenarios",
        "latency-1c,net-lan",
        "--clients",
        "hft",
        "--orders",
        "200",
        "--warmup",
        "10",
        "--no-report",
        "--out",
        str(out),
        env=env,
    )
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 1, stderr
    cells = {(c["scenario"], c["client"]): c for c in json.loads((out / "results.json").read_text())["cells"]}
    assert cells["latency-1c", "hft"]["status"] == "ok" and cells["floor", "floor"]["status"] == "ok"
    for key in (("net-lan", "floor"), ("net-lan", "hft")):
        assert cells[key]["status"] == "failed"
        assert "`ip` (iproute2) on PATH" in cells[key]["reason"] and "root" not in cells[key]["reason"]
    assert "`ip` (iproute2) on PATH" in stderr
    assert leftovers(proc.pid) == []


def test_without_root_the_message_names_root():
    message = netpath.missing_requirements(euid=1000, ip=IP)
    assert "root (running as uid 1000" in message and "sudo" in message and "iproute2" not in message
    both = netpath.missing_requirements(euid=1000, ip=None)
    assert "root" in both and "`ip` (iproute2)" in both
    assert netpath.missing_requirements(euid=0, ip=IP) is None


AS_NOBODY = ["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups"]


def _nobody_can_run_hftbench() -> bool:
    if shutil.which("setpriv") is None or not HFTBENCH.is_file():
        return False
    probe = subprocess.run([*AS_NOBODY, str(HFTBENCH), "--version"], capture_output=True, cwd="/")
    return probe.returncode == 0 and os.access(BIN / "client-hft", os.X_OK)


@pytest.mark.skipif(not _nobody_can_run_hftbench(), reason="uid 65534 cannot read this checkout")
def test_as_a_user_the_network_cells_fail_naming_root_and_the_others_run():
    tmp_path = Path(tempfile.mkdtemp(prefix="hftb-user-"))  # pytest's own tmp is root-only
    tmp_path.chmod(0o777)
    out = tmp_path / "run"
    proc = subprocess.Popen(
        [
            *AS_NOBODY,
            str(HFTBENCH),
            "run",
            "--quiet",
            "--scenarios",
            "latency-1c,net-lan",
            "--clients",
            "hft",
            "--orders",
            "200",
            "--warmup",
            "10",
            "--no-report",
            "--out",
            str(out),
        ],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "HOME": str(tmp_path)},
    )
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 1, stderr
    cells = {(c["scenario"], c["client"]): c for c in json.loads((out / "results.json").read_text())["cells"]}
    assert cells["latency-1c", "hft"]["status"] == "ok"
    for key in (("net-lan", "floor"), ("net-lan", "hft")):
        assert cells[key]["status"] == "failed" and "needs root (running as uid 65534" in cells[key]["reason"]
    assert leftovers(proc.pid) == []
    shutil.rmtree(tmp_path)
