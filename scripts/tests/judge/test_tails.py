"""Tails past P99 over the rounds: a round design's quantile rests on the rounds' samples, not
one run's (judge/rows.py `_round_samples`), so P99.9 is judged where one run could never
carry it; and the tail the gate guards, head's orders past base's P99.9 of each round
(judge/exceedance.py), counted where no run holds 100,000 orders."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from hftbench.answers import NO_CHANGE, NOT_GATED, REGRESSION
from hftbench.design_names import PAIRED_ROUNDS, UNPAIRED
from hftbench.histograms import Grid
from hftbench.judge import clustered, exceedance
from hftbench.judge.compare import compare_sides
from hftbench.judge.gates import load_gates
from hftbench.publish import verdict_cells
from hftbench.store.baseline import load_side
from support.gate_synth import latency_run, result_doc, write_run

SERIES = ("latency-1c", "hft")


def _rounds(folder, side, rng, n=20_000, rounds=16, **shape):
    for i in range(1, rounds + 1):
        doc = result_doc(*SERIES, latency_run(rng, n, median_us=30.0, run_noise=0.01, **shape))
        write_run(folder / side, f"run_20261202T03{i:02d}00Z_{side}{i:02d}_abc123", {SERIES: [doc]})
    return load_side(folder / side)


def _row(c, metric):
    return next(r for r in c.results if r.metric == metric and r.series == "/".join(SERIES))


@pytest.fixture(scope="module")
def stalled(tmp_path_factory):
    """16 rounds of 20,000 orders a side; head stalls 0.3 % of its orders at about 300 µs: its
    P99.9 triples while its P99 moves a few percent."""
    folder = tmp_path_factory.mktemp("stall")
    rng = np.random.default_rng(62)
    return _rounds(folder, "base", rng), _rounds(folder, "head", rng, slow_fraction=0.003, slow_us=300.0)


def test_a_rare_stall_moves_p999_judged_over_the_rounds(stalled):
    every_metric = replace(load_gates(), series=("latency-1c/hft",))
    c = compare_sides(*stalled, every_metric, design=PAIRED_ROUNDS)
    p999 = _row(c, "p999_us")
    # 320,000 orders a side over the rounds, where one run's 20,000 is a fifth of the rule's
    assert p999.min_samples == 320_000 and p999.gated
    assert p999.verdict == REGRESSION and p999.ratio > 2.5 and p999.mde is not None
    assert _row(c, "p99_us").ratio < 1.1
    assert c.status == REGRESSION


def test_with_the_default_gates_p999_is_shown_with_its_interval_and_mde_but_reported(stalled):
    c = compare_sides(*stalled, load_gates(), design=PAIRED_ROUNDS)
    p999 = _row(c, "p999_us")
    assert not p999.gated and p999.reason == "reported only: gates.yaml's series guards other metrics of it"
    assert p999.ci is not None and p999.ci[0] > 2.0 and p999.mde is not None


def test_unpaired_runs_and_thin_rounds_still_need_the_samples_in_each(stalled, tmp_path):
    c = compare_sides(*stalled, load_gates(), design=UNPAIRED)
    assert _row(c, "p999_us").reason == "n too small: 20000 samples in a run < 100000"
    rng = np.random.default_rng(3)
    thin = [_rounds(tmp_path, side, rng, n=5_000, rounds=24) for side in ("base", "head")]
    row = _row(compare_sides(*thin, load_gates(), design=PAIRED_ROUNDS), "p999_us")
    assert row.verdict == NOT_GATED
    assert row.reason == "n too small: 5000 samples in a round (each needs ≥ 10,000) < 100000"


def test_default_gates_fail_a_rare_stall_on_the_orders_it_puts_past_base_p999(stalled):
    """0.3 % of head's orders stalled at 300 µs: the round's slowest 0.1 % (both sides) are
    nearly all head's, far past the 1.5 line; the check fails naming it while P99 stays inside
    the band."""
    c = compare_sides(*stalled, load_gates(), design=PAIRED_ROUNDS)
    row = _row(c, "p999_exceedance")
    assert row.gated and row.verdict == REGRESSION
    assert row.ratio > 5.0 and row.ci[0] > 1.5
    assert row.base_value < 0.0005 and 0.0015 < row.head_value < 0.0025
    assert _row(c, "p99_us").verdict != REGRESSION
    assert c.status == REGRESSION and c.exit_code == 1
    assert any("latency-1c/hft p999_exceedance" in why for why in c.failures())
    assert verdict_cells.value(row.metric, row.head_value).endswith("%")


def test_the_same_build_on_both_sides_puts_as_many_past_the_line(tmp_path):
    rng = np.random.default_rng(7)
    same = [_rounds(tmp_path, side, rng, n=50_000) for side in ("base", "head")]
    row = _row(compare_sides(*same, load_gates(), design=PAIRED_ROUNDS), "p999_exceedance")
    assert row.gated and row.verdict == NO_CHANGE
    assert 1 / 1.5 < row.ci[0] < 1.0 < row.ci[1] < 1.5


def _grid(rng, rounds, n, *, alike=0.0):
    """A grid of `rounds` rounds of n orders a side from one continuous distribution, a share
    `alike` of head's orders the same as base's order of the same index (a duet's host stall
    hits both), the rest drawn on their own: the body (below 4, where P99.9 never is) in one bucket,
    the tail in buckets of 0.001, fine enough that orders near the line seldom tie."""
    edges = np.concatenate([[4.0], 4.0 + 0.001 * np.arange(1, 20_001)])
    base = rng.exponential(1.0, size=(rounds, n))
    head = np.where(rng.random((rounds, n)) < alike, base, rng.exponential(1.0, size=(rounds, n)))

    def counts(x):
        index = np.minimum(np.searchsorted(edges, x), len(edges) - 1)
        return np.stack([np.bincount(row, minlength=len(edges)) for row in index])

    return Grid(edges, counts(base), counts(head))


@pytest.mark.parametrize("alike", [0.0, 0.5])
def test_the_same_build_reads_no_change_whether_or_not_the_sides_move_together(alike):
    """No change, 300 rounds of 10,000 orders a side (10 past the line each): the rounds' log
    ratio centres on 0 within 3 standard errors, independent sides or sides sharing half their
    orders (a line at base's own P99.9 with base's count taken as one more, its order
    statistic's expectation, reads -4 and -6 standard errors here)."""
    g = _grid(np.random.default_rng(11), 300, 10_000, alike=alike)
    base, head = exceedance.round_shares(g, 0.999)
    y = np.log(head / base)
    se, _ = clustered.standard_error(y)
    assert abs(float(np.mean(y))) < 3 * se


def test_head_slower_in_its_tail_puts_more_of_its_orders_past_the_line():
    g = _grid(np.random.default_rng(12), 40, 10_000)
    slower = Grid(g.values_ns, g.base, np.roll(g.head, 500, axis=1))  # head's tail 0.5 later
    base, head = exceedance.round_shares(slower, 0.999)
    assert np.exp(np.mean(np.log(head / base))) > 1.5


def test_unpaired_runs_count_past_base_pooled_line(stalled):
    c = compare_sides(*stalled, load_gates(), design=UNPAIRED)
    row = _row(c, "p999_exceedance")
    assert row.verdict == REGRESSION and row.ratio > 5.0
