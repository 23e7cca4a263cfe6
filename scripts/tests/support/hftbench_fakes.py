"""A fake bin/ for hftbench's tests: wrapper scripts around fakes/fake_server.py and
fakes/fake_client.py, one behaviour per client (ok, crash, hang, invalid, exit2, errors)."""

from __future__ import annotations

import contextlib
import json
import shlex
import subprocess
import sys
from pathlib import Path

FAKES = Path(__file__).resolve().parents[1] / "fakes"
REPO = Path(__file__).resolve().parents[3]


def _script(path: Path, body: str) -> None:
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(0o755)


def make_bins(root: Path, clients: dict[str, str], server_args: str = "") -> Path:
    """root/bin with hft-server (fake) and client-<name> for each {name: behaviour}."""
    bins = root / "bin"
    bins.mkdir(parents=True, exist_ok=True)
    py = shlex.quote(sys.executable)
    _script(bins / "hft-server", f'exec {py} {shlex.quote(str(FAKES / "fake_server.py"))} "$@" {server_args}')
    for name, behaviour in clients.items():
        _script(
            bins / f"client-{name}",
            f"FAKE_CLIENT={name} FAKE_BEHAVIOUR={behaviour} "
            f'exec {py} {shlex.quote(str(FAKES / "fake_client.py"))} "$@"',
        )
    return bins


# The scenarios' per-request timeout: none an order reaches. The clients' default (1 s) is a
# deadline, and the parallel pass (SCHED_IDLE beside make test's serial stream) may leave a
# fake client or server without a CPU longer than that (a clean clone's busy make test,
# 2026-11-29: a fake client's socket timed out, it exited 1 and wrote no result).
NO_TIMEOUT_MS = 600_000


def write_config(path: Path, orders: int = 20, extra_suites: str = "", extra_scenarios: str = "") -> Path:
    """A small scenarios.yaml: scenarios tiny (20 orders) and tiny-open; suites t and all."""
    never = f"timeout_ms: {NO_TIMEOUT_MS}"
    path.write_text(
        f"""schema_version: 1
targets: {{p50_us: 500000, p99_us: 2000000, throughput_rps: 1}}
scenarios:
  tiny: {{description: twenty orders, orders: {orders}, connections: 1, warmup: 5, {never}}}
  tiny-open: {{orders: {orders}, connections: 1, warmup: 5, rate: 2000, {never}}}
{extra_scenarios}suites:
  t: {{scenarios: [tiny], clients: [rust, go]}}
  all: {{scenarios: [tiny, tiny-open], clients: [python, c, cpp, rust, go, hft]}}
{extra_suites}"""
    )
    return path


def server_repo(path: Path, commits: list[tuple[str, str]]) -> Path:
    """A git repository at `path` whose commits (message, hft-server flags) each set server.sh to
    this checkout's bin/hft-server with those flags: the two sides an end-to-end A/B builds
    (with `--build-cmd "mkdir -p bin && install -m 755 server.sh bin/hft-server"`)."""
    path.mkdir()
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    for message, flags in commits:
        (path / "server.sh").write_text(f'#!/bin/sh\nexec {REPO / "bin" / "hft-server"} {flags}"$@"\n')
        for args in (
            ("add", "server.sh"),
            ("-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", message),
        ):
            subprocess.run(["git", "-C", str(path), *args], check=True, capture_output=True)
    return path


def ab_argv(repo: Path, out: Path, *, orders: int, rounds: int, extra: tuple[str, ...] = ()) -> list[str]:
    """`hftbench ab` of repo's HEAD~1 (base) against HEAD on latency-1c with client-hft, `rounds`
    rounds a side and `orders` orders a cell: the small A/B the end-to-end tests run."""
    size = ["--orders", str(orders), "--repeats", str(rounds), "--max-repeats", str(rounds)]
    where = ["--repo", str(repo), "--base", "HEAD~1", "--head", "HEAD", "--out", str(out)]
    return ["ab", *where, "--scenarios", "latency-1c", "--clients", "hft", *size, *extra]


def valid_result(name: str = "result-valid-closed.json") -> dict:
    return json.loads((REPO / "bench-config" / "testdata" / name).read_text())


def children(pid: int) -> dict[str, int]:
    """{command name: pid} of the processes whose parent is `pid` (a run's server and client)."""
    found = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError):
            head, tail = stat.read_text().rsplit(")", 1)
            if int(tail.split()[1]) == pid:
                found[head.split("(", 1)[1]] = int(stat.parent.name)
    return found
