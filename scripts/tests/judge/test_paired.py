"""The paired designs' statistics (paired.py, designs.py) on synthetic blocks whose host
regime (21 or 31 µs, switching at random) hits both members of a pair alike."""

from __future__ import annotations

import numpy as np
import pytest
from hftbench import histograms
from hftbench.design_names import PAIRED_ROUNDS
from hftbench.judge import designs, paired, stats
from hftbench.series import Repeat
from support.gate_synth import encode_ns


def _blocks(rng, n_pairs, *, effect=1.0, stall_every=0, stall_us=0.0, per_block=400):
    """(base, head) encoded histograms, one per block; each pair shares one regime."""
    base, head = [], []
    for _ in range(n_pairs):
        regime = rng.choice([21.0, 31.0])
        b = rng.lognormal(np.log(regime), 0.08, size=per_block)
        h = rng.lognormal(np.log(regime), 0.08, size=per_block) * effect
        if stall_every:
            h[::stall_every] += stall_us
        base.append(encode_ns(b * 1000))
        head.append(encode_ns(h * 1000))
    return base, head


def test_smallest_p_is_two_over_two_to_the_pairs():
    assert paired.smallest_p(3) == pytest.approx(2 / 8)
    assert paired.smallest_p(20) == pytest.approx(2 / 2**20)
    assert paired.smallest_p(5000) == 0.0


def test_three_pairs_cannot_be_significant_below_their_floor():
    rng = np.random.default_rng(1)
    g = histograms.grid(*_blocks(rng, 3, effect=2.0))
    perm = paired.sign_flip_test(g, 0.5, n_perm=400, rng=rng)
    # every one of the 8 flip patterns is as extreme as the data or its mirror: p >= 2/8
    assert perm.p_value >= 0.25 and perm.smallest_p == pytest.approx(0.25)


def test_unequal_rows_are_refused():
    g = histograms.Grid(np.array([1.0]), np.ones((2, 1), dtype=np.int64), np.ones((3, 1), dtype=np.int64))
    with pytest.raises(ValueError, match="2 base rows vs 3 head rows"):
        paired.check_pairs(g)


def test_a_three_percent_slowdown_under_regimes_is_found_by_pairs_not_by_runs():
    rng = np.random.default_rng(2)
    g = histograms.grid(*_blocks(rng, 24, effect=1.03))
    flip = paired.sign_flip_test(g, 0.5, n_perm=1000, rng=rng)
    assert flip.p_value < 0.01
    # the same blocks as unpaired units: the regime mix of each side is noise, the effect hides
    perm = stats.permutation_quantile_test(g, 0.5, n_perm=1000, rng=rng)
    assert perm.p_value > 0.05
    pair_sd = stats.log_sd(paired.bootstrap_replicates(g, 0.5, n_boot=500, rng=rng))
    run_sd = stats.log_sd(stats.bootstrap_ratio_replicates(g, 0.5, n_boot=500, rng=rng))
    assert pair_sd < run_sd / 3


def test_a_a_false_alarms_stay_at_the_level_whatever_the_regimes():
    rng = np.random.default_rng(3)
    pvalues = []
    for _ in range(100):
        g = histograms.grid(*_blocks(rng, 12, per_block=200))
        pvalues.append(paired.sign_flip_test(g, 0.5, n_perm=200, rng=rng).p_value)
    # the level is exact by construction; 100 draws at 10 %: at most 20 by a wide binomial margin
    assert sum(p < 0.10 for p in pvalues) <= 20
    assert sum(p < 0.01 for p in pvalues) <= 5


def test_a_tail_stall_moves_the_paired_p99_not_the_p50():
    rng = np.random.default_rng(4)
    g = histograms.grid(*_blocks(rng, 20, stall_every=50, stall_us=100.0, per_block=1000))
    p99 = paired.sign_flip_test(g, 0.99, n_perm=1000, rng=rng)
    p50 = paired.sign_flip_test(g, 0.5, n_perm=1000, rng=rng)
    assert p99.p_value < 0.01 and np.exp(paired.log_ratio(g, 0.99)) > 1.5
    assert abs(paired.log_ratio(g, 0.5)) < 0.02  # 1 order in 50 cannot move the median 2 %
    assert p50.p_value > p99.p_value


