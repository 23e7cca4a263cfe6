"""report.md, results.csv and plots rendered from fixture results (no server, no clients)."""

from __future__ import annotations

import copy
import csv

import pytest
from hftbench.publish import report
from hftbench.publish.rows import check_targets, make_row
from hftbench.results import Cell, ClientResult, Run, load_run
from support.hftbench_fakes import valid_result

TARGETS = {"p50_us": 500, "p99_us": 2000, "throughput_rps": 10000}
OPEN = {"mode": "open", "target_rate_rps": 5000}


def result(client: str, scenario: str = "medium", **changes) -> ClientResult:
    doc = copy.deepcopy(valid_result())  # 1,000 samples, P50 99 µs, P99 202 µs, 46,948 orders/s
    doc.update(client=client, scenario=scenario, **changes)
    return ClientResult.from_dict(doc)


def ok_cell(client: str, repeat: int = 1, **changes) -> Cell:
    r = result(client, **changes)
    return Cell(
        scenario="medium",
        client=client,
        status="ok",
        reason=None,
        result=r,
        wall_s=0.5,
        repeat=repeat,
        file=f"medium/{client}.json",
        exit_code=0,
        server_orders=1100,
    )


def c_cell(scenario: str, r, wall_s: float) -> Cell:
    """client c's ok cell of `scenario` holding result `r`."""
    return Cell(scenario=scenario, client="c", status="ok", result=r, wall_s=wall_s)


def make_run(tmp_path, cells, name="run_20261122T030000Z", targets=TARGETS) -> Run:
    path = tmp_path / name
    path.mkdir(parents=True)
    run = Run(
        path=path,
        run_id=name,
        suite="standard",
        started_at="2026-11-22T03:00:00Z",
        finished_at="2026-11-22T03:05:00Z",
        complete=True,
        fingerprint={"cores": 2, "cpu_model": "Test CPU", "tuning": {"knobs": {}}},
        git={"commit": "0123456789abcdef", "branch": "main", "dirty": False},
        tools={"python": "3.11"},
        server={"binary": "bin/hft-server"},
        targets=targets,
        scenarios={"medium": {"orders": 1000, "connections": 50, "warmup": 100, "rate": None}},
        repeats=1,
        cells=cells,
        wall_s=100.0,
    )
    run.write()
    return run


def table_row(md: str, client: str, after: str = "### medium") -> str:
    section = md.split(after, 1)[1]
    return next(line for line in section.splitlines() if line.startswith(f"| {client} |"))


def test_targets_vs_actual_marks_pass_fail_and_unsupported_percentiles(tmp_path):
    failed = Cell(
        scenario="medium",
        client="go",
        status="failed",
        reason="killed by SIGSEGV",
        result=None,
        wall_s=0.1,
        repeat=1,
        file="medium/go.json",
        exit_code=-11,
    )
    md = report.render(make_run(tmp_path, [ok_cell("c"), failed]))
    assert "| **target** | > 10,000 | < 500 µs |  | < 2.00 ms |" in md
    row = table_row(md, "c")
    # 1,000 samples: P99 shown (needs 1,000), P99.9 not (needs 10,000).
    assert row.startswith("| c | 46,948 | 99.1 µs | 144 µs | 202 µs | n/a¹ | 248 µs | 31.2 µs |")
    assert row.endswith("| ✅ |")
    assert table_row(md, "go").endswith("| ❌ killed by SIGSEGV |")
    assert "- ❌ medium/go: killed by SIGSEGV" in md
    assert "P99.9 10,000 samples" in md  # the sample rule is stated


def test_a_missed_target_is_a_cross_with_the_figure(tmp_path):
    md = report.render(make_run(tmp_path, [ok_cell("c")], targets={"p50_us": 50, "throughput_rps": 100000}))
    row = table_row(md, "c")
    assert "❌" in row and "P50 99.1 µs ≥ 50.0 µs" in row and "throughput 46,948 ≤ 100,000 orders/s" in row


