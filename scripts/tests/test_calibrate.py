"""`hftbench calibrate --from DIR`: false-alarm and detection tallies on synthetic runs."""

from __future__ import annotations

import json

import numpy as np
from gate_synth import latency_run, result_doc, write_run
from hftbench import cli


def test_calibrate_from_measured_runs(tmp_path, capsys):
    # A/A, a uniform slowdown (+30 % everywhere) and a tail-only stall (2 % of orders at ~3x)
    rng = np.random.default_rng(9)
    kinds = {
        "aa": (24, {}, []),
        "slow": (8, {"body_scale": 1.3, "tail_scale": 1.3}, ["--inject-delay-us", "7"]),
        "stall": (8, {"slow_fraction": 0.02, "slow_us": 90.0},
                  ["--inject-stall-us", "60", "--inject-stall-every", "50"]),
    }  # fmt: skip
    for kind, (count, shape, flags) in kinds.items():
        for i in range(count):
            samples = latency_run(rng, 10_000, median_us=30.0, run_noise=0.01, **shape)
            docs = [result_doc("latency-1c", "hft", samples)]
            path = write_run(tmp_path / kind, f"run_{i:03d}", {("latency-1c", "hft"): docs})
            doc = json.loads((path / "results.json").read_text())
            doc["server"] = {"flags": flags}
            (path / "results.json").write_text(json.dumps(doc))
    args = ["calibrate", "--from", str(tmp_path), "--comparisons", "10", "--k", "8", "--bootstrap", "200",
            "--permutations", "500"]  # fmt: skip
    assert cli.main(args) == 0
    doc = json.loads((tmp_path / "calibration.json").read_text())
    assert doc["runs"] == {"aa": 24, "slow": 8, "stall": 8} and doc["inject_delay_us"] == 7
    assert (doc["inject_stall_us"], doc["inject_stall_every"], doc["looks"]) == (60, 50, 3)
    aa, slow, stall = (doc["tallies"][k] for k in ("aa", "slow", "stall"))
    assert aa["comparisons"] == slow["comparisons"] == stall["comparisons"] == 10
    assert aa["flagged"] == 0 and aa["statuses"].get("no_change", 0) >= 9  # sharp synthetic runs
    assert slow["flagged"] == 10 and slow["regression"]["p50_us"] == 10
    # the stall is caught through P99 while P50 says "no change"
    assert stall["flagged"] == 10 and stall["regression"]["p99_us"] == 10
    assert stall["regression"]["p50_us"] == 0 and stall["no_change"]["p50_us"] >= 9
    assert 1.0 < aa["mde"]["latency-1c/hft p50_us"] < 1.05
    assert doc["effects"]["stall"]["latency-1c/hft p99_us"] > 1.2
    md = (tmp_path / "calibration.md").read_text()
    assert "| A/A (same build) | 0.0% (0/10) |" in md and "| tail-only stall | 100.0% (10/10) |" in md
    assert "Minimum detectable effect" in capsys.readouterr().out


def test_too_few_runs_for_k_is_a_usage_error(tmp_path):
    rng = np.random.default_rng(10)
    for i in range(6):
        write_run(
            tmp_path / "aa",
            f"run_{i}",
            {("latency-1c", "hft"): [result_doc("latency-1c", "hft", latency_run(rng, 500))]},
        )
    assert cli.main(["calibrate", "--from", str(tmp_path), "--k", "8"]) == 2
