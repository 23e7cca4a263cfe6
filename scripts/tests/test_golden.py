"""Behaviour held still: a fixed set of stored runs (fixtures/golden/, written once by its
make_runs.py) gives byte for byte the verdict.json and summary of `hftbench compare` and the
report.md and results.csv of `hftbench report` kept in fixtures/golden/expected/. A change
that moves code without changing what it computes leaves them equal; a change that means to
change an output rewrites them with HFTBENCH_GOLDEN_UPDATE=1 and shows the diff in review."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from hftbench import cli

GOLDEN = Path(__file__).parent / "fixtures" / "golden"
HEAD_RUN = "run_20261126T010000Z_head01_0a0b0c"


@pytest.fixture(scope="module")
def outputs(tmp_path_factory) -> dict[str, str]:
    tmp = tmp_path_factory.mktemp("golden")
    for side in ("base", "head"):
        shutil.copytree(GOLDEN / side, tmp / side)
    code = cli.main(["compare", str(tmp / "base"), str(tmp / "head"), "--json", str(tmp / "verdict.json"),
                     "--summary", str(tmp / "summary.md")])  # fmt: skip
    assert code == 1  # head's tail is 12 % slower: the golden case is a regression
    assert cli.main(["report", str(tmp / "head" / HEAD_RUN), "--no-compare"]) == 0
    run = tmp / "head" / HEAD_RUN
    files = {"verdict.json": tmp / "verdict.json", "summary.md": tmp / "summary.md",
             "report.md": run / "report.md", "results.csv": run / "results.csv"}  # fmt: skip
    return {name: path.read_text() for name, path in files.items()}


@pytest.mark.parametrize("name", ["verdict.json", "summary.md", "report.md", "results.csv"])
def test_stored_runs_give_the_same_outputs(outputs, name):
    expected = GOLDEN / "expected" / name
    if os.environ.get("HFTBENCH_GOLDEN_UPDATE") == "1":
        expected.parent.mkdir(exist_ok=True)
        expected.write_text(outputs[name])
    assert outputs[name] == expected.read_text(), (
        f"{name} changed; if meant: HFTBENCH_GOLDEN_UPDATE=1 pytest {__file__}"
    )
