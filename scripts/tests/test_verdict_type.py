"""verdict.py's Verdict reads back what it writes: the golden verdict.json (compare's) byte for
byte, and a verdict with every command's section and a workflow step's own key."""

from __future__ import annotations

import json
from pathlib import Path

from hftbench.verdict import ABSENT, MetricResult, StoredVerdict, Verdict, read_any

GOLDEN = Path(__file__).parent / "fixtures" / "golden" / "expected" / "verdict.json"


def _text(doc: dict) -> str:
    return json.dumps(doc, indent=2) + "\n"


def test_the_golden_verdict_reads_back_byte_for_byte():
    text = GOLDEN.read_text()
    v = Verdict.from_json(json.loads(text))
    assert _text(v.to_json()) == text
    assert isinstance(v.results[0], MetricResult) and isinstance(v.results[0].ci, tuple)
    assert v.partial is ABSENT and not v.partial and v.base.ref is ABSENT


def test_every_section_and_an_unknown_key_read_back():
    doc = json.loads(GOLDEN.read_text())
    doc["survival"] = {"delay": {"latency-1c/hft p99_us": 0.9}}
    for side in ("base", "head"):
        doc[side]["ref"] = None if side == "base" else "feature"
    ab = {"rounds_per_side": 12, "design": "duet", "order": "each order to both servers", "block_s": 0.5,
          "measure_s": 70.2, "build_s": {"base": 1.0}, "server_flags": {"base": "--workers 1"},
          "sandbox": {"head": "bubblewrap", "note": "sandboxed"}}  # fmt: skip
    doc.update(partial=False, ab=ab, profile={"top": []}, harness_changes=["Makefile"], pool_leg="a",
               bisect={"status": "culprit"}, pool={"runners": []}, later_key=[1])  # fmt: skip
    v = Verdict.from_json(json.loads(_text(doc)))
    assert v.other == {"later_key": [1]} and v.base.ref is None and v.head.ref == "feature"
    assert v.ab.sandbox.head == "bubblewrap" and v.ab.capacity_rps is ABSENT and v.pool_leg == "a"
    assert json.loads(_text(v.to_json())) == doc


def test_an_old_verdict_without_the_later_keys_reads():
    old = {"status": "no_change", "base": {"run_ids": ["run_a"], "commit": "b"}, "results": [
        {"scenario": "s", "client": "c", "metric": "p99_us", "gated": True, "base_runs": 3, "head_runs": 3,
         "min_samples": 20000, "verdict": "no_change", "ratio": 1.0, "ci": [0.9, 1.1]}]}  # fmt: skip
    v = Verdict.from_json(old)
    assert v.base.runs == 1 and v.base.commit == "b" and v.results[0].mde is None
    assert v.gated_results()[0].ci == (0.9, 1.1) and v.flags == [] and v.looks is None and v.shown_looks == 1


def test_the_store_s_copy_reads_back_and_is_told_from_verdict_json():
    from hftbench.store.entry import store_verdict

    full = json.loads(GOLDEN.read_text())
    stored = json.loads(_text(store_verdict(full)))
    back = StoredVerdict.from_json(stored)
    assert back.to_json() == stored and back.base == "b" * 40 and back.gated[0].series == "latency-1c/hft"
    assert isinstance(read_any(stored), StoredVerdict) and isinstance(read_any(full), Verdict)
    old = {"status": "no_change", "base": "b" * 40, "flags": []}  # an entry from before `gated`
    assert StoredVerdict.from_json(old).to_json() == old
