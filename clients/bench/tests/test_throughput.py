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
from wrk_raw import (  # noqa: E402
    parse_wrk_histogram,
    raw_wrk_percentiles,
    stats_correct,
    uncorrect,
    wrk_interval_us,
    wrk_percentile,
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
    # No done() histogram line: wrk's printed (corrected) figures, and the note says so.
    m = parse_wrk(WRK_OUTPUT)
    assert (m.rps, m.p50_us, m.p99_us) == (59962.40, 740.0, 2310.0)
    assert m.note == "12 non-2xx; p50/p99 corrected by wrk"


def test_stats_correct_is_wrks():
    # expected 50: 250 us adds its count at 200, 150, 100 (each above 50); 100 adds nothing
    # (100 - 50 = 50 is not above 50); values under 2 x 50 are not sources.
    assert stats_correct({60: 1, 100: 5, 250: 2}, 50) == {60: 1, 100: 7, 150: 2, 200: 2, 250: 2}
    assert wrk_interval_us(5_000_000, 300_000, 50) == 833  # 5 s / (300,000 / 50) in integers
    assert wrk_interval_us(5_000_000, 49, 50) is None  # wrk corrects nothing then


def test_uncorrect_undoes_stats_correct_exactly():
    import random

    rng = random.Random(7)
    for expected in (1, 7, 50, 833):
        raw = {}
        for _ in range(2_000):
            v = int(rng.lognormvariate(6.5, 0.8)) + 1
            raw[v] = raw.get(v, 0) + 1
        assert uncorrect(stats_correct(raw, expected), expected) == raw


def test_wrk_percentile_is_wrks_rank_rule():
    counts = {10: 50, 20: 49, 30: 1}  # 100 samples; rank = round(p + 0.5), half away from zero
    assert [wrk_percentile(counts, p) for p in (50.0, 98.0, 99.0)] == [20, 20, 30]  # ranks 51, 99, 100
    assert wrk_percentile({}, 50.0) is None


def wrk_output_with(histogram: dict, duration_us: int, requests: int) -> str:
    pairs = " ".join(f"{v}:{c}" for v, c in sorted(histogram.items()))
    return f"{WRK_OUTPUT}HFTBENCH_WRK_HISTOGRAM duration_us={duration_us} requests={requests} {pairs}\n"


def test_parse_wrk_reports_the_raw_percentiles_of_the_done_histogram():
    # 2 connections, 100 requests in 5,000 us: expected = 5000 // 50 = 100 us. Raw: 97 at
    # 50 us, 3 at 1,000 us; wrk adds 3 at each of 900, 800, ..., 200 us (24 samples it
    # invented), which lifts its p90 from 50 us to 600 us.
    raw = {50: 97, 1_000: 3}
    corrected = stats_correct(raw, 100)
    assert sum(corrected.values()) == 124
    assert (wrk_percentile(raw, 90.0), wrk_percentile(corrected, 90.0)) == (50, 600)
    out = wrk_output_with(corrected, 5_000, 100)
    assert parse_wrk_histogram(out) == (5_000, 100, corrected)
    assert raw_wrk_percentiles(out, 2) == (50.0, 1_000.0)
    m = parse_wrk(out, connections=2)
    assert (m.p50_us, m.p99_us, m.note) == (50.0, 1_000.0, "12 non-2xx")


def test_a_histogram_that_is_not_wrks_correction_falls_back_to_the_printed_figures():
    # 1 sample at 1,000 us cannot have come from stats_correct with expected 100 above 3 at 200.
    out = wrk_output_with({50: 97, 200: 1, 1_000: 3}, 5_000, 100)
    assert raw_wrk_percentiles(out, 2) is None
    assert parse_wrk(out, connections=2).note.endswith("p50/p99 corrected by wrk")


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
    from hftbench.measure.placement import UNPINNED, Placement
    from throughput import describe_layout, wrk_threads

    assert wrk_threads(UNPINNED) == 2
    assert "share all CPUs" in describe_layout(UNPINNED)
    split = Placement((0, 1), (2, 3, 4))
    assert wrk_threads(split) == 3
    assert describe_layout(split) == "server pinned to CPUs 0-1, load tool to CPUs 2-4"
