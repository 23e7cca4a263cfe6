"""Result building: schema-valid documents, exact summaries of known histograms, the .hlog."""

import json
from pathlib import Path

import jsonschema
import pytest
from hdrh.histogram import HdrHistogram
from hdrh.log import HistogramLogReader
from hft_client.args import parse_args
from hft_client.result import (
    build_result,
    exit_status,
    hlog_path,
    hlog_text,
    rfc3339_utc,
    write_outputs,
)
from hft_client.stats import ERROR_KINDS, new_histogram

SCHEMA = json.loads(
    (Path(__file__).resolve().parents[3] / "bench-config/schema/result.schema.json").read_text()
)
VALIDATOR = jsonschema.Draft202012Validator(
    SCHEMA, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
)
WALL_NS = 1_795_341_600_123_456_789  # 2026-11-22T10:00:00.123456Z


def filled(values_ns) -> HdrHistogram:
    h = new_histogram()
    for v in values_ns:
        h.record_value(v)
    return h


def document(cfg_argv, *, ok, kinds=None, values=(), open_loop=False, interrupted=False):
    cfg = parse_args(cfg_argv)
    kinds = {**dict.fromkeys(ERROR_KINDS, 0), **(kinds or {})}
    hist = filled(values)
    return build_result(
        cfg,
        started_wall_ns=WALL_NS,
        duration_s=2.0,
        ok=ok,
        error_kinds=kinds,
        latency=hist,
        uncorrected=filled(values) if open_loop else None,
        pacing=filled([5_000] * len(values)) if open_loop else None,
        interrupted=interrupted,
        extra={"workers": 1},
        lateness=filled([7_000] * len(values)) if open_loop else None,
    )


def test_closed_result_is_schema_valid_and_consistent():
    doc = document(["--orders", "3", "--scenario", "small"], ok=3, values=[100_000, 200_000, 300_000])
    assert [e.message for e in VALIDATOR.iter_errors(doc)] == []
    assert doc["mode"] == "closed" and doc["target_rate_rps"] is None and "uncorrected_latency_us" not in doc
    assert "send_lateness_us" not in doc and "send_lateness_histogram" not in doc
    assert doc["orders"] == doc["ok"] + doc["errors"] == 3
    assert doc["throughput_rps"] == 1.5 and doc["started_at"] == "2026-11-22T10:00:00.123456Z"
    assert HdrHistogram.decode(doc["histogram"]["data"]).get_total_count() == 3
    assert exit_status(doc) == 0


def test_open_result_carries_uncorrected_and_pacing():
    doc = document(["--rate", "100"], ok=2, values=[100_000, 200_000], open_loop=True)
    assert [e.message for e in VALIDATOR.iter_errors(doc)] == []
    assert doc["mode"] == "open" and doc["target_rate_rps"] == 100.0
    assert doc["uncorrected_latency_us"]["max"] == doc["latency_us"]["max"]
    assert doc["extra"]["pacing_error_us"]["count"] == 2
    assert doc["send_lateness_us"]["p50"] == doc["send_lateness_us"]["max"] == pytest.approx(7.0, abs=0.01)
    assert HdrHistogram.decode(doc["send_lateness_histogram"]["data"]).get_total_count() == 2


def test_all_failed_result_is_valid_and_exits_1():
    doc = document([], ok=0, kinds={"connect": 4, "other": 1}, interrupted=True)
    assert [e.message for e in VALIDATOR.iter_errors(doc)] == []
    assert (doc["orders"], doc["errors"], doc["interrupted"]) == (5, 5, True)
    assert doc["latency_us"]["p50"] is None
    assert exit_status(doc) == 1


def test_rfc3339_utc():
    assert rfc3339_utc(0) == "1970-01-01T00:00:00.000000Z"
    assert rfc3339_utc(WALL_NS) == "2026-11-22T10:00:00.123456Z"


def test_hlog_path():
    assert hlog_path("r/small/python.json") == "r/small/python.hlog"
    assert hlog_path("out") == "out.hlog"


@pytest.mark.parametrize("wall_ns", [WALL_NS, 1_795_341_600_999_900_000])  # .9999 s must not round up
def test_hlog_is_readable_by_hdrh_with_both_intervals(tmp_path, wall_ns):
    out = tmp_path / "python.json"
    lat, unc = filled([1_000, 2_000, 3_000]), filled([1_000, 1_500])
    write_outputs({"ok": 3}, str(out), hlog_text(wall_ns, 1.5, lat, unc))
    assert json.loads(out.read_text()) == {"ok": 3}
    text = (tmp_path / "python.hlog").read_text()
    assert text.count("HISTF") == 2 and "#[StartTime: 1795341600." in text and "Tag=uncorrected," in text
    reader = HistogramLogReader(str(tmp_path / "python.hlog"), new_histogram())
    first, second = reader.get_next_interval_histogram(), reader.get_next_interval_histogram()
    assert reader.get_next_interval_histogram() is None
    assert first.get_total_count() == 3 and first.get_tag() is None
    assert second.get_total_count() == 2 and second.get_tag() == "uncorrected"
    assert first.get_end_time_stamp() - first.get_start_time_stamp() == pytest.approx(1500, abs=1)
