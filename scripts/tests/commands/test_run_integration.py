"""`hftbench run --suite quick` end to end on the real bin/ (make build fills it): the run
folder of Contract 4, every result valid against the schema, the report's tables."""

from __future__ import annotations

import csv
import json
import os
import subprocess
from pathlib import Path

import pytest
from hftbench import roster
from hftbench.schema import result_errors
from support.hftbench_fakes import REPO

BIN = REPO / "bin"
CLIENTS = roster.default().names
HFTBENCH = Path(os.environ.get("VIRTUAL_ENV", REPO / ".venv")) / "bin" / "hftbench"

pytestmark = pytest.mark.usefixtures("real_binaries")


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("quick") / "run"
    cmd = [str(HFTBENCH) if HFTBENCH.is_file() else "hftbench", "run", "--suite", "quick", "--out", str(out)]
    proc = subprocess.run(
        cmd, cwd=REPO, capture_output=True, text=True, timeout=540, env={**os.environ, "CI": "true"}
    )
    return out, proc


def test_the_run_succeeds_with_every_client_in_bin(quick_run):
    out, proc = quick_run
    assert proc.returncode == 0, proc.stderr
    doc = json.loads((out / "results.json").read_text())
    ran = [c["client"] for c in doc["cells"] if c["client"] != "floor"]
    skipped = [s["client"] for s in doc["skipped"]]
    assert sorted(ran + skipped) == sorted(CLIENTS) and ran
    assert all((BIN / f"client-{c}").is_file() for c in ran)
    assert all(c["status"] == "ok" for c in doc["cells"]), [c["reason"] for c in doc["cells"]]
    assert (
        doc["complete"] and doc["suite"] == "quick" and doc["server"]["url"].startswith("http://127.0.0.1:")
    )
    assert doc["git"]["commit"] and doc["fingerprint"]["kernel"] and doc["tools"]["hftbench"]


def test_the_folder_follows_contract_4(quick_run):
    out, _ = quick_run
    doc = json.loads((out / "results.json").read_text())
    for name in ("results.json", "results.csv", "report.md", "server.log"):
        assert (out / name).is_file(), name
    assert (out / "server.log").read_text().startswith("hft-server listening on http://127.0.0.1:")
    for cell in doc["cells"]:
        path = out / cell["file"]
        on_disk = json.loads(path.read_text())
        assert result_errors(on_disk) == [], path
        assert on_disk == cell["result"]
        assert path.with_suffix(".hlog").is_file(), path
        if cell["client"] != "floor":
            # /stats agreed: warm-up + measured orders, none lost.
            assert cell["server_orders"] == on_disk["warmup"] + on_disk["orders"]
    pngs = sorted(p.name for p in (out / "plots").glob("*.png"))
    assert {"clients.png", "throughput.png", "percentiles_small.png"} <= set(pngs)
    rows = list(csv.DictReader((out / "results.csv").open()))
    assert len(rows) == len(doc["cells"]) and all(r["status"] == "ok" for r in rows)


def test_the_report_has_the_targets_and_client_tables(quick_run):
    out, _ = quick_run
    md = (out / "report.md").read_text()
    doc = json.loads((out / "results.json").read_text())
    small = md.split("### small", 1)[1].split("\n### ", 1)[0]
    assert "| client | orders/s | P50 | P90 | P99 | P99.9 | max | jitter (σ) |" in small
    assert "| **target** | > 10,000 | < 500 µs |" in small
    for cell in doc["cells"]:
        if cell["client"] != "floor":
            line = next(ln for ln in small.splitlines() if ln.startswith(f"| {cell['client']} |"))
            # 100 orders: P50 and P90 are shown, P99 and P99.9 are not (too few samples).
            assert line.count("n/a¹") == 2, line
            status = line.rstrip(" |").rsplit("| ", 1)[1]
            assert status.startswith(("✅", "❌")) and "P99 not judged" in status, line
    assert "## Client comparison" in md and "## Samples and percentiles" in md and "## Host" in md
