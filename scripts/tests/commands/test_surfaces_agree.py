"""One real run, every surface: report.md, results.csv, the history entry, the GAB export,
verdict.json and the verdict rows the history entry stores for the dashboard show the same P50,
P99 and throughput for a series measured twice (series.py's pooled definitions), each within its
own display rounding only.

Two repeats never deliver the same rate, so a surface that took the median or the mean of
the repeats' rates instead of Σ ok / Σ duration shows another number, and one that merged
percentiles its own way shows another P99."""

from __future__ import annotations

import csv
import json
import os
import re
import subprocess
from pathlib import Path

import pytest
from hftbench.publish.store_text import stored_verdict
from hftbench.results import load_run
from hftbench.series import Series
from hftbench.store.entry import run_entry
from hftbench.verdict import Verdict
from support.hftbench_fakes import REPO

BIN = REPO / "bin"
HFTBENCH = Path(os.environ.get("VIRTUAL_ENV", REPO / ".venv")) / "bin" / "hftbench"
CANDIDATES = ("rust", "c", "go", "cpp", "hft", "python")
CLIENTS = [c for c in CANDIDATES if (BIN / f"client-{c}").is_file()][:2]
SCENARIO = "small"

pytestmark = pytest.mark.usefixtures("real_binaries")


def _hftbench(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess:
    exe = str(HFTBENCH) if HFTBENCH.is_file() else "hftbench"
    return subprocess.run(
        [exe, *args], cwd=cwd, capture_output=True, text=True, timeout=300, env={**os.environ, "CI": "true"}
    )


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("agree") / "run"
    # 2,000 orders a repeat: P99 is shown (the display rule needs 1,000 samples).
    proc = _hftbench(
        "run",
        "--suite",
        "quick",
        "--clients",
        ",".join(CLIENTS),
        "--orders",
        "2000",
        "--repeat",
        "2",
        "--no-floor",
        "--quiet",
        "--out",
        str(out),
    )
    assert proc.returncode == 0, proc.stderr
    return out


def parse_us(text: str) -> tuple[float, float]:
    """A report.md latency cell (metrics.fmt_us) as (µs, half its last digit)."""
    m = re.fullmatch(r"([\d,]+(?:\.(\d+))?) (µs|ms)", text.strip())
    assert m, f"not a latency cell: {text!r}"
    scale = 1000.0 if m.group(3) == "ms" else 1.0
    decimals = len(m.group(2) or "")
    return float(m.group(1).replace(",", "")) * scale, 0.5 * 10**-decimals * scale


def parse_rate(text: str) -> tuple[float, float]:
    """A report.md orders/s cell (metrics.fmt_rate, whole orders) as (rate, 0.5)."""
    return float(text.strip().replace(",", "")), 0.5


def report_figures(run: Path, client: str) -> dict[str, tuple[float, float]]:
    md = (run / "report.md").read_text()
    section = md.split(f"### {SCENARIO}", 1)[1].split("\n### ", 1)[0]
    lines = [ln for ln in section.splitlines() if ln.startswith("|")]
    head = [c.strip() for c in lines[0].strip("|").split("|")]
    row = next(ln for ln in lines if ln.startswith(f"| {client} |"))
    cells = dict(zip(head, (c.strip() for c in row.strip("|").split("|")), strict=False))
    return {
        "p50_us": parse_us(cells["P50"]),
        "p99_us": parse_us(cells["P99"]),
        "throughput_rps": parse_rate(cells["orders/s"]),
    }


def csv_figures(run: Path, client: str) -> dict[str, tuple[float, float]]:
    rows = list(csv.DictReader((run / "results.csv").open()))
    pooled = [r for r in rows if (r["scenario"], r["client"], r["repeat"]) == (SCENARIO, client, "all")]
    assert len(pooled) == 1, rows
    r = pooled[0]
    # csvout: µs to the ns, orders/s to 0.01.
    return {
        "p50_us": (float(r["p50_us"]), 0.0005),
        "p99_us": (float(r["p99_us"]), 0.0005),
        "throughput_rps": (float(r["throughput_rps"]), 0.005),
    }


def history_figures(run: Path, client: str) -> dict[str, tuple[float, float]]:
    entry = run_entry(load_run(run))
    res = next(r for r in entry["results"] if (r["scenario"], r["client"]) == (SCENARIO, client))
    return {
        "p50_us": (res["p50_us"], 0.0005),
        "p99_us": (res["p99_us"], 0.0005),
        "throughput_rps": (res["throughput_rps"], 0.05),
    }


def gab_figures(run: Path, client: str, out: Path) -> dict[str, tuple[float, float]]:
    proc = _hftbench("export-gab", str(run), "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    latency = {e["name"]: e["value"] for e in json.loads((out / "gab-latency.json").read_text())}
    rate = {e["name"]: e["value"] for e in json.loads((out / "gab-throughput.json").read_text())}
    name = f"{SCENARIO}/{client}"
    return {
        "p50_us": (latency[f"{name} P50"], 0.0005),
        "p99_us": (latency[f"{name} P99"], 0.0005),
        "throughput_rps": (rate[f"{name} throughput"], 0.05),
    }


def verdict_figures(run: Path, client: str, out: Path) -> dict[str, tuple[float, float]]:
    """verdict.json of the run against itself: head_value (and base_value) are the series' numbers."""
    proc = _hftbench("compare", str(run), str(run), "--json", str(out / "verdict.json"))
    assert proc.returncode == 0, proc.stderr
    doc = json.loads((out / "verdict.json").read_text())
    found = {}
    for r in doc["results"]:
        if (r["scenario"], r["client"]) == (SCENARIO, client) and r["metric"] in (
            "p50_us",
            "p99_us",
            "throughput_rps",
        ):
            assert r["base_value"] == r["head_value"]
            found[r["metric"]] = (r["head_value"], 1e-9)
    return found


SHOWN_METRICS = ("p50_us", "p99_us", "throughput_rps")


def parse_cell(text: str) -> tuple[float, float]:
    """A verdict table's base or head cell (verdict_text.value: µs to 0.1, orders/s whole)."""
    m = re.fullmatch(r"([\d,]+(?:\.\d)?) (µs)|([\d,]+)/s", text)
    assert m, f"not a verdict value cell: {text!r}"
    if m.group(3):
        return float(m.group(3).replace(",", "")), 0.5
    return float(m.group(1).replace(",", "")), 0.05


def stored_row_figures(run: Path, client: str, verdict: Path) -> dict[str, tuple[float, float]]:
    """The rows `history add --verdict` stores for the dashboard (the page shows their texts as
    they are): the series' head cells, for the metrics the verdict's tables show."""
    entry = run_entry(load_run(run), stored_verdict(Verdict.from_json(json.loads(verdict.read_text()))))
    found = {}
    for r in entry["verdict"]["rows"]:
        if (r["scenario"], r["client"]) == (SCENARIO, client) and r["metric"] in SHOWN_METRICS:
            assert r["cells"]["base"] == r["cells"]["head"]
            found[r["metric"]] = parse_cell(r["cells"]["head"])
    return found


def test_every_surface_shows_the_series_numbers(run_dir, tmp_path):
    run = load_run(run_dir)
    for client in CLIENTS:
        cells = run.select(scenario=SCENARIO, client=client, ok_only=True)
        assert len(cells) == 2, [c.reason for c in run.select(scenario=SCENARIO, client=client)]
        series = Series.of_cells(cells)
        truth = {
            "p50_us": series.quantile_us(0.5),
            "p99_us": series.quantile_us(0.99),
            "throughput_rps": series.throughput_rps(),
        }
        surfaces = {
            "report.md": report_figures(run_dir, client),
            "results.csv": csv_figures(run_dir, client),
            "history entry": history_figures(run_dir, client),
            "GAB export": gab_figures(run_dir, client, tmp_path / client),
            "verdict.json": verdict_figures(run_dir, client, tmp_path),
        }
        surfaces["stored verdict rows"] = stored_row_figures(run_dir, client, tmp_path / "verdict.json")
        # P99 of 4,000 samples a side is "not gated (n too small)": a note in the verdict, no row.
        tabled = {"stored verdict rows": {"p50_us", "throughput_rps"}}
        for surface, figures in surfaces.items():
            assert set(figures) == tabled.get(surface, set(truth)), (surface, figures)
            for metric, (shown, rounding) in figures.items():
                assert abs(shown - truth[metric]) <= rounding + 1e-9, (
                    client,
                    surface,
                    metric,
                    shown,
                    truth[metric],
                )
        # The two repeats differ, so the pooled rate is neither repeat's: the check has teeth.
        rates = [c.result.throughput_rps for c in cells if c.result]
        assert min(rates) < truth["throughput_rps"] < max(rates)


def test_the_pooled_throughput_is_total_orders_over_total_time():
    """Σ ok / Σ duration, not the mean or the median of the repeats' rates."""
    from hftbench.series import Repeat

    fast, slow = Repeat("r1", None, 1000, 0, 0.05), Repeat("r2", None, 1000, 0, 0.15)
    s = Series("small", "rust", (fast, slow))
    assert s.repeat_throughputs() == [20000.0, 1000 / 0.15]
    assert s.throughput_rps() == pytest.approx(2000 / 0.2)  # 10,000, where the mean says 13,333
    assert s.samples == 2000 and s.quantile_us(0.5) is None
