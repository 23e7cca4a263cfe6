"""A pool's stratified test (strata.py): its level when the runners differ in absolute
latency, and its gain in power as replicas are added. Simulated runners, seeds fixed."""

from __future__ import annotations

import numpy as np
import pytest
from hftbench.judge import designs, paired, stats, strata
from hftbench.judge.verdict_rules import detectable_effect

ALPHA = 0.05


def runner_test(
    rng, *, level_us: float, noise: float, effect: float = 1.0, pairs: int = 12
) -> designs.Tested:
    """One runner's paired test of per-pair means: a regime shared by both members of a pair
    (this VM's second-to-second swings), the runner's own noise per member, head x effect."""
    regime = level_us * np.exp(rng.normal(0.0, 0.2, pairs))
    base = regime * np.exp(rng.normal(0.0, noise, pairs))
    head = regime * np.exp(rng.normal(0.0, noise, pairs)) * effect
    perm = paired.mean_sign_flip_test(base, head, n_perm=400, rng=rng)
    reps = paired.mean_bootstrap_replicates(base, head, n_boot=400, rng=rng)
    return designs.Tested(perm.p_value, perm.smallest_p, reps, pairs, perm.observed, perm.null_log_ratios)


def test_one_stratum_is_the_runner_s_own_test():
    t = runner_test(np.random.default_rng(1), level_us=25.0, noise=0.03)
    c = strata.combine([t])
    assert c.tested is t and c.weights == (1.0,)


def test_the_level_holds_when_one_runner_is_30_percent_slower_and_noisier():
    """A/A on a desktop at 25 µs and a slower part at 32.5 µs (+30 %), twice as noisy: the
    pooled test flags about alpha of the comparisons, never more than its binomial spread."""
    rng = np.random.default_rng(20261126)
    draws = 1000
    flagged = 0
    for _ in range(draws):
        fast = runner_test(rng, level_us=25.0, noise=0.03)
        slow = runner_test(rng, level_us=32.5, noise=0.06)
        flagged += strata.combine([fast, slow]).tested.p_value < ALPHA
    rate = flagged / draws
    spread = 3 * np.sqrt(ALPHA * (1 - ALPHA) / draws)
    assert ALPHA - spread <= rate <= ALPHA + spread, rate


def test_the_weights_follow_each_runner_s_noise_not_its_level():
    rng = np.random.default_rng(7)
    quiet = runner_test(rng, level_us=25.0, noise=0.02)
    noisy = runner_test(rng, level_us=25.0, noise=0.08)
    w = strata.combine([quiet, noisy]).weights
    assert w[0] > 0.85 and abs(sum(w) - 1) < 1e-12
    # The same noise at another level weighs the same: the level cancels in each ratio.
    rng = np.random.default_rng(8)
    a = runner_test(rng, level_us=25.0, noise=0.03, pairs=64)
    b = runner_test(rng, level_us=32.5, noise=0.03, pairs=64)
    assert abs(strata.combine([a, b]).weights[0] - 0.5) < 0.1


def _mde(t: designs.Tested) -> float:
    return detectable_effect(stats.log_sd(t.replicates), ALPHA, smallest_p=t.smallest_p) - 1.0


def test_two_replicas_see_a_smaller_change_than_one():
    """The measured MDE (80 % power at alpha) of two runners' replicas against one runner's:
    the issue asks for <= 0.75x; the theory says 1/sqrt(2) = 0.71x."""
    one, two = [], []
    for seed in range(20):
        rng = np.random.default_rng([seed, 1])
        a = runner_test(rng, level_us=25.0, noise=0.04)
        b = runner_test(rng, level_us=32.5, noise=0.04)
        one.append(_mde(a))
        two.append(_mde(strata.combine([a, b]).tested))
    ratio = np.median(two) / np.median(one)
    assert ratio <= 0.75, ratio


@pytest.mark.parametrize("effect", [1.10, 1 / 1.10])
def test_a_10_percent_change_on_both_runners_is_found_in_either_direction(effect):
    rng = np.random.default_rng(3)
    a = runner_test(rng, level_us=25.0, noise=0.03, effect=effect)
    b = runner_test(rng, level_us=32.5, noise=0.06, effect=effect)
    c = strata.combine([a, b]).tested
    assert c.p_value < ALPHA / 10 and np.sign(c.observed) == np.sign(np.log(effect))
    lo, hi = stats.ratio_interval(c.replicates, 0.95, c.n)
    assert lo <= effect * 1.03 and hi >= effect / 1.03


def test_a_runner_without_spread_gets_no_weight_and_the_floor_multiplies():
    rng = np.random.default_rng(4)
    a = runner_test(rng, level_us=25.0, noise=0.03)
    flat = designs.Tested(1.0, 1.0, np.ones(10), 1, 0.0, np.zeros(10))
    c = strata.combine([a, flat])
    assert c.weights == (1.0, 0.0) and c.tested.observed == pytest.approx(a.observed)
    two = strata.combine([a, runner_test(rng, level_us=30.0, noise=0.03)])
    assert two.tested.smallest_p == pytest.approx(2 * (a.smallest_p / 2) ** 2)
