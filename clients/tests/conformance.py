"""Helpers of the conformance suite: the real server as a child process, a client run, the
server's /stats, and the checks shared by several tests. Everything here drives
bin/hft-server and bin/client-* as built by `make build`; stand-in servers appear only where
the real one cannot fail the way a test needs (test_conformance_failures.py)."""

import json
import os
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import hftbench.measure.server
import jsonschema
from hdrh.histogram import HdrHistogram
from hdrh.log import HistogramLogReader
from hftbench import roster
from hftbench.measure import procs

ROOT = Path(__file__).resolve().parents[2]
# HFTBENCH_BIN tests the binaries of another build (a worktree, an install); default bin/.
BIN = Path(os.environ.get("HFTBENCH_BIN", ROOT / "bin"))
CLIENTS = roster.default().names  # bench-config/clients.yaml: every one, built or not
INTERVAL_CLIENTS = roster.default().having("intervals")  # they take --interval-s
SCHEMA = json.loads((ROOT / "bench-config" / "schema" / "result.schema.json").read_text())
_Draft = jsonschema.Draft202012Validator
VALIDATOR = _Draft(SCHEMA, format_checker=_Draft.FORMAT_CHECKER)
INJECTED_DELAY_US = 300  # the delay server's --inject-delay-us
# hft-server closes a connection whose next request head has not come within 10 s (its
# slowloris guard). A client the parallel pass leaves without a CPU that long (make test's
# beside stream runs at SCHED_IDLE) then counts an error and exits 1: a deadline the suite
# did not ask for. Its servers run without the guard; server/src/serve.rs's tests check it.
NO_READ_TIMEOUTS = ("--header-read-timeout-ms", "0", "--body-read-timeout-ms", "0")
# How long a server's start or a client run may take before it counts as hung: a guard, not
# a deadline (pytest.ini's 600 s bounds a whole test). At SCHED_IDLE beside the serial stream
# a run of a few hundred orders can wait minutes for a CPU (the parallel pass took 790 s in a
# busy make test, 106 s alone).
HANG_S = 300


def binary(name: str) -> Path:
    """bin/<name>, or AssertionError naming the fix (a missing binary is a failure, not a skip)."""
    path = BIN / name
    shown = f"bin/{name}" if BIN == ROOT / "bin" else str(path)
    assert path.is_file() and os.access(path, os.X_OK), f"{shown} missing: run make build"
    return path


class Server(hftbench.measure.server.Server):
    """bin/hft-server on a free port, started by hftbench's Server (the suite's one way to
    start it); adds what the tests need: a log of its own per server, and waiting for orders."""

    def __init__(self, log_dir: Path, *extra_args: str, start_timeout_s: float = HANG_S):
        log_path = log_dir / f"hft-server-{os.getpid()}-{time.monotonic_ns()}.log"
        super().__init__(
            binary("hft-server"),
            log_path,
            [*NO_READ_TIMEOUTS, *extra_args],
            start_timeout_s=start_timeout_s,
        )
        self.start()

    def wait_for_orders(self, at_least: int, timeout_s: float) -> int:
        """Poll /stats until total_orders >= at_least; returns the last total seen."""
        deadline = time.monotonic() + timeout_s
        total = 0
        while time.monotonic() < deadline:
            total = self.stats()["total_orders"]
            if total >= at_least:
                return total
            time.sleep(0.01)
        raise AssertionError(f"the server saw only {total} orders in {timeout_s} s (waited for {at_least})")


@dataclass
class Run:
    """One finished client run."""

    client: str
    argv: list
    returncode: int
    stderr: str
    output: Path  # the result JSON (may not exist when the client failed to write it)

    @property
    def doc(self) -> dict:
        assert self.output.is_file(), (
            f"client-{self.client} wrote no result (exit {self.returncode}): {self.stderr}"
        )
        return json.loads(self.output.read_text())

    @property
    def hlog(self) -> Path:
        return self.output.with_suffix(".hlog")


def start_client(client: str, out_dir: Path, *args: str, cpus=None) -> tuple[subprocess.Popen, list, Path]:
    """Starts bin/client-<client> writing <out_dir>/<client>.json; ``cpus``: the only CPUs it may use."""

    def before_exec() -> None:
        procs.die_with_parent()
        if cpus is not None:
            os.sched_setaffinity(0, cpus)

    out_dir.mkdir(parents=True, exist_ok=True)  # the contract does not ask clients to create folders
    output = out_dir / f"{client}.json"
    argv = [str(binary(f"client-{client}")), *args, "--output", str(output)]
    proc = subprocess.Popen(
        argv,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        preexec_fn=before_exec,
    )
    return proc, argv, output


def finish(client: str, started: tuple, timeout_s: float) -> Run:
    proc, argv, output = started
    try:
        _, stderr = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, stderr = proc.communicate()
        raise AssertionError(
            f"client-{client} did not finish within {timeout_s} s: {' '.join(argv)}\n{stderr}"
        ) from None
    return Run(client, argv, proc.returncode, stderr, output)


# For the modules that time nothing (conftest.py): no order may time out however long the
# machine keeps the client waiting. make test runs them under SCHED_IDLE beside the serial pass,
# and with a busy core the 1 s default once failed a Python client's order there.
NO_TIMEOUT = ("--timeout-ms", "600000")


def run_client(client: str, out_dir: Path, *args: str, timeout_s: float = HANG_S, cpus=None) -> Run:
    return finish(client, start_client(client, out_dir, *args, cpus=cpus), timeout_s)


def schema_errors(doc: dict) -> list:
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in VALIDATOR.iter_errors(doc)]


def decode(doc: dict, key: str = "histogram") -> HdrHistogram:
    return HdrHistogram.decode(doc[key]["data"])


def percentile_agrees(hist: HdrHistogram, percentile: float, reported_us: float) -> bool:
    """Does ``reported_us`` match the histogram's value at ``percentile`` within HDR precision?
    HdrHistogram libraries differ in how they round the rank (C/Go/Python: nearest, Rust:
    ceiling) and in which value of a bucket they report (lowest, highest, median), so accept
    anything from the bucket one rank below to the bucket one rank above."""
    n = hist.get_total_count()
    step = 100.0 / n
    lo = hist.get_lowest_equivalent_value(hist.get_value_at_percentile(max(percentile - step, 0.0)))
    hi = hist.get_highest_equivalent_value(hist.get_value_at_percentile(min(percentile + step, 100.0)))
    return lo / 1000 * (1 - 1e-3) - 0.001 <= reported_us <= hi / 1000 * (1 + 1e-3) + 0.001


def hlog_counts(path: Path) -> dict:
    """Total count per tag (None = untagged) over the intervals of an .hlog."""
    reader = HistogramLogReader(str(path), HdrHistogram(1, 60_000_000_000, 3))
    counts: dict = {}
    try:
        while (hist := reader.get_next_interval_histogram()) is not None:
            counts[hist.get_tag()] = counts.get(hist.get_tag(), 0) + hist.get_total_count()
    finally:
        reader.close()
    return counts
