"""E-divisive means with a permutation test, on synthetic series with known steps."""

from __future__ import annotations

import numpy as np
import pytest
from hftbench.changepoints import best_split, e_divisive, split_statistics


def test_energy_statistic_fixed_vector():
    # x = [0, 0, 1, 1] split at 2: cross mean |x-y| = 1, within = 0 -> Q = 2*2/4 * 2 = 2
    q = split_statistics(np.array([0.0, 0.0, 1.0, 1.0]), min_size=2)
    assert q[2] == pytest.approx(2.0)
    assert best_split(np.array([0.0, 0.0, 1.0, 1.0]), 2) == (2, pytest.approx(2.0))
    assert best_split(np.array([1.0, 2.0]), 2) is None


def test_one_step_found_where_it_is():
    rng = np.random.default_rng(1)
    x = np.concatenate([rng.normal(100, 2, 30), rng.normal(112, 2, 25)])
    cps = e_divisive(x, seed=1)
    assert [c.index for c in cps] == [30]
    assert cps[0].p_value <= 0.01
    assert cps[0].change_pct == pytest.approx(12, abs=2)


def test_two_steps():
    rng = np.random.default_rng(2)
    x = np.concatenate([rng.normal(100, 2, 25), rng.normal(115, 2, 20), rng.normal(95, 2, 25)])
    cps = e_divisive(x, seed=2)
    assert [c.index for c in cps] == [25, 45]
    assert cps[0].before == pytest.approx(100, abs=2) and cps[0].after == pytest.approx(115, abs=2)
    assert cps[1].after == pytest.approx(95, abs=2)


@pytest.mark.parametrize("seed", [3, 4, 5])
def test_noise_alone_has_no_change_point(seed):
    rng = np.random.default_rng(seed)
    assert e_divisive(rng.normal(100, 5, 60), seed=seed) == []


def test_short_series_has_none():
    assert e_divisive([1.0, 5.0, 1.0, 5.0]) == []
