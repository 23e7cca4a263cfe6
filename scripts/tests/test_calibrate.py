"""`hftbench calibrate --from DIR`: false-alarm and detection tallies on synthetic runs."""

from __future__ import annotations

import json

import numpy as np
from gate_synth import latency_run, result_doc, write_run
from hftbench import cli


def test_calibrate_from_measured_runs(tmp_path, capsys):
    rng = np.random.default_rng(9)
    for kind, count, scale in (("aa", 16, 1.0), ("slow", 8, 1.5)):
        for i in range(count):
            docs = [result_doc("large", "rust", latency_run(rng, 10_000, tail_scale=scale))]
            server = {"flags": ["--inject-delay-us", "7"]} if kind == "slow" else {}
            path = write_run(tmp_path / kind, f"run_{i:03d}", {("large", "rust"): docs})
            doc = json.loads((path / "results.json").read_text())
            doc["server"] = server
            (path / "results.json").write_text(json.dumps(doc))
    args = ["calibrate", "--from", str(tmp_path), "--comparisons", "20", "--k", "8", "--bootstrap", "200"]
    assert cli.main(args) == 0
    doc = json.loads((tmp_path / "calibration.json").read_text())
    assert doc["runs"] == {"aa": 16, "slow": 8} and doc["inject_delay_us"] == 7
    fa, det = doc["false_alarms"], doc["detection"]
    assert fa["comparisons"] == 20 and det["comparisons"] == 20
    assert fa["flagged"] <= 1  # synthetic A/A: the same distribution on both sides
    assert det["flagged"] >= 18 and det["metrics"]["p99_us"] >= 18
    assert doc["effect_slow_vs_aa"]["large/rust p99_us"] > 1.2
    md = (tmp_path / "calibration.md").read_text()
    assert "| A/A false alarms |" in md and "| injected slowdown detected |" in md
    assert "A/A false alarms" in capsys.readouterr().out


def test_too_few_runs_for_k_is_a_usage_error(tmp_path):
    rng = np.random.default_rng(10)
    for i in range(6):
        write_run(
            tmp_path / "aa",
            f"run_{i}",
            {("large", "rust"): [result_doc("large", "rust", latency_run(rng, 500))]},
        )
    assert cli.main(["calibrate", "--from", str(tmp_path), "--k", "8"]) == 2
