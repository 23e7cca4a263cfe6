"""`hftbench calibrate --from DIR`, one injected kind at a time: the leak read as bytes per
order, the width kind paid only by the wide series, the stall's P99.9 exceedance set against
each server alone (the whole flow: test_calibrate.py)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from hftbench import cli
from support.calibrate_runs import judge_again, write_round
from support.gate_synth import latency_run, result_doc, write_run


def _memory(folder: Path, bytes_per_order: float) -> None:
    """The run's cells as measured with the server's memory read: grown by `bytes_per_order`."""
    path = folder / "results.json"
    doc = json.loads(path.read_text())
    for cell in doc["cells"]:
        before = 50 << 20
        cell.update(
            server_memory_before_bytes=before,
            server_memory_after_bytes=before + round(bytes_per_order * cell["server_orders"]),
            server_memory_from="cgroup",
        )
    path.write_text(json.dumps(doc))


def test_a_leak_is_caught_on_memory_per_order_a_difference_in_bytes(tmp_path, capsys):
    """The leak kind (--inject-leak-bytes): its head keeps 64 B more for every order, its latency
    the build's. The tally reads memory per order as the difference it is: the leak flagged
    there in every draw, the A/A never; the effect and the MDE in bytes per order, not ratios."""
    rng = np.random.default_rng(11)
    for kind, count, extra, flags in (("aa", 16, 0.0, []), ("leak", 16, 64.0, ["--inject-leak-bytes=64"])):
        for i in range(count):
            for side, grown in (("base", 0.0), ("head", extra)):
                run = latency_run(rng, 10_000, median_us=30.0, run_noise=0.01)
                write_round(tmp_path, kind, side, i, run, flags if side == "head" else [])
                folder = next((tmp_path / kind / side).glob(f"run_*_{side}{i + 1:02d}_*"))
                _memory(folder, grown + float(rng.normal(0.0, 1.5)))
    doc = judge_again(tmp_path, comparisons=10, k=12)
    assert doc["runs"]["leak"] == 16 and doc["inject_leak_bytes"] == 64
    key = "latency-1c/hft memory_bytes_per_order"
    aa, leak = doc["tallies"]["aa"], doc["tallies"]["leak"]
    assert leak["regression"]["memory_bytes_per_order"] == leak["comparisons"] == 10
    assert leak["series_regression"][key] == 10 and leak["flagged"] == 10
    assert aa["regression"]["memory_bytes_per_order"] == 0 and aa["series_no_change"][key] == 10
    assert aa["series_covered"][key] >= 9  # the A/A's intervals hold 0, the difference's null (not 1)
    assert 60 < doc["effects"]["leak"][key] < 68  # head − base in bytes per order, not a ratio
    assert doc["tallies"]["aa"]["mde"][key] < 32  # bytes per order: the gate's threshold is within reach
    md = (tmp_path / "calibration.md").read_text()
    assert f"- {key}: +6" in md and " B/order" in md.split(f"- {key}: +6", 1)[1].splitlines()[0]
    assert "memory kept per order" in md and "against `--inject-leak-bytes 64`" in md
    judged = md.split("As a verdict with this record judges", 1)[1]
    row = next(line for line in judged.splitlines() if line.startswith(f"| {key} |"))
    assert row.endswith(" B/order |") and "%" not in row.rsplit("|", 2)[1], row  # bytes, not a ratio


def test_the_width_kind_is_a_cost_only_the_wide_series_pays(tmp_path):
    """The width kind (--width-runs): its head's server pays --inject-width-us per order only
    while --inject-width-connections are open, so of suite pr only width-64c sees it. calibrate
    starts that head with the delay and the connections, reads them back from its runs, and
    measures the kind's effect per row: the wide series slower, the one-connection series not."""
    from hftbench.commands.calibrate import Measuring

    width = ["--inject-width-us", "0.5", "--inject-width-connections", "16"]
    args = cli.build_parser("calibrate").parse_args(["calibrate", *width])
    m = Measuring.of(args)
    assert m.flags["width"][-4:] == ["--inject-delay-us", "0.5", "--inject-delay-min-connections", "16"]
    assert m.counts["width"] == 16 and m.flags["slow"][-2:] == ["--inject-delay-us", "4"]
    rng = np.random.default_rng(5)
    flags = ["--inject-delay-us", "0.5", "--inject-delay-min-connections", "16"]
    for kind, count, wide in (("aa", 16, 1.0), ("width", 16, 1.3)):
        for i in range(count):
            for side in ("base", "head"):
                scale = wide if side == "head" else 1.0
                cells = {
                    ("latency-1c", "hft"): [
                        result_doc(
                            "latency-1c", "hft", latency_run(rng, 10_000, median_us=30.0, run_noise=0.01)
                        )
                    ],
                    ("width-64c", "hft"): [
                        result_doc(
                            "width-64c",
                            "hft",
                            latency_run(
                                rng,
                                10_000,
                                median_us=300.0,
                                run_noise=0.01,
                                body_scale=scale,
                                tail_scale=scale,
                            ),
                        )
                    ],
                }
                path = write_run(
                    tmp_path / kind / side, f"run_20261126T030000Z_{side}{i + 1:02d}_{i:06x}", cells
                )
                doc = json.loads((path / "results.json").read_text())
                doc["server"] = {"flags": flags if (kind, side) == ("width", "head") else []}
                (path / "results.json").write_text(json.dumps(doc))
    doc = judge_again(tmp_path, comparisons=4, k=12)
    assert doc["runs"]["width"] == 16 and (doc["inject_width_us"], doc["inject_width_connections"]) == (
        0.5,
        16,
    )
    effects = doc["effects"]["width"]
    assert 1.25 < effects["width-64c/hft p50_us"] < 1.35 and 0.97 < effects["latency-1c/hft p50_us"] < 1.03
    assert doc["tallies"]["width"]["comparisons"] == 4
    md = (tmp_path / "calibration.md").read_text()
    assert "cost only past some width" in md
    assert "16 against `--inject-delay-us 0.5 --inject-delay-min-connections 16`" in md


def test_the_p999_exceedance_is_set_against_each_server_alone(tmp_path):
    """The rare stall's P99.9 exceedance has an effect alone too (each solo pair draws its line
    over both runs), so the solo pairs can show it whole; before, calibrate never compared it
    alone and refused to guard it as "no solo pair measured it"."""
    rng = np.random.default_rng(3)
    stall = {"slow_fraction": 0.004, "slow_us": 300.0}
    for kind, shape in (("aa", {}), ("stall", stall)):
        for i in range(8):
            for side, head_shape in (("base", {}), ("head", shape)):
                run = latency_run(rng, 25_000, median_us=30.0, run_noise=0.01, **head_shape)
                write_round(tmp_path, kind, side, i, run, ["--inject-stall-us", "300"] if head_shape else [])
    for kind, shape in (("solo", {}), ("solo-stall", stall)):
        for i in range(8):
            write_round(
                tmp_path, kind, "", i, latency_run(rng, 25_000, median_us=30.0, run_noise=0.01, **shape), []
            )
    doc = judge_again(tmp_path, comparisons=2, k=8)
    row = doc["survival"]["stall"]["latency-1c/hft p999_exceedance"]
    assert row["pairs"] == 8 and row["alone"] > 3 and row["design"] > 3 and row["whole"], row
    guard = next(g for g in doc["guards"] if g["metric"] == "p999_exceedance")
    assert "no solo pair" not in (guard["why_not"] or ""), guard
