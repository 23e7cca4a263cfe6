"""`hftbench run --server-cpus / --client-cpus` on the real binaries: the server's worker
threads and every client land on the CPUs asked for, and results.json says so."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from hftbench.measure.placement import online_cpus
from support.hftbench_fakes import REPO

BIN = REPO / "bin"
HFTBENCH = Path(os.environ.get("VIRTUAL_ENV", REPO / ".venv")) / "bin" / "hftbench"
CLIENTS = [c for c in ("c", "hft") if (BIN / f"client-{c}").is_file()]

pytestmark = [
    pytest.mark.usefixtures("real_binaries"),
    pytest.mark.skipif(
        not CLIENTS or len(online_cpus()) < 2,
        reason="needs bin/client-c or client-hft (make build) and 2 CPUs",
    ),
]


def test_a_pinned_run_puts_the_server_and_the_clients_on_their_cpus(tmp_path):
    server_cpu, client_cpu = sorted(online_cpus())[:2]
    out = tmp_path / "run"
    cmd = [
        str(HFTBENCH),
        "run",
        "--scenarios",
        "small",
        "--clients",
        ",".join(CLIENTS),
        "--orders",
        "300",
        "--no-floor",
        "--no-report",
        "--quiet",
        "--out",
        str(out),
        "--server-cpus",
        str(server_cpu),
        "--client-cpus",
        str(client_cpu),
    ]
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads((out / "results.json").read_text())
    assert doc["fingerprint"]["placement"] == {"server_cpus": str(server_cpu), "client_cpus": str(client_cpu)}
    assert doc["server"]["flags"][-2:] == ["--cpus", str(server_cpu)]
    for cell in doc["cells"]:
        assert cell["status"] == "ok", cell["reason"]
        extra = json.loads((out / cell["file"]).read_text())["extra"]
        # One CPU to run on: one worker thread (the C client sizes its pool to its CPUs,
        # the HFT client pins one thread per CPU of its --cpus).
        assert extra["workers"] == 1, (cell["client"], extra)
        if cell["client"] == "hft":
            assert extra["cpus"] == str(client_cpu)


def test_a_cpu_that_is_not_online_is_refused_naming_it(tmp_path):
    proc = subprocess.run(
        [str(HFTBENCH), "run", "--suite", "quick", "--server-cpus", "1000", "--out", str(tmp_path / "r")],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2, proc.stderr
    assert "--server-cpus 1000: CPU 1000 is not online here" in proc.stderr
