"""Tails past P99 over the rounds: a round design's quantile rests on the rounds' samples, not
one run's (judge/compare.py `_round_samples`), so P99.9 is judged where one run could never
carry it."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from gate_synth import latency_run, result_doc, write_run
from hftbench.answers import NOT_GATED, REGRESSION
from hftbench.design_names import PAIRED_ROUNDS, UNPAIRED
from hftbench.judge.compare import compare_sides
from hftbench.judge.gates import load_gates
from hftbench.store.baseline import load_side

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
