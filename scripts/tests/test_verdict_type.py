"""verdict.py's Verdict reads back what it writes: the golden verdict.json (compare's) byte for
byte, and a verdict with every command's section and a workflow step's own key."""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
from pathlib import Path

import jsonschema
import pytest
from hftbench.absent import ABSENT
from hftbench.stored_verdict import GatedRow, ShownRow, StoredVerdict, read_any
from hftbench.verdict import Flag, MetricResult, Verdict

GOLDEN = Path(__file__).parent / "fixtures" / "golden" / "expected" / "verdict.json"
HEAD_RUN = "run_20261126T010000Z_head01_0a0b0c"  # the golden head's first run (test_golden.py)


def _text(doc: dict) -> str:
    return json.dumps(doc, indent=2) + "\n"


def test_the_golden_verdict_reads_back_byte_for_byte():
    text = GOLDEN.read_text()
    v = Verdict.from_json(json.loads(text))
    assert _text(v.to_json()) == text
    assert isinstance(v.results[0], MetricResult) and isinstance(v.results[0].ci, tuple)
    assert v.partial is ABSENT and not v.partial and v.base.ref is ABSENT


BISECT = {
    "status": "culprit",
    "good": "a",
    "bad": "b",
    "culprit": {"sha": "b", "subject": "s"},
    "steps": [],
    "reason": "b is the first commit slower than a",
    "series": "s/c",
    "metric": "p99_us",
    "effect": {"ratio": 1.3, "ci": [1.2, 1.4], "from": "bad vs good"},
    "runner": "a",
}
POOL = {
    "runners": [
        {
            "name": "a",
            "state": "complete",
            "why": None,
            "runner": "r1",
            "verdict": "regression",
            "rounds_per_side": 12,
            "measure_s": 70.0,
            "calibration": None,
            "calibrated_mde": None,
            "rows": [
                {
                    "series": "s/c",
                    "metric": "p99_us",
                    "ratio": 1.2,
                    "gated": True,
                    "weight": 1.0,
                    "weight_from": "equal",
                }
            ],
            "optional": False,
        }
    ],
    "missing": ["b"],
    "partial": True,
    "alone": [
        {
            "runner": "a",
            "series": "s/c",
            "metric": "p99_us",
            "ratio": 1.3,
            "ci": [1.2, 1.4],
            "p_adjusted": 0.001,
            "pooled_ratio": 1.02,
            "pooled_verdict": "no_change",
            "decided": True,
        }
    ],
    "check": {"passes": False, "why": ["leg b missing"]},
}


def test_every_section_and_an_unknown_key_read_back():
    doc = json.loads(GOLDEN.read_text())
    doc["survival"] = {"delay": {"latency-1c/hft p99_us": 0.9}}
    for side in ("base", "head"):
        doc[side]["ref"] = None if side == "base" else "feature"
    ab = {
        "rounds_per_side": 12,
        "design": "duet",
        "order": "each order to both servers",
        "block_s": 0.5,
        "measure_s": 70.2,
        "build_s": {"base": 1.0},
        "server_flags": {"base": "--workers 1"},
        "sandbox": {"head": "bubblewrap", "note": "sandboxed"},
    }
    doc.update(
        partial=False,
        ab=ab,
        profile={"skipped": "no perf"},
        harness_changes=["M"],
        pool_leg="a",
        bisect=BISECT,
        pool=POOL,
        later_key=[1],
    )
    v = Verdict.from_json(json.loads(_text(doc)))
    assert v.other == {"later_key": [1]} and v.base.ref is None and v.head.ref == "feature"
    assert v.ab.sandbox.head == "bubblewrap" and v.ab.capacity_rps is ABSENT and v.pool_leg == "a"
    assert json.loads(_text(v.to_json())) == doc


