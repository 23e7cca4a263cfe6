"""A pool's stratified test (strata.py): its level when the runners differ in absolute
latency, with weights fixed before the data (each runner's calibrated noise, or equal), its
gain in power as replicas are added, and a runner's large regression not averaged away by
the weights. Simulated runners, seeds fixed."""

from __future__ import annotations

import numpy as np
import pytest
from hftbench.judge import clustered, designs, paired, stats, strata
from hftbench.judge.rules import detectable_effect

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


# Calibrated noise figures (log of each runner's A/A MDE), the second runner twice as noisy
# as the first: weights 0.8 and 0.2, fixed before the data.
CALIBRATED = (np.log(1.03), 2 * np.log(1.03))


@pytest.mark.parametrize("noise", [None, CALIBRATED], ids=["equal", "calibrated"])
def test_the_level_holds_when_one_runner_is_30_percent_slower_and_noisier(noise):
    """A/A on a desktop at 25 µs and a slower part at 32.5 µs (+30 %), twice as noisy: the
    pooled test, with equal or calibrated weights fixed before the data, flags about alpha of
    the comparisons, never more than its binomial spread."""
    rng = np.random.default_rng(20261126)
    draws = 1000
    flagged = 0
    for _ in range(draws):
        fast = runner_test(rng, level_us=25.0, noise=0.03)
        slow = runner_test(rng, level_us=32.5, noise=0.06)
        c = strata.combine([fast, slow], noise)
        flagged += c.tested.p_value < ALPHA
    assert c.weights == pytest.approx((0.5, 0.5) if noise is None else (0.8, 0.2), abs=1e-3)
    rate = flagged / draws
    spread = 3 * np.sqrt(ALPHA * (1 - ALPHA) / draws)
    assert ALPHA - spread <= rate <= ALPHA + spread, rate


def _old_weights(strata_: list[designs.Tested]) -> np.ndarray:
    """The rule this replaced: inverse variance of each runner's null replicates."""
    return strata.fixed_weights([np.std(t.null) for t in strata_])[0]


def test_the_weights_follow_each_runner_s_calibrated_noise_not_this_comparison_s_data():
    rng = np.random.default_rng(7)
    quiet = runner_test(rng, level_us=25.0, noise=0.02)
    noisy = runner_test(rng, level_us=25.0, noise=0.08)
    noise = (np.log(1.02), np.log(1.08))
    c = strata.combine([quiet, noisy], noise)
    expected = np.array([1 / noise[0] ** 2, 1 / noise[1] ** 2])
    assert c.weights == pytest.approx(tuple(expected / expected.sum()), rel=1e-12)
    assert c.weights[0] > 0.9 and c.basis == strata.CALIBRATED
    # Without a figure for every runner: equal, however different their nulls' spreads.
    for partial in (None, (np.log(1.02), None)):
        c = strata.combine([quiet, noisy], partial)
        assert c.weights == (0.5, 0.5) and c.basis == strata.EQUAL


@pytest.mark.parametrize("noise", [None, CALIBRATED], ids=["equal", "calibrated"])
def test_a_real_effect_on_one_runner_does_not_move_the_weights(noise):
    """The same runner's data, A/A and then with head x1.30: the weights stay the fixed ones,
    where the null's spread (the old rule) took most of that runner's weight away."""
    other = runner_test(np.random.default_rng(11), level_us=25.0, noise=0.03)
    same = runner_test(np.random.default_rng(12), level_us=32.5, noise=0.03)
    shifted = runner_test(np.random.default_rng(12), level_us=32.5, noise=0.03, effect=1.30)
    fixed = strata.fixed_weights(noise or (None, None))[0]
    before = strata.combine([other, same], noise).weights
    after = strata.combine([other, shifted], noise).weights
    assert before == after == pytest.approx(tuple(fixed), rel=1e-12)
    old_before, old_after = _old_weights([other, same])[1], _old_weights([other, shifted])[1]
    assert old_after < old_before / 5, (old_before, old_after)