def test_open_loop_is_judged_on_keeping_up_with_the_offered_rate():
    behind = c_cell("o", result("c", scenario="o", **OPEN, throughput_rps=4000.0), 1.0)
    on_rate = c_cell("o", result("c", scenario="o", **OPEN, throughput_rps=4990.0), 1.0)
    assert check_targets(make_row([on_rate]), TARGETS) == (True, [])
    assert check_targets(make_row([behind]), TARGETS) == (False, ["throughput 4,000 ≤ 4,750 orders/s"])


def test_too_few_samples_leave_a_target_unjudged_not_failed():
    few = c_cell("small", result("c", scenario="small", ok=100), 0.1)
    row = make_row([few])
    assert row.percentile("p99") is None and row.percentile("p90") is not None
    passed, notes = check_targets(row, TARGETS)
    assert passed is True  # P50 99 µs < 500 µs and 46,948 orders/s > 10,000 pass; P99 is not judged
    assert any("P99 not judged (needs ≥ 1,000 samples, has 100)" in n for n in notes)


def test_repeats_are_merged_from_the_histograms():
    row = make_row([ok_cell("c", 1), ok_cell("c", 2)])
    assert row.samples == 2000
    assert row.percentile("p99") is not None and abs(row.percentile("p99") - 201.855) < 1
    assert round(row.throughput_rps, 2) == 46948.36  # Σ ok / Σ seconds of two equal repeats


def test_cross_client_table_and_comparison_with_a_previous_run(tmp_path):
    prev = make_run(tmp_path, [ok_cell("c"), ok_cell("rust")], name="run_20261122T020000Z")
    slower = ok_cell("c", throughput_rps=23474.18)
    now = make_run(tmp_path, [slower, ok_cell("rust")])
    md = report.render(now, prev)
    assert "| c | 23,474 · 103 µs · 202 µs · 248 µs |" in md
    assert "## Compared with the previous run (run_20261122T020000Z)" in md
    assert "| medium | c | 0.5 | 1 | 1 | 202 µs → 202 µs |" in md
    assert "| medium | rust | 1 | 1 | 1 |" in md


def test_write_all_writes_report_csv_and_plots_and_finds_the_previous_run(tmp_path):
    make_run(tmp_path, [ok_cell("c")], name="run_20261122T020000Z")
    run = make_run(tmp_path, [ok_cell("c"), ok_cell("rust")])
    path = report.write_all(load_run(run.path))
    md = path.read_text()
    assert "## Compared with the previous run (run_20261122T020000Z)" in md
    plots = sorted(p.name for p in (run.path / "plots").glob("*.png"))
    assert plots == ["clients.png", "percentiles_medium.png", "throughput.png"]
    assert all((run.path / "plots" / p).read_bytes()[:4] == b"\x89PNG" for p in plots)
    rows = list(csv.DictReader((run.path / "results.csv").open()))
    assert [(r["scenario"], r["client"], r["status"], r["p99_us"]) for r in rows] == [
        ("medium", "c", "ok", "201.855"),
        ("medium", "rust", "ok", "201.855"),
    ]


def test_the_previous_run_prefers_the_same_suite(tmp_path):
    from hftbench.results import previous_run

    older_same = make_run(tmp_path, [ok_cell("c")], name="run_20261122T010000Z")
    newer_other = make_run(tmp_path, [ok_cell("c")], name="run_20261122T020000Z")
    newer_other.suite = "quick"
    newer_other.write()
    now = make_run(tmp_path, [ok_cell("c")])
    assert previous_run(now.path, suite="standard") == older_same.path
    assert previous_run(now.path, suite="pr") == newer_other.path  # no same-suite run: the newest
    assert previous_run(older_same.path, suite="standard") is None


def lateness_fields(values_ns: list[int]) -> dict:
    from hdrh.histogram import HdrHistogram

    h = HdrHistogram(1, 60_000_000_000, 3)
    for v in values_ns:
        h.record_value(v)
    data = {"format": "hdr-v2-deflate-base64", "unit": "ns", "data": h.encode().decode("ascii")}
    return {"send_lateness_histogram": data}


def open_cell(client: str, lateness_ns: list[int], **changes) -> Cell:
    doc = copy.deepcopy(valid_result("result-valid-open.json"))  # 5,000/s over 50 connections
    doc.update(client=client, scenario="medium", ok=1000, errors=0, **lateness_fields(lateness_ns), **changes)
    doc["error_kinds"]["timeout"] = 0
    return Cell(scenario="medium", client=client, status="ok", result=ClientResult.from_dict(doc), wall_s=0.5)


