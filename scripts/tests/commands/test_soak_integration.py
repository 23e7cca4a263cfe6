"""A short soak end to end on the real bin/ (hft-server, client-hft): a tiny soak scenario
(24 s, open loop at 1,000 orders/s, 0.25 s intervals, one connection, the gate's placement),
with a drift planted in its second half by the server's `--inject-after-s`; the run folder
holds the interval log and the server's /proc samples, report.md the per-tenth table, every
interval, the plots and the drift verdict, and `hftbench compare` fails on the drift (exit 1,
verdict.json `drift`)."""

from __future__ import annotations

import json
import os
import subprocess
import warnings
from pathlib import Path

import pytest
import yaml
from hftbench import histograms
from hftbench.judge import drift
from hftbench.measure import proc_sampler
from support.hftbench_fakes import REPO

BIN = REPO / "bin"
HFTBENCH = Path(os.environ.get("VIRTUAL_ENV", REPO / ".venv")) / "bin" / "hftbench"

pytestmark = [
    pytest.mark.timeboxed,
    pytest.mark.usefixtures("real_binaries"),
    pytest.mark.timeout(300),
]

SCENARIOS = """schema_version: 1
targets: {p50_us: 500, p99_us: 2000, throughput_rps: 10000}
scenarios:
  soak-tiny:
    description: the soak's machinery in 24 s (open loop, one connection)
    duration_s: 24
    connections: 1
    warmup: 200
    rate: 1000
    interval_s: 0.25
suites:
  tiny: {scenarios: [soak-tiny], clients: [hft], colocate: true}
"""
# From 14 s after the server's start (the soak starts about a second after it) one order in
# 100 busy-waits 30 ms, and the ~30 orders the schedule sends meanwhile wait behind it: nearly
# a third of the last tenth's orders are late by up to 30 ms, so its P99 is ~30 ms.
# - Open loop, like the real soak: every interval holds ~250 orders, stalled or not. In closed
#   loop a stalled interval held a tenth of a quiet one's orders: one with 49 (< min_samples
#   50) left the drift not gated in a clean clone's busy make test, and beside the parallel
#   pass the permutation over intervals so unequal could not tell the tenths apart
#   (inconclusive at x14.3).
# - The gate's placement (colocate: the server on one CPU, client-hft busy-polling on the
#   other at nice -20): beside a busy core and the parallel pass an open loop placed by the
#   scheduler read P99 up to 74 ms in quiet intervals, as much as the drift; placed, 2-16 ms
#   (scripts/experiments/repeat-beside.sh, 2026-11-29).
STALL_US = 30_000
PLANTED = [f"--inject-stall-us={STALL_US}", "--inject-stall-every=100", "--inject-after-s=14"]
MIN_SAMPLES = 50  # P99's, per interval, in this test's gates.yaml


def _hftbench(*args: str, timeout: float = 240) -> subprocess.CompletedProcess:
    exe = str(HFTBENCH) if HFTBENCH.is_file() else "hftbench"
    return subprocess.run(
        [exe, *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "CI": "true"},
    )


def _gates(tmp: Path) -> Path:
    """gates.yaml with P99's min_samples cut to 50 per interval: a 0.25 s interval holds ~250
    orders at 1,000/s. Threshold and alpha are the project's, unchanged."""
    doc = yaml.safe_load((REPO / "bench-config" / "gates.yaml").read_text())
    doc["metrics"]["p99_us"]["min_samples"] = MIN_SAMPLES
    path = tmp / "gates.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


def _host_froze(out: Path) -> str | None:
    """Why this soak cannot show its drift, when the host held it back as long as the drift
    does: an interval of the first tenth with P99 at the planted stall, or an interval of
    either tenth with fewer than MIN_SAMPLES orders. In open loop a freeze of the whole VM
    makes every order it holds back late (one held the client 0.3 s and hftbench's /proc
    sampler 0.2 s, beside make test's parallel pass), and 0.25 s intervals cannot outweigh
    it; the real soak's 60 s tenths at 2,000/s can (docs/soak.md). None when neither happened."""
    first, last = drift.tenths(drift.read_intervals(out / "soak-tiny" / "hft.hlog"))
    worst_ns = max((histograms.decode(i.histogram).get_value_at_percentile(99) for i in first), default=0)
    if worst_ns >= STALL_US * 1000:
        return f"an interval of the first tenth read P99 {worst_ns / 1e6:.0f} ms (stall: {STALL_US // 1000})"
    fewest = min((i.count for i in [*first, *last]), default=0)
    if fewest < MIN_SAMPLES:
        return f"an interval held {fewest} orders (< {MIN_SAMPLES})"
    return None