@pytest.mark.parametrize("noise", [None, (np.log(1.03), np.log(1.03))], ids=["equal", "calibrated"])
def test_runners_at_1_30_and_1_02_pool_to_a_regression_not_to_no_change(noise):
    """The issue's case: one runner x1.30 (its null as wide as its effect), one x1.02. The old
    weights (1 / the null's variance) read about x1.02 with a 99 % interval inside +-10 %: "no
    change". Weights fixed before the data read about x1.15, significant, beyond the 10 %."""
    rng = np.random.default_rng(31)
    big = runner_test(rng, level_us=25.0, noise=0.03, effect=1.30)
    small = runner_test(rng, level_us=32.5, noise=0.03, effect=1.02)
    old = strata.combine([big, small], [np.std(t.null) for t in (big, small)]).tested
    old_ci = stats.ratio_interval(old.replicates, 0.99, old.n)
    assert old_ci[0] > 1 / 1.10 and old_ci[1] < 1.10 and np.exp(old.observed) < 1.03, old_ci
    c = strata.combine([big, small], noise).tested
    ratio, (lo, _) = float(np.exp(c.observed)), stats.ratio_interval(c.replicates, 0.99, c.n)
    assert ratio >= 1.10 and lo > 1.10 and c.p_value < ALPHA / 10, (ratio, lo, c.p_value)


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


def _round_level(observed: float, se: float, df: int, seed: int) -> designs.Tested:
    """A runner's round-level t (designs.round_test) with the given estimate, standard error
    and degrees of freedom; its replicates and null are t draws, as round_test's are."""
    rng = np.random.default_rng(seed)
    reps = np.exp(observed + clustered.t_draws(se, df, 2000, rng))
    null = clustered.t_draws(se, df, 2000, rng)
    return designs.Tested(clustered.t_p_value(observed, se, df), 0.0, reps, df + 1, observed, null, se, df)