def _heavy_blocks(rng, n_pairs):
    """Blocks as a loaded duet gives them: regimes, and now and then a block with a ms tail."""
    base, head = [], []
    for _ in range(n_pairs):
        regime = rng.choice([16.0, 21.0, 31.0])
        sides = []
        for _ in range(2):
            x = rng.lognormal(np.log(regime), 0.15, size=int(rng.integers(50, 800)))
            if rng.random() < 0.2:
                x[: int(rng.integers(1, 40))] = rng.uniform(200.0, 9000.0)
            sides.append(encode_ns(x * 1000))
        base.append(sides[0])
        head.append(sides[1])
    return base, head


@pytest.mark.parametrize("spread", [paired._Window.SPREAD, 0.0])
@pytest.mark.parametrize("q", [0.5, 0.99])
def test_the_window_changes_the_time_never_the_replicates(q, spread, monkeypatch):
    """Every replicate equals its quantile computed on every bucket, with the same draws; a
    window of no spread sends most replicates to the computation on every bucket."""
    monkeypatch.setattr(paired._Window, "SPREAD", spread)
    g = histograms.grid(*_heavy_blocks(np.random.default_rng(6), 40))
    d = g.base - g.head
    flips = paired.sign_flip_test(g, q, n_perm=600, rng=np.random.default_rng(7), chunk=250)
    rng, want = np.random.default_rng(7), []
    for n in (250, 250, 100):
        f = paired._flips(rng, len(g.base), n)
        qh = histograms.quantile_rows(g.values_ns, g.head.sum(axis=0) + f @ d, q)
        qb = histograms.quantile_rows(g.values_ns, g.base.sum(axis=0) - f @ d, q)
        want.append(np.log(qh / qb))
    assert np.array_equal(flips.null_log_ratios, np.concatenate(want))
    reps = paired.bootstrap_replicates(g, q, n_boot=600, rng=np.random.default_rng(8), chunk=250)
    rng, want = np.random.default_rng(8), []
    for n in (250, 250, 100):
        m = stats._multiplicities(rng, len(g.base), n)
        want.append(
            histograms.quantile_rows(g.values_ns, m @ g.head, q)
            / histograms.quantile_rows(g.values_ns, m @ g.base, q)
        )
    assert np.array_equal(reps, np.concatenate(want))
    w = paired._Window(g, q)
    assert w.hi - w.lo + 1 < len(g.values_ns) / 2  # and it is a window


def test_mean_sign_flip_finds_a_paired_shift_in_per_round_rates():
    rng = np.random.default_rng(5)
    level = rng.choice([30_000.0, 45_000.0], size=16)
    perm = paired.mean_sign_flip_test(level, level * 0.95, n_perm=2000, rng=rng)
    assert perm.p_value < 0.001
    reps = paired.mean_bootstrap_replicates(level, level * 0.95, n_boot=200, rng=rng)
    assert np.allclose(reps, 0.95)


def _repeat(run_id: str, hist: str, hlog: str | None = None) -> Repeat:
    return Repeat(run_id, hist, 100, 0, 1.0, hlog)


def test_rounds_pair_by_their_number_and_an_unmatched_round_is_left_out():
    h = encode_ns(np.full(100, 20_000.0))
    base = [_repeat(f"run_20261126T030000Z_base{i:02d}_a1b2c{i}", h) for i in (1, 2, 3)]
    head = [_repeat(f"run_20261126T030001Z_head{i:02d}_0f0f0{i}", h) for i in (3, 1)]
    matched = designs.pairs(base, head)
    assert [(designs.round_key(b.run_id), designs.round_key(x.run_id)) for b, x in matched] == [
        ("01", "01"),
        ("03", "03"),
    ]
    u = designs.units(PAIRED_ROUNDS, base, head)
    assert u is not None and u.pairs == 2
    assert designs.units(PAIRED_ROUNDS, base, [_repeat("run_x_head09", h)]) is None
    assert designs.round_key("run_20261126T030000Z") is None
