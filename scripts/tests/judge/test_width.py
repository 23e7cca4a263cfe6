"""The width series (issue 62, item 3): width-64c, 64 connections in suite pr, judged on what
each server spends alone per order (CPU, memory) and reported on its latency, which the duet
does not show whole (its lanes queue at the slower server); a cost that appears only past 16
connections fails the check on its CPU row."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
from hftbench import config
from hftbench.answers import NO_CHANGE, REGRESSION
from hftbench.design_names import DUET
from hftbench.judge.compare import compare_sides
from hftbench.judge.gates import SERVER_OWN, load_gates
from hftbench.publish import verdict_text
from hftbench.store.baseline import load_side
from support.gate_synth import latency_run, result_doc, write_run
from support.hftbench_fakes import REPO

WIDTH = "width-64c"
LATENCY = ("p50_us", "p90_us", "p99_us", "p999_us", "p999_exceedance")


def test_the_width_series_runs_in_suite_pr_at_64_connections_closed_loop():
    cfg = config.load(REPO / "bench-config" / "scenarios.yaml")
    pr = cfg.suites["pr"]
    assert WIDTH in pr.scenarios and pr.clients == ("hft",)
    width = cfg.scenarios[WIDTH]
    assert width.connections == 64 and width.mode == "closed" and width.rate is None
    assert width.connections > max(cfg.scenarios[s].connections for s in pr.scenarios if s != WIDTH) * 4


def test_the_width_series_is_judged_on_its_servers_cpu_and_memory_and_only_reported_on_latency():
    gates = load_gates()
    for metric in (*SERVER_OWN, "errors"):
        assert gates.why_not_judged(WIDTH, "hft", metric) is None, metric
    for metric in LATENCY:
        why = gates.why_not_judged(WIDTH, "hft", metric)
        assert why is not None and why.startswith("reported only: the duet does not show it whole"), (
            metric,
            why,
        )
    # Without its series entry nothing of it but its failures is judged: the entry is the guard.
    without = replace(gates, series=tuple(p for p in gates.series if not p.startswith(f"{WIDTH}/")))
    assert without.why_not_judged(WIDTH, "hft", "cpu_us_per_order") is not None
    assert without.why_not_judged(WIDTH, "hft", "memory_bytes_per_order") is not None


def test_a_reported_reason_naming_the_scenario_beats_the_series_default_and_a_catch_all_does_not():
    gates = load_gates()
    # latency-1c's P99.9 is covered only by the catch-all "*": it keeps the series' default.
    assert gates.why_not_judged("latency-1c", "hft", "p999_us") == (
        "reported only: gates.yaml's series guards other metrics of it"
    )
    assert gates.why_not_judged("load", "hft", "p99_us") == (
        "reported only: gates.yaml's series guards other metrics of it"
    )


# Each side's server CPU per order (µs) alone, and the connections from which the head's
# injected cost applies (--inject-delay-us 1 --inject-delay-min-connections 16).
BASE_CPU = {"latency-1c": 11.4, WIDTH: 6.5}
CONNECTIONS = {"latency-1c": 1, WIDTH: 64}
MEDIAN_US = {"latency-1c": 28.0, WIDTH: 900.0}


def _duet_rounds(tmp_path, rng, *, cost_us: float, from_connections: int, rounds: int = 8) -> None:
    """`rounds` duet rounds of latency-1c/hft and width-64c/hft (run folders named as ab names
    them): head's server pays `cost_us` of CPU per order on the series with at least
    `from_connections` connections, and the duet moves a many-lane series' latency ratio 3
    times as much (its lanes queue at the slower server; any multiple: it is reported only);
    each cell has its server's CPU and memory."""
    for i in range(1, rounds + 1):
        for side in ("base", "head"):
            cells, cpu, memory = {}, {}, {}
            for scenario, base_cpu in BASE_CPU.items():
                wide = CONNECTIONS[scenario] >= from_connections
                extra = cost_us if side == "head" and wide else 0.0
                lanes_queue = 3 if CONNECTIONS[scenario] > 1 else 1
                median = MEDIAN_US[scenario] * (1 + lanes_queue * extra / base_cpu)
                samples = latency_run(rng, 3_000, median_us=median, run_noise=0.002)
                cells[(scenario, "hft")] = [result_doc(scenario, "hft", samples)]
                cpu[scenario] = (base_cpu + extra) * float(np.exp(rng.normal(0.0, 0.01)))
                memory[scenario] = float(rng.normal(2.0, 1.5))  # bytes per order, both alike
            run = write_run(tmp_path / side, f"run_20261203T1100{i:02d}Z_{side}{i:02d}_abcdef", cells)
            results = json.loads((run / "results.json").read_text())
            for cell in results["cells"]:
                orders = cell["server_orders"]
                cell["server_cpu_s"] = cpu[cell["scenario"]] * orders / 1e6
                cell["server_memory_before_bytes"] = 50_000_000
                cell["server_memory_after_bytes"] = 50_000_000 + round(memory[cell["scenario"]] * orders)
                cell["server_memory_from"] = "/proc/<pid>/status RssAnon"
            (run / "results.json").write_text(json.dumps(results))