def test_an_old_verdict_without_the_later_keys_reads():
    old = {
        "status": "no_change",
        "base": {"run_ids": ["run_a"], "commit": "b"},
        "results": [
            {
                "scenario": "s",
                "client": "c",
                "metric": "p99_us",
                "gated": True,
                "base_runs": 3,
                "head_runs": 3,
                "min_samples": 20000,
                "verdict": "no_change",
                "ratio": 1.0,
                "ci": [0.9, 1.1],
            }
        ],
    }
    v = Verdict.from_json(old)
    assert v.base.runs == 1 and v.base.commit == "b" and v.results[0].mde is None
    assert v.gated_results()[0].ci == (0.9, 1.1) and v.flags == [] and v.looks is None and v.shown_looks == 1


def test_the_store_s_copy_reads_back_and_is_told_from_verdict_json():
    from hftbench.publish.store_text import stored_verdict

    full = json.loads(GOLDEN.read_text())
    stored = json.loads(_text(stored_verdict(Verdict.from_json(full)).to_json()))
    back = StoredVerdict.from_json(stored)
    assert back.to_json() == stored and back.base == "b" * 40 and back.gated[0].series == "latency-1c/hft"
    assert isinstance(read_any(stored), StoredVerdict) and isinstance(read_any(full), Verdict)
    old = {"status": "no_change", "base": "b" * 40, "flags": []}  # an entry from before `gated`
    assert StoredVerdict.from_json(old).to_json() == old


# --- the dashboard's build reads the store's copy by gh-pages/lib/stored-verdict.schema.json ----

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = ROOT / "gh-pages" / "lib" / "stored-verdict.schema.json"
JSON_TYPE = {"None": "null", "str": "string", "bool": "boolean", "int": "integer", "float": "number"}


def _json_types(annotation: str) -> list[str]:
    """'float | None' -> ['null', 'number']; list[...] is an array, dict[...] and a JSON
    TypedDict (BisectStoredJson) an object."""
    parts = [a.strip() for a in annotation.split(" | ")]
    return sorted(
        "array"
        if a.startswith("list[")
        else "object"
        if a.startswith("dict[") or a.endswith("Json")
        else JSON_TYPE[a]
        for a in parts
    )


def test_the_dashboard_s_schema_is_the_stored_verdict_field_for_field():
    schema = json.loads(SCHEMA.read_text())
    types = {
        "#": (StoredVerdict, schema),
        "flag": (Flag, None),
        "gated_row": (GatedRow, None),
        "shown_row": (ShownRow, None),
    }
    for name, (cls, node) in types.items():
        node = node or schema["$defs"][name]
        fields = {f.name: f for f in dataclasses.fields(cls)}
        assert set(node["properties"]) == set(fields), name
        no_default = {n for n, f in fields.items() if f.default is f.default_factory is dataclasses.MISSING}
        assert set(node["required"]) == no_default, name
        for n, f in fields.items():
            want = node["properties"][n]["type"]
            assert sorted([want] if isinstance(want, str) else want) == _json_types(f.type), (name, n)


def test_the_store_s_copy_of_a_verdict_fits_the_schema():
    from hftbench.publish.store_text import stored_verdict

    schema = json.loads(SCHEMA.read_text())
    stored = stored_verdict(Verdict.from_json(json.loads(GOLDEN.read_text()))).to_json()
    jsonschema.validate(json.loads(_text(stored)), schema)