def test_open_loop_rows_show_the_send_lateness_and_say_when_the_generator_fell_behind(tmp_path):
    # 5,000/s over 50 connections: one connection's sends are 10 ms apart; 10 % = 1 ms.
    on_time = open_cell("c", [4_000] * 1000)
    behind = open_cell("rust", [4_000] * 980 + [3_000_000] * 20)
    md = report.render(make_run(tmp_path, [on_time, behind]))
    assert "| P99 uncorrected | send lateness P99 | status |" in md
    c_row, rust_row = table_row(md, "c"), table_row(md, "rust")
    assert "| 202 µs | 4.0 µs | ✅ |" in c_row and "fell behind" not in c_row
    assert (
        "| 3.00 ms | ✅ ⚠️ generator fell behind: send lateness P99 3.00 ms > 10% of the 10.0 ms" in rust_row
    )
    assert "fell behind" in md.split("## Targets vs actual", 1)[1].split("###", 1)[0]  # the rule is stated
    assert make_row([on_time]).fell_behind is False and make_row([behind]).fell_behind is True
    assert make_row([ok_cell("c")]).fell_behind is None  # closed loop: not judged


def test_hft_rows_say_whether_they_busy_polled_and_the_report_explains_the_trade(tmp_path):
    spun = ok_cell("hft", extra={"busy_poll": True})
    slept = Cell(
        scenario="medium",
        client="hft",
        status="ok",
        repeat=2,
        result=result("hft", extra={"busy_poll": False}),
        wall_s=0.5,
    )
    md = report.render(make_run(tmp_path, [ok_cell("c"), spun]))
    assert table_row(md, "hft").endswith("| ✅ busy-polled |")
    assert table_row(md, "c").endswith("| ✅ |")
    assert "· busy-polled |" in md.split("## Client comparison", 1)[1]
    assert "28 µs against 63 µs" in md and "3.7 ms against 129 µs" in md
    mixed = report.render(make_run(tmp_path / "mixed", [spun, slept]))
    assert "busy-polled in 1 of 2 repeats" in table_row(mixed, "hft")
    unknown = report.render(make_run(tmp_path / "unknown", [ok_cell("hft")]))
    assert "busy-poll not recorded" in table_row(unknown, "hft")
    assert "28 µs against 63 µs" not in report.render(make_run(tmp_path / "none", [ok_cell("c")]))


def test_results_csv_has_the_send_lateness_of_open_loop_rows_only(tmp_path):
    run = make_run(tmp_path, [open_cell("c", [4_000] * 990 + [3_000_000] * 10), ok_cell("rust")])
    from hftbench.publish.csvout import write_csv

    rows = {r["client"]: r for r in csv.DictReader(write_csv(run).open())}
    assert float(rows["c"]["send_lateness_p50_us"]) == pytest.approx(4.0, abs=0.01)
    assert float(rows["c"]["send_lateness_p99_us"]) == pytest.approx(4.0, abs=0.01)
    assert rows["rust"]["send_lateness_p50_us"] == rows["rust"]["send_lateness_p99_us"] == ""


def test_a_scenario_with_every_percentile_na_is_left_out_of_the_client_plot(tmp_path):
    # test_faults' killed server: 6 of 200,000 orders answered, no percentile shown; the plot
    # used to raise ("Data cannot be log-scaled") and report.md was never written
    from hftbench.publish import plots
    from hftbench.publish.rows import Row

    def row(scenario, pct):
        return Row(scenario=scenario, client="hft", cells=[], ok=True, reasons=[], samples=6, pct_us=pct)

    killed = {"long": [row("long", {"p50": None, "p99": None})]}
    assert plots.plot_clients(killed, tmp_path / "none.png") is None
    both = {**killed, "short": [row("short", {"p50": 40.0, "p99": None})]}
    assert plots.plot_clients(both, tmp_path / "clients.png") == tmp_path / "clients.png"
    assert (tmp_path / "clients.png").stat().st_size > 0
