"""Behaviour held still: a fixed set of stored runs (fixtures/golden/, written once by its
make_runs.py) gives byte for byte the summary of `hftbench compare` and the report.md and
results.csv of `hftbench report` kept in fixtures/golden/expected/, and verdict.json with every
key, string and integer the same and every float to 12 significant digits: numpy's exp and log
take the SIMD path of the CPU and differ in the last bit between them (an AMD EPYC with AVX2 and
no AVX-512 wrote an mde of ...13758 where the file has ...13756, 2026-11-29), and no verdict
turns on the 16th digit. A change that moves code without
changing what it computes leaves them equal; a change that means to change an output rewrites
them with HFTBENCH_GOLDEN_UPDATE=1 and shows the diff in review."""

from __future__ import annotations

import json
import math
import os
import shutil
from pathlib import Path

import pytest
from hftbench import cli

GOLDEN = Path(__file__).parents[1] / "fixtures" / "golden"
HEAD_RUN = "run_20261126T010000Z_head01_0a0b0c"


@pytest.fixture(scope="module")
def outputs(tmp_path_factory) -> dict[str, str]:
    tmp = tmp_path_factory.mktemp("golden")
    for side in ("base", "head"):
        shutil.copytree(GOLDEN / side, tmp / side)
    code = cli.main(
        [
            "compare",
            str(tmp / "base"),
            str(tmp / "head"),
            "--json",
            str(tmp / "verdict.json"),
            "--summary",
            str(tmp / "summary.md"),
        ]
    )
    assert code == 1  # head's tail is 12 % slower: the golden case is a regression
    assert cli.main(["report", str(tmp / "head" / HEAD_RUN), "--no-compare"]) == 0
    run = tmp / "head" / HEAD_RUN
    files = {
        "verdict.json": tmp / "verdict.json",
        "summary.md": tmp / "summary.md",
        "report.md": run / "report.md",
        "results.csv": run / "results.csv",
    }
    return {name: path.read_text() for name, path in files.items()}


@pytest.mark.parametrize("name", ["verdict.json", "summary.md", "report.md", "results.csv"])
def test_stored_runs_give_the_same_outputs(outputs, name):
    expected = GOLDEN / "expected" / name
    if os.environ.get("HFTBENCH_GOLDEN_UPDATE") == "1":
        expected.parent.mkdir(exist_ok=True)
        expected.write_text(outputs[name])
    how = f"{name} changed; if meant: HFTBENCH_GOLDEN_UPDATE=1 pytest {__file__}"
    if name.endswith(".json"):
        differences = json_differences(json.loads(outputs[name]), json.loads(expected.read_text()))
        assert not differences, how + "\n" + "\n".join(differences[:20])
    else:
        assert outputs[name] == expected.read_text(), how


def json_differences(got, want, path="$") -> list[str]:
    """Where two JSON documents differ: floats compared to 12 significant digits, the rest exactly."""
    if isinstance(want, float) and isinstance(got, float):
        return [] if math.isclose(got, want, rel_tol=1e-12) else [f"{path}: {got!r}, expected {want!r}"]
    if type(got) is not type(want):
        return [f"{path}: {got!r}, expected {want!r}"]
    if isinstance(want, dict):
        if list(got) != list(want):
            return [f"{path}: keys {list(got)}, expected {list(want)}"]
        return [d for k in want for d in json_differences(got[k], want[k], f"{path}.{k}")]
    if isinstance(want, list):
        if len(got) != len(want):
            return [f"{path}: {len(got)} items, expected {len(want)}"]
        return [
            d
            for i, (g, w) in enumerate(zip(got, want, strict=True))
            for d in json_differences(g, w, f"{path}[{i}]")
        ]
    return [] if got == want else [f"{path}: {got!r}, expected {want!r}"]


def test_json_differences_reads_the_last_bit_as_equal_and_the_12th_digit_as_a_change():
    assert json_differences({"mde": 1.0585377802913758}, {"mde": 1.0585377802913756}) == []
    assert json_differences({"mde": 1.05853778030}, {"mde": 1.0585377802913756}) == [
        "$.mde: 1.0585377803, expected 1.0585377802913756"
    ]
    assert json_differences({"a": [1, "x"]}, {"a": [1.0, "x"]}) == ["$.a[0]: 1, expected 1.0"]
    assert json_differences({"b": 1, "a": 2}, {"a": 2, "b": 1}) == ["$: keys ['b', 'a'], expected ['a', 'b']"]