def _two_sided_p_even_df(t: float, df: int) -> float:
    """Student's two-sided p for an even df, by the closed form (Abramowitz & Stegun 26.7.3):
    1 - sin θ · (1 + ½cos²θ + (1·3)/(2·4)cos⁴θ + … + (1·3⋯(df-3))/(2·4⋯(df-2))cos^(df-2)θ),
    θ = atan(|t| / √df). Independent of scipy's stdtr."""
    theta = np.arctan(abs(t) / np.sqrt(df))
    term, total = 1.0, 1.0
    for j in range(1, df // 2):
        term *= (2 * j - 1) / (2 * j) * np.cos(theta) ** 2
        total += term
    return float(1.0 - np.sin(theta) * total)


def test_t_sum_is_the_weighted_estimate_its_standard_error_and_welch_satterthwaite_df():
    # Equal weights: T = (0.02 + 0.04) / 2 = 0.03; se_T² = 0.25 · 0.03² + 0.25 · 0.04²
    # = 0.000625, se_T = 0.025; df = 0.000625² / ((0.25 · 0.03²)² / 15 + (0.25 · 0.04²)² / 15)
    # = 9375 / 337 = 27.8190.
    t, se, df = strata.t_sum([0.02, 0.04], [0.03, 0.04], [15, 15], [0.5, 0.5])
    assert (t, se, df) == pytest.approx((0.03, 0.025, 9375 / 337), rel=1e-12)
    # Weights 0.8 / 0.2: T = 0.024; se_T² = 0.64 · 0.0009 + 0.04 · 0.0016 = 0.00064;
    # df = 0.00064² · 15 / (0.000576² + 0.000064²) = 6.144e-6 / 3.35872e-7 = 18.2927.
    t, se, df = strata.t_sum([0.02, 0.04], [0.03, 0.04], [15, 15], [0.8, 0.2])
    assert (t, se, df) == pytest.approx((0.024, np.sqrt(0.00064), 6.144e-6 / 3.35872e-7), rel=1e-12)
    # A stratum of weight 0 is left out; one of weight 1 is its own test.
    assert strata.t_sum([0.02, 0.5], [0.03, 0.9], [15, 3], [1.0, 0.0]) == pytest.approx((0.02, 0.03, 15))


def test_two_round_level_runners_combine_into_one_student_t_whose_interval_and_p_agree():
    """Two runners' round-level t's (8 rounds, 7 df each, the same se 0.03), log ratios 0.02
    and 0.04, equal weights: T = 0.03, se_T = 0.03 / √2, Welch–Satterthwaite df = 14, t = √2.
    The p is Student's at 14 df (the closed form), exactly; the 1 - p interval ends at 1."""
    a, b = _round_level(0.02, 0.03, 7, 1), _round_level(0.04, 0.03, 7, 2)
    c = strata.combine([a, b])
    tested = c.tested
    assert c.weights == (0.5, 0.5) and c.basis == strata.EQUAL
    want = (0.03, 0.03 / np.sqrt(2), 14.0)
    assert (tested.observed, tested.se, tested.df) == pytest.approx(want, rel=1e-12)
    p = _two_sided_p_even_df(np.sqrt(2), 14)
    assert p == pytest.approx(0.1791517, abs=1e-7)  # A&S 26.7.3 by hand
    assert tested.p_value == pytest.approx(p, rel=1e-9) and tested.smallest_p == 0.0 and tested.n == 16
    lo, hi = clustered.t_interval(tested.observed, tested.se, tested.df, 1.0 - tested.p_value)
    assert lo == pytest.approx(1.0, abs=1e-9) and hi == pytest.approx(np.exp(0.06), rel=1e-9)
    # Calibrated weights (0.8, 0.2) stay the weights: T and se_T move with them.
    c = strata.combine([a, b], CALIBRATED)
    assert c.weights == pytest.approx((0.8, 0.2)) and c.basis == strata.CALIBRATED
    t, se, df = strata.t_sum([0.02, 0.04], [0.03, 0.03], [7, 7], [0.8, 0.2])
    assert (c.tested.observed, c.tested.se, c.tested.df) == pytest.approx((t, se, df), rel=1e-12)
    assert c.tested.p_value == pytest.approx(clustered.t_p_value(t, se, df), rel=1e-12)


def test_two_runners_at_plus_30_percent_are_far_below_the_monte_carlo_floor():
    """16 rounds each, round sd 2 %, both at +30 %: the analytic p is ~1e-35, where 2,000 t
    draws could not go below 1 / 2001 (5.0e-4), above Holm's 0.01 / 3 / 7 (4.8e-4)."""
    rng = np.random.default_rng(60)
    runners = []
    for seed in (1, 2):
        y = np.log(1.30) + rng.normal(0.0, 0.02, 16)
        se, df = clustered.standard_error(y)
        runners.append(_round_level(float(y.mean()), se, df, seed))
    c = strata.combine(runners).tested
    assert c.df == pytest.approx(30.0, rel=0.2) and np.exp(c.observed) == pytest.approx(1.30, rel=0.01)
    assert c.p_value < 1e-15 < 0.01 / 3 / 7 < 1 / 2001


def test_permutation_strata_draw_the_product_of_their_nulls_far_below_holm():
    """Permutation strata (df 0): the p is the product of their nulls, drawn PRODUCT_DRAWS
    times from a fixed seed (reproducible), its floor 1 / (1 + PRODUCT_DRAWS) far below
    Holm's first step, and no lower than the product of the strata's own floors."""
    rng = np.random.default_rng(8)
    a = runner_test(rng, level_us=25.0, noise=0.03, effect=1.30, pairs=16)
    b = runner_test(rng, level_us=32.5, noise=0.03, effect=1.30, pairs=16)
    c = strata.combine([a, b]).tested
    assert c.df == 0 and len(c.null) == strata.PRODUCT_DRAWS
    assert c.p_value == max(1 / (1 + strata.PRODUCT_DRAWS), c.smallest_p) < 0.01 / 3 / 7 / 20
    assert strata.combine([a, b]).tested.p_value == c.p_value  # the same draws
    # Mixed (one round-level t, one permutation): the product of the nulls too.
    mixed = strata.combine([_round_level(np.log(1.3), 0.01, 15, 3), b]).tested
    assert mixed.df == 0 and mixed.p_value < 0.01 / 3 / 7 / 20
