"""The throughput script's pure parts: wrk's output, medians over rounds, the table."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from throughput import (  # noqa: E402
    Measure,
    cpu_per_request,
    goal_verdict,
    median_measure,
    paired_ratios,
    parse_result,
    parse_wrk,
    result_requests,
    table,
    wrk_requests,
)

WRK_OUTPUT = """Running 5s test @ http://127.0.0.1:41234/order
  2 threads and 50 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency   812.33us  401.20us  12.01ms   91.02%
    Req/Sec    30.12k     2.01k   34.50k    70.00%
  Latency Distribution
     50%  740.00us
     75%    0.90ms
     90%    1.10ms
     99%    2.31ms
  299812 requests in 5.00s, 80.11MB read
  Non-2xx or 3xx responses: 12
Requests/sec:  59962.40
Transfer/sec:     16.02MB
"""


def test_parse_wrk_reads_rate_and_percentiles_in_us():
    m = parse_wrk(WRK_OUTPUT)
    assert (m.rps, m.p50_us, m.p99_us) == (59962.40, 740.0, 2310.0)
    assert m.note == "12 non-2xx"


def test_wrk_requests_reads_the_completed_count():
    assert wrk_requests(WRK_OUTPUT) == 299812
    with pytest.raises(ValueError, match="requests in"):
        wrk_requests("Requests/sec:  100.0\n")


def test_cpu_per_request_counts_warmup_and_errors():
    doc = {"ok": 9_000, "errors": 0, "warmup": 1_000}
    assert result_requests(doc) == 10_000
    assert cpu_per_request(0.05, result_requests(doc)) == pytest.approx(5.0)
    assert cpu_per_request(0.05, 0) is None


def test_parse_wrk_without_latency_distribution_fails():
    with pytest.raises(ValueError, match="--latency"):
        parse_wrk("Requests/sec:  100.0\n")


def test_parse_result_uses_the_result_fields():
    doc = {"throughput_rps": 1234.5, "errors": 2, "latency_us": {"p50": 10.0, "p99": 20.0}}
    assert parse_result(doc) == Measure(1234.5, 10.0, 20.0, "2 errors")


def test_median_over_rounds_ignores_failed_rounds():
    rounds = [Measure(100, 1, 5), Measure(300, 3, 9), Measure(None, None, None, "exit 1"), Measure(200, 2, 7)]
    m = median_measure(rounds)
    assert (m.rps, m.p50_us, m.p99_us, m.note) == (200, 2, 7, "exit 1")


def test_table_ratio_and_goal():
    rows = {"python": Measure(15_000, 900, 3000, "", 80.04), "c": Measure(40_000, 500, 900)}
    rows["go"] = Measure(None, None, None)
    ratios = {"python": [0.25], "c": [0.60, 0.70, 0.67], "go": []}
    md = table(rows, Measure(60_000, 700, 2000, "", 3.46), ratios)
    lines = md.splitlines()
    assert lines[2] == "| wrk | 60,000 | 1.00 | 700 | 2,000 | 3.5 | | |"
    assert "| python | 15,000 | 0.25 | 900 | 3,000 | 80.0 | ≥ 0.25 | ✅ |" in lines
    assert "| c | 40,000 | 0.67 (0.60–0.70) | 500 | 900 | — | ≥ 0.80 | ❌ |" in lines
    assert "| go | — | — | — | — | — | ≥ 0.80 | — |" in lines


def test_goal_verdict_says_met_only_when_every_round_agrees():
    assert goal_verdict([0.81, 0.85, 0.80], 0.8) == "✅"
    assert goal_verdict([0.70, 0.79, 0.75], 0.8) == "❌"
    assert goal_verdict([0.79, 0.81, 0.87], 0.8) == "2 of 3"
    assert goal_verdict([0.93, 0.99, 1.04], 1.0) == "1 of 3"
    assert goal_verdict([0.5], 0.25) == "✅"
    assert goal_verdict([], 0.8) == "—"


def test_table_shows_rounds_that_straddle_the_goal():
    md = table({"c": Measure(80_000, 500, 900)}, Measure(100_000, 400, 800), {"c": [0.79, 0.81, 0.87]})
    assert "| c | 80,000 | 0.81 (0.79–0.87) | 500 | 900 | — | ≥ 0.80 | 2 of 3 |" in md.splitlines()


def test_paired_ratio_divides_by_the_mean_of_the_wrk_runs_around_it():
    w = lambda rps: ("wrk", Measure(rps, 1, 1))  # noqa: E731
    seq = [w(100), ("c", Measure(90, 1, 1)), w(80), ("rust", Measure(72, 1, 1)), w(64)]
    assert paired_ratios(seq) == {"c": [1.0], "rust": [1.0]}


def test_paired_ratio_cancels_a_linear_drift():
    # The machine slows by 10 % per slot; each client always does 0.8 of wrk's rate.
    speed = [1.0 - 0.1 * i for i in range(7)]
    seq = [
        ("wrk" if i % 2 == 0 else "c", Measure((1000 if i % 2 == 0 else 800) * s, 1, 1))
        for i, s in enumerate(speed)
    ]
    assert [round(r, 9) for r in paired_ratios(seq)["c"]] == [0.8, 0.8, 0.8]
    # Against the first wrk run alone (one per round, as before) the ratio would drift.
    assert round(seq[5][1].rps / seq[0][1].rps, 9) == 0.4


def test_paired_ratio_uses_the_one_wrk_run_there_is_and_skips_failed_runs():
    seq = [("c", Measure(50, 1, 1)), ("wrk", Measure(100, 1, 1)), ("go", Measure(None, None, None))]
    seq += [("wrk", Measure(None, None, None)), ("rust", Measure(30, 1, 1))]
    assert paired_ratios(seq) == {"c": [0.5], "go": [], "rust": []}


def test_split_cpus_gives_the_server_the_lower_half_and_the_tool_the_rest():
    from throughput import split_cpus

    assert split_cpus({1, 0}) == ([0], [1])
    assert split_cpus([5, 2, 3, 4]) == ([2, 3], [4, 5])
    # Odd counts: the load tool gets the larger half, so it is not what limits the server.
    assert split_cpus(range(3)) == ([0], [1, 2])


def test_split_cpus_refuses_a_single_cpu():
    from throughput import split_cpus

    with pytest.raises(ValueError, match="at least 2 CPUs"):
        split_cpus([0])


def test_layout_is_described_and_wrk_sized_to_the_tool_cpus():
    from hftbench.placement import UNPINNED, Placement
    from throughput import describe_layout, wrk_threads

    assert wrk_threads(UNPINNED) == 2
    assert "share all CPUs" in describe_layout(UNPINNED)
    split = Placement((0, 1), (2, 3, 4))
    assert wrk_threads(split) == 3
    assert describe_layout(split) == "server pinned to CPUs 0-1, load tool to CPUs 2-4"
