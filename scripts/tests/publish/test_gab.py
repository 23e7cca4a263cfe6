"""`hftbench export-gab`: golden files for a fixed run folder (github-action-benchmark format)."""

from __future__ import annotations

import json
from pathlib import Path

from hftbench import cli

FIXTURES = Path(__file__).parents[1] / "fixtures" / "gate"


def test_export_matches_golden_files(tmp_path):
    assert cli.main(["export-gab", str(FIXTURES / "run_gab"), "--out", str(tmp_path)]) == 0
    for name in ("gab-latency.json", "gab-throughput.json"):
        assert json.loads((tmp_path / name).read_text()) == json.loads(
            (FIXTURES / "gab-golden" / name).read_text()
        )


def test_entries_have_the_custom_tool_shape_and_sample_rules(tmp_path):
    cli.main(["export-gab", str(FIXTURES / "run_gab"), "--out", str(tmp_path)])
    latency = json.loads((tmp_path / "gab-latency.json").read_text())
    throughput = json.loads((tmp_path / "gab-throughput.json").read_text())
    for entry in latency + throughput:
        assert set(entry) <= {"name", "unit", "value", "range", "extra"}
        assert isinstance(entry["value"], int | float) and entry["value"] > 0
    names = {e["name"] for e in latency}
    assert "medium/go P99" in names  # 2,000 samples per repeat state P99
    assert "small/c P99" not in names  # 150 samples do not
    assert not any("P99.9" in n for n in names)
    assert all(e["unit"] == "orders/s" for e in throughput)


def test_missing_run_is_a_usage_error(tmp_path):
    assert cli.main(["export-gab", str(tmp_path / "nope")]) == 2
