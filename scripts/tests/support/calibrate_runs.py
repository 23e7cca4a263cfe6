"""Calibrate's tests' folders: synthetic rounds laid out as `calibrate --from` reads them, and
the record it writes from them (test_calibrate.py, test_calibrate_kinds.py)."""

from __future__ import annotations

import json

from hftbench import cli

from support.gate_synth import result_doc, write_run


def judge_again(folder, comparisons: int, k: int) -> dict:
    """`hftbench calibrate --from folder` with few resamples (the tests' speed), its record."""
    args = ["calibrate", "--from", str(folder), "--comparisons", str(comparisons), "--k", str(k)]
    assert cli.main([*args, "--bootstrap", "200", "--permutations", "500"]) == 0
    return json.loads((folder / "calibration.json").read_text())


def write_round(folder, kind, side, i, samples, flags, noisy=None):
    """One round's run folder: latency-1c/hft, and latency-8c/hft when `noisy` samples are given.
    A solo run (side "") is named as calibrate names it, soloNN: the key of its pair."""
    name = f"run_20261126T030000Z_{side or 'solo'}{i + 1:02d}_{i:06x}"
    cells = {("latency-1c", "hft"): [result_doc("latency-1c", "hft", samples)]}
    if noisy is not None:
        cells[("latency-8c", "hft")] = [result_doc("latency-8c", "hft", noisy)]
    path = write_run(folder / kind / side, name, cells)
    doc = json.loads((path / "results.json").read_text())
    doc["server"] = {"flags": flags}
    (path / "results.json").write_text(json.dumps(doc))
