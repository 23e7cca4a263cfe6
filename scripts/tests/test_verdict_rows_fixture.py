"""bench-config/testdata/verdict-rows.json: the verdict table, headline and classify rules the
dashboard's compare view repeats in JS (gh-pages/site/js/verdict-rows.js, checked against the
same file by gh-pages/test/verdict-rows.test.mjs). If this fails, verdict_text.py, classify
or gates.yaml changed: change the JS the same way and update the fixture."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hftbench import verdict_text
from hftbench.compare_gates import load_gates
from hftbench.verdict_rules import classify

FIXTURE = json.loads(
    (Path(__file__).resolve().parents[2] / "bench-config" / "testdata" / "verdict-rows.json").read_text()
)


def _revive(r: dict) -> dict:
    return {**r, "mde": math.inf if r.get("mde") == "inf" else r.get("mde")}


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip()[1:-1].split("|")]


def test_gates_match_gates_yaml():
    gates = load_gates()
    gated = {m.name: {"threshold": m.threshold, "alpha": m.alpha} for m in gates.metrics}
    gated = {name: g for name, g in gated.items() if gates.metric(name).gated and name != "errors"}
    assert FIXTURE["gates"] == {"confidence": gates.confidence, "metrics": gated}


def test_table_head():
    assert _cells(verdict_text._table_head(0.95).splitlines()[0]) == FIXTURE["table_head"]


@pytest.mark.parametrize("case", FIXTURE["rows"], ids=lambda c: "/".join(c["cells"][1:3] + [c["cells"][-1]]))
def test_row_cells(case):
    assert _cells(verdict_text._row(_revive(case["input"]))) == case["cells"]


@pytest.mark.parametrize("case", FIXTURE["headlines"], ids=lambda c: c["headline"][:40])
def test_headline(case):
    doc = {**case["input"], "results": [_revive(r) for r in case["input"]["results"]]}
    assert verdict_text.headline(doc) == case["headline"]


@pytest.mark.parametrize("case", FIXTURE["classify"], ids=str)
def test_classify(case):
    ci = tuple(math.nan if x is None else x for x in case["ci"])
    p = 0.0 if case["significant"] else 1.0
    assert classify(case["ratio"], ci, p, threshold=case["threshold"], alpha=0.01) == case["verdict"]