@pytest.mark.skipif(
    shutil.which("node") is None or not (ROOT / "gh-pages" / "node_modules" / "uplot").is_dir(),
    reason="needs node and gh-pages/node_modules (make deps)",
)
def test_a_verdict_python_stored_is_read_by_the_dashboard_s_build(tmp_path):
    """`hftbench history add --verdict` stores the golden regression; the build reads it without a
    word against the schema, and main's open regressions list it."""
    from hftbench import cli

    run = tmp_path / HEAD_RUN
    shutil.copytree(GOLDEN.parents[1] / "head" / HEAD_RUN, run)
    store = tmp_path / "store"
    assert cli.main(["history", "add", str(run), "--store", str(store), "--verdict", str(GOLDEN)]) == 0
    build = ROOT / "gh-pages" / "build-src" / "build.mjs"
    r = subprocess.run(
        ["node", str(build), "--store", str(store), "--out", str(tmp_path / "site")],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0 and "does not fit" not in r.stderr, r.stderr
    (shard,) = (store / "shards").glob("*/*.json")
    stored = StoredVerdict.from_json(json.loads(shard.read_text())["runs"][0]["verdict"])
    assert stored.status == "regression" and stored.gated and stored.rows
    suite = shard.parent.name
    opened = json.loads((tmp_path / "site" / "derived" / f"open-{suite}.json").read_text())["open"]
    assert [(o["scenario"], o["client"], o["metric"]) for o in opened] == [("latency-1c", "hft", "p99_us")]


def test_the_store_keeps_what_publish_renders_and_imports_none_of_it():
    from support.module_graph import import_graph

    graph = import_graph()
    from_store = {b for a, deps in graph.items() if a.startswith("store.") for b in deps}
    assert graph["publish.store_text"] >= {"publish.verdict_text"}  # the control: the graph sees imports
    assert sorted(m for m in from_store if m.startswith("publish")) == []


# --- the dashboard's own readers read the fields the type writes ------------------------------

READ_BY_THE_PAGE = """
const v = JSON.parse(process.argv[1]);
const rows = await import(process.argv[2] + '/verdict-rows.js');
const creep = await import(process.argv[2] + '/creep.js');
const compare = await import(process.argv[2] + '/compare.js');
const link = creep.pushLink({ verdict: v }, v.base);
console.log(JSON.stringify({
  line: rows.verdictLine(v),
  table: rows.verdictTable(v),
  row: rows.storedRow(v, 'latency-1c', 'hft', 'p99_us'),
  label: rows.columnLabel(v, 'verdict'),
  level: creep.verdictLevel(v),
  steps: link.steps ? [...link.steps.keys()] : link.why,
  against: compare.judgedAgainst({ commit: v.base }, { verdict: v }),
}));
"""


def _as_the_page_reads(stored: dict) -> dict:
    js = ROOT / "gh-pages" / "site" / "js"
    r = subprocess.run(
        ["node", "--input-type=module", "-e", READ_BY_THE_PAGE, json.dumps(stored), js.as_uri()],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node")
def test_the_page_s_readers_find_every_field_they_read_in_the_stored_verdict():
    """The dashboard's pure readers (verdict-rows.js, creep.js, compare.js) are run on the store's
    copy of the golden verdict as StoredVerdict writes it: each finds what Python rendered and
    stored. A field renamed in the type (the control: `headline`, `rows`, `confidence`, `base`,
    `gated` renamed in the JSON) leaves the page reading its fallback, so this fails."""
    from hftbench.publish.store_text import stored_verdict

    v = Verdict.from_json(json.loads(GOLDEN.read_text()))
    stored = stored_verdict(v)
    doc = json.loads(_text(stored.to_json()))
    read = _as_the_page_reads(doc)
    assert read["line"] == stored.headline
    assert read["table"]["head"] == list(stored.columns.values())
    assert [
        (r["scenario"], r["client"], r["metric"], r["gated"], r["verdict"], r["cells"])
        for r in read["table"]["rows"]
    ] == [(r.scenario, r.client, r.metric, r.gated, r.verdict, list(r.cells.values())) for r in stored.rows]
    assert read["row"]["cells"] == next(
        r.cells for r in stored.rows if (r.scenario, r.client, r.metric) == ("latency-1c", "hft", "p99_us")
    )
    assert read["label"] == stored.columns["verdict"]
    assert read["level"] == stored.confidence != 0.99  # not the page's default for an old entry
    assert read["steps"] and set(read["steps"]) <= {f"{g.series} {g.metric}" for g in stored.gated}
    assert read["against"] is True

    renamed = {
        "headline": "title",
        "rows": "lines",
        "confidence": "level",
        "base": "against",
        "gated": "gates",
    }
    old = _as_the_page_reads({renamed.get(k, k): x for k, x in doc.items()})
    assert old["line"] != stored.headline and old["table"] is None and old["row"] is None
    assert old["level"] == 0.99 and old["steps"] == "was not compared with a base commit"
    assert old["against"] is False