@pytest.fixture(scope="module")
def soak(tmp_path_factory):
    """The soak, measured once more (at most) when the host froze it (_host_froze): a second
    freeze, or a product that reads like one every time, fails the tests below."""
    tmp = tmp_path_factory.mktemp("soak")
    (tmp / "scenarios.yaml").write_text(SCENARIOS)
    flags = [f"--server-flag={f}" for f in PLANTED]

    def measure(out: Path) -> subprocess.CompletedProcess:
        return _hftbench(
            "run",
            "--config",
            str(tmp / "scenarios.yaml"),
            "--suite",
            "tiny",
            "--no-floor",
            "--quiet",
            "--out",
            str(out),
            *flags,
        )

    out = tmp / "run"
    proc = measure(out)
    if proc.returncode == 0 and (why := _host_froze(out)):
        # a warning, so that make test's summary says so even when the second soak passes
        warnings.warn(f"soak measured again: {why} ({out} kept)", stacklevel=1)
        out = tmp / "run-again"
        proc = measure(out)
    return out, proc, _gates(tmp)


def test_the_soak_cell_leaves_intervals_and_server_samples(soak):
    out, proc, _ = soak
    assert proc.returncode == 0, proc.stderr
    intervals = drift.read_intervals(out / "soak-tiny" / "hft.hlog")
    assert len(drift.full_intervals(intervals)) >= 90  # 24 s / 0.25 s
    doc = json.loads((out / "soak-tiny" / "hft.json").read_text())
    assert sum(i.count for i in intervals) == doc["ok"]
    samples = proc_sampler.read_csv(out / "soak-tiny" / "hft.server.csv")
    assert len(samples) >= 10 and all(s.rss_kib > 0 for s in samples)
    assert max(s.connections for s in samples) >= 1  # the client's keep-alive connection


def test_the_report_shows_the_table_the_plots_and_the_drift(soak):
    out, _, gates = soak
    default = (out / "report.md").read_text()  # written by run, with the project's gates
    assert "## Soak: drift over time" in default and "min_samples 10,000" in default
    proc = _hftbench("report", str(out), "--no-compare", "--gates", str(gates))
    assert proc.returncode == 0, proc.stderr
    md = (out / "report.md").read_text()
    section = md[md.index("## Soak: drift over time") : md.index("## Client comparison")]
    assert "### soak-tiny/hft" in section
    assert section.count("\n| ") >= 2 + 10  # the header rows and ten tenths
    assert "<summary>All " in section and "intervals</summary>" in section
    assert "P99 drift, last tenth / first tenth: **❌ drifted**" in section
    assert "Server RSS:" in section and "MiB/h" in section
    for kind in ("latency", "server"):
        png = out / "plots" / f"soak_soak-tiny_hft_{kind}.png"
        assert png.is_file() and png.stat().st_size > 5_000, png
        assert f"(plots/{png.name})" in section


def test_compare_fails_on_the_drift(soak, tmp_path):
    out, _, gates = soak
    verdict, summary = tmp_path / "verdict.json", tmp_path / "summary.md"
    proc = _hftbench(
        "compare",
        str(out),
        str(out),
        "--gates",
        str(gates),
        "--json",
        str(verdict),
        "--summary",
        str(summary),
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    doc = json.loads(verdict.read_text())
    assert doc["status"] == "regression" and doc["exit_code"] == 1
    (d,) = doc["drift"]
    assert (d["scenario"], d["client"], d["metric"], d["gated"], d["verdict"]) == (
        "soak-tiny",
        "hft",
        "p99_us",
        True,
        "regression",
    )
    assert d["ratio"] > 1.1 and d["ci"][0] > 1.0 and d["p_adjusted"] < 0.01
    assert {"scenario": "soak-tiny", "client": "hft", "metric": "p99_us_drift"}.items() <= doc["flags"][
        0
    ].items()
    text = summary.read_text()
    assert text.startswith("## ❌ Regression: soak-tiny/hft P99 drifted") and "**Soak drift**" in text
    assert "soak-tiny/hft p99_us drift" in proc.stderr  # RegressionCheck.fails()