def _compare(tmp_path, gates):
    return compare_sides(load_side(tmp_path / "base"), load_side(tmp_path / "head"), gates, DUET)


def test_a_cost_past_16_connections_fails_on_width_64c_cpu_and_not_on_latency_1c(tmp_path):
    rng = np.random.default_rng(62)
    _duet_rounds(tmp_path, rng, cost_us=1.0, from_connections=16)  # +15 % of width-64c's CPU
    gates = load_gates().for_looks(3)
    c = _compare(tmp_path, gates)
    rows = {(r.scenario, r.metric): r for r in c.results}
    cpu = rows[(WIDTH, "cpu_us_per_order")]
    assert cpu.gated and cpu.verdict == REGRESSION and 1.12 < cpu.ratio < 1.19
    memory = rows[(WIDTH, "memory_bytes_per_order")]
    assert memory.gated and memory.verdict == NO_CHANGE
    # The width series' latency moved, reported only: it is not what fails.
    p50 = rows[(WIDTH, "p50_us")]
    assert (
        not p50.gated and p50.ratio > 1.3 and p50.why_not_gated.startswith("reported only: the duet does not")
    )
    # The one connection paid nothing, and reads so.
    for metric in ("p50_us", "cpu_us_per_order"):
        assert rows[("latency-1c", metric)].gated and rows[("latency-1c", metric)].verdict == NO_CHANGE
    assert c.status == REGRESSION and c.exit_code == 1
    failures = c.failures()
    assert failures and all(f.startswith(f"{WIDTH}/hft cpu_us_per_order:") for f in failures), failures
    line = verdict_text.headline(c.verdict())
    assert line.startswith(f"❌ Regression: {WIDTH}/hft server CPU per order +1"), line
    assert "latency-1c" not in line


def test_without_the_width_series_the_same_cost_passes_the_check(tmp_path):
    # The gate before width-64c: latency-1c alone (and width-64c's rows reported) cannot see a
    # cost that appears only past 16 connections, which is why the width series is guarded.
    rng = np.random.default_rng(62)
    _duet_rounds(tmp_path, rng, cost_us=1.0, from_connections=16)
    gates = load_gates().for_looks(3)
    narrow = replace(gates, series=tuple(p for p in gates.series if not p.startswith(f"{WIDTH}/")))
    c = _compare(tmp_path, narrow)
    assert not any(r.gated for r in c.results if r.scenario == WIDTH and r.metric != "errors")
    assert c.status != REGRESSION and c.exit_code == 0


def test_the_same_cost_on_every_order_fails_on_latency_1c_too(tmp_path):
    # A control on the world above: a cost from the first connection is no width cost; the
    # one-connection series fails on it as well.
    rng = np.random.default_rng(63)
    _duet_rounds(tmp_path, rng, cost_us=1.0, from_connections=0)
    c = _compare(tmp_path, load_gates().for_looks(3))
    rows = {(r.scenario, r.metric): r for r in c.results}
    assert rows[("latency-1c", "cpu_us_per_order")].verdict != NO_CHANGE
    assert rows[(WIDTH, "cpu_us_per_order")].verdict == REGRESSION


def test_a_record_s_own_row_for_a_server_s_cpu_decides_it_and_without_one_it_follows_the_latency():
    """calibrate writes a row for each server's CPU and memory per order: where the solo pairs
    do not show the CPU row whole, the record reports it although the series' P50 is guarded;
    a record from before those rows judges them wherever the series' latency is guarded."""
    refused = "not shown whole (slow): ×1.052 in the design against ×1.046 with each server alone"
    own = replace(
        load_gates(),
        guards={"latency-1c/hft p50_us": None, "latency-1c/hft cpu_us_per_order": refused},
    )
    assert own.why_not_judged("latency-1c", "hft", "p50_us") is None
    assert own.why_not_judged("latency-1c", "hft", "cpu_us_per_order") == refused
    assert own.why_not_judged("latency-1c", "hft", "memory_bytes_per_order") is None  # no row: follows
    older = replace(load_gates(), guards={"latency-1c/hft p50_us": None})
    assert older.why_not_judged("latency-1c", "hft", "cpu_us_per_order") is None
    none = replace(load_gates(), guards={"latency-1c/hft p50_us": "MDE +12 % > 10 % on this runner"})
    assert none.why_not_judged("latency-1c", "hft", "cpu_us_per_order") == (
        "no metric of this series is guarded on this runner"
    )
