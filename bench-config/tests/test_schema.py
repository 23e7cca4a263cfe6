"""The result schema accepts every valid example and rejects every invalid one."""

import json
from pathlib import Path

import jsonschema
import pytest

CONFIG = Path(__file__).resolve().parents[1]
SCHEMA = json.loads((CONFIG / "schema" / "result.schema.json").read_text())
TESTDATA = CONFIG / "testdata"


def validator():
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    return jsonschema.Draft202012Validator(
        SCHEMA, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
    )


@pytest.mark.parametrize("path", sorted(TESTDATA.glob("result-valid-*.json")), ids=lambda p: p.stem)
def test_valid_examples_pass(path):
    errors = list(validator().iter_errors(json.loads(path.read_text())))
    assert errors == [], [e.message for e in errors]


@pytest.mark.parametrize("path", sorted(TESTDATA.glob("result-invalid-*.json")), ids=lambda p: p.stem)
def test_invalid_examples_fail(path):
    assert list(validator().iter_errors(json.loads(path.read_text()))), f"{path.name} was accepted"


def test_there_are_examples_of_both_kinds():
    assert len(list(TESTDATA.glob("result-valid-*.json"))) >= 3
    assert len(list(TESTDATA.glob("result-invalid-*.json"))) >= 10


def test_valid_histogram_decodes_to_the_stated_percentiles():
    from hdrh.histogram import HdrHistogram

    doc = json.loads((TESTDATA / "result-valid-closed.json").read_text())
    hist = HdrHistogram.decode(doc["histogram"]["data"])
    assert hist.get_total_count() == doc["ok"]
    assert hist.get_value_at_percentile(99) / 1000 == pytest.approx(doc["latency_us"]["p99"], abs=0.001)
