"""hb_result writes documents the result schema accepts, whose histogram decodes to the stated figures."""

import json
import subprocess
from pathlib import Path

import jsonschema
import pytest
from hdrh.histogram import HdrHistogram

ROOT = Path(__file__).resolve().parents[3]
SCHEMA = json.loads((ROOT / "bench-config" / "schema" / "result.schema.json").read_text())


def render(hb_print, mode):
    out = subprocess.run([hb_print, "result", mode], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


@pytest.mark.parametrize("mode", ["closed", "open", "empty"])
def test_result_is_valid(hb_print, mode):
    doc = render(hb_print, mode)
    validator = jsonschema.Draft202012Validator(
        SCHEMA, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
    )
    assert [e.message for e in validator.iter_errors(doc)] == []
    assert doc["mode"] == ("open" if mode == "open" else "closed")
    assert doc["orders"] == doc["ok"] + doc["errors"]
    assert ("send_lateness_us" in doc) == ("send_lateness_histogram" in doc) == (mode == "open")


def test_histogram_matches_latency_fields(hb_print):
    doc = render(hb_print, "open")
    for hist_key, lat_key in [
        ("histogram", "latency_us"),
        ("uncorrected_histogram", "uncorrected_latency_us"),
        ("send_lateness_histogram", "send_lateness_us"),
    ]:
        hist = HdrHistogram.decode(doc[hist_key]["data"])
        assert hist.get_total_count() == doc["ok"] == 1000
        lat = doc[lat_key]
        for pct, key in [(50, "p50"), (99, "p99"), (99.9, "p999")]:
            assert hist.get_value_at_percentile(pct) / 1000 == pytest.approx(lat[key], abs=0.001)
        assert hist.get_min_value() / 1000 == pytest.approx(lat["min"], abs=0.001)


def test_no_sample_gives_null_latencies(hb_print):
    doc = render(hb_print, "empty")
    assert doc["ok"] == 0 and doc["error_kinds"]["connect"] == 1
    assert set(doc["latency_us"].values()) == {None}
