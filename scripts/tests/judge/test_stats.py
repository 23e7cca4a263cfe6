"""The gate's statistics on fixed vectors and on synthetic distributions with known effects."""

from __future__ import annotations

import numpy as np
import pytest
from hftbench import histograms
from hftbench.answers import FASTER, IMPROVEMENT, INCONCLUSIVE, NO_CHANGE, REGRESSION, SLOWER
from hftbench.histograms import decode
from hftbench.judge import stats
from hftbench.judge.rules import RegressionCheck, classify, detectable_effect, rounds_to_settle
from support.gate_synth import encode_ns, latency_run

# --- fixed vectors -----------------------------------------------------------------------


def test_holm_fixed_vector():
    # sorted 0.005, 0.01, 0.03, 0.04 -> x4, x3, x2, x1 = 0.02, 0.03, 0.06, 0.04 -> monotone 0.06
    assert stats.holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert stats.holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])
    assert stats.holm([]) == []


def test_mann_whitney_exact_complete_separation():
    # 5 vs 5 completely separated: two-sided exact p = 2 / C(10, 5) = 2 / 252
    assert stats.mann_whitney_p([1, 2, 3, 4, 5], [6, 7, 8, 9, 10]) == pytest.approx(2 / 252)
    assert stats.mann_whitney_p([6, 7, 8, 9, 10], [1, 2, 3, 4, 5]) == pytest.approx(2 / 252)


def test_mann_whitney_no_evidence():
    assert stats.mann_whitney_p([3, 3, 3], [3, 3, 3]) == 1.0
    assert stats.mann_whitney_p([1, 3, 5, 7], [2, 4, 6, 8]) > 0.5
    assert stats.mann_whitney_p([], [1.0]) == 1.0


def test_quantile_rows_equals_hdrhistogram_definition():
    rng = np.random.default_rng(7)
    encoded = [encode_ns(rng.lognormal(np.log(80_000), 0.5, size=n)) for n in (1, 7, 1000, 12345)]
    g = histograms.grid(encoded[:2], encoded[2:])
    counts = np.vstack([g.base, g.head])
    for q in (0.5, 0.9, 0.99, 0.999):
        ours = histograms.quantile_rows(g.values_ns, counts, q)
        theirs = [decode(e).get_value_at_percentile(q * 100) for e in encoded]
        assert ours.tolist() == theirs
    merged = decode(encoded[0])
    for e in encoded[1:]:
        merged.add(decode(e))
    assert histograms.merged_quantile(g.values_ns, counts, 0.99) == merged.get_value_at_percentile(99)


def test_quantile_of_empty_row_is_nan():
    values = np.array([10.0, 20.0])
    out = histograms.quantile_rows(values, np.array([[0, 0], [1, 3]]), 0.5)
    assert np.isnan(out[0]) and out[1] == 20.0


@pytest.mark.parametrize(
    "ratio, ci, p, expected",
    [
        (1.20, (1.12, 1.30), 0.001, REGRESSION),
        (1.20, (1.12, 1.30), 0.2, INCONCLUSIVE),  # big but not significant
        # significant, below the threshold, CI too: named, never "no change" (issue 35)
        (1.05, (1.01, 1.08), 0.001, SLOWER),
        (0.95, (0.92, 0.98), 0.001, FASTER),
        (1.05, (0.99, 1.08), 0.2, NO_CHANGE),  # not significant: the interval holds 1
        (1.05, (0.98, 1.15), 0.001, INCONCLUSIVE),  # CI reaches the threshold
        (1.00, (0.96, 1.04), 0.8, NO_CHANGE),
        (0.80, (0.75, 0.86), 0.001, IMPROVEMENT),
        (float("nan"), (1.0, 1.0), 0.001, INCONCLUSIVE),
    ],
)
def test_classify_latency(ratio, ci, p, expected):
    assert classify(ratio, ci, p, threshold=1.10, alpha=0.01) == expected


def test_classify_throughput_direction():
    # head has 20% less throughput: ratio 0.8 is a regression for a higher-is-better metric
    assert classify(0.8, (0.75, 0.85), 0.001, threshold=1.10, alpha=0.01, lower_is_better=False) == (
        REGRESSION
    )
    assert classify(1.25, (1.2, 1.3), 0.001, threshold=1.10, alpha=0.01, lower_is_better=False) == (
        IMPROVEMENT
    )


def test_regression_check_fails_message():
    rust = {"series": "large/rust", "metric": "p99_us", "threshold": 1.10}
    check = RegressionCheck(**rust, ratio=1.18, interval=(1.1, 1.25), p_adjusted=0.001, verdict=REGRESSION)
    assert "large/rust p99_us" in check.fails() and "1.180" in check.fails()
    ok = RegressionCheck(**rust, ratio=1.01, interval=(0.98, 1.03), p_adjusted=0.9, verdict=NO_CHANGE)
    assert ok.fails() is None


def test_bootstrap_mean_replicates_are_seeded_and_bracket_the_ratio():
    b, h = [100, 102, 98, 101, 99], [120, 118, 122, 121, 119]
    one = stats.bootstrap_mean_replicates(b, h, n_boot=1000, rng=np.random.default_rng(1))
    two = stats.bootstrap_mean_replicates(b, h, n_boot=1000, rng=np.random.default_rng(1))
    assert (one == two).all()
    lo, hi = stats.ratio_interval(one, 0.95, len(b))
    assert lo < 1.2 < hi and lo > 1.15 and hi < 1.25


# --- synthetic distributions ---------------------------------------------------------------


def _sides(rng, runs=8, n=10_000, base=None, head=None):
    base, head = base or {}, head or {}
    b = [encode_ns(latency_run(rng, n, **base)) for _ in range(runs)]
    h = [encode_ns(latency_run(rng, n, **head)) for _ in range(runs)]
    return histograms.grid(b, h)


def _verdict(g, q, *, threshold=1.05, alpha=0.01, family=1, seed=0):
    qb, qh = (histograms.merged_quantile(g.values_ns, x, q) for x in (g.base, g.head))
    rng = np.random.default_rng(seed)
    p = stats.permutation_quantile_test(g, q, n_perm=2000, rng=rng).p_value
    reps = stats.bootstrap_ratio_replicates(g, q, n_boot=1000, rng=rng)
    ci = stats.ratio_interval(reps, 0.95, min(len(g.base), len(g.head)))
    return classify(qh / qb, ci, min(1.0, p * family), threshold=threshold, alpha=alpha), qh / qb, ci


def test_no_regression_is_not_flagged():
    rng = np.random.default_rng(11)
    for trial in range(5):
        g = _sides(rng)
        for q in (0.5, 0.99):
            verdict, ratio, ci = _verdict(g, q, family=2, seed=trial)
            assert verdict in (NO_CHANGE, INCONCLUSIVE), (q, ratio, ci)
            assert 0.95 < ratio < 1.05


def test_ten_percent_p99_shift_is_a_p99_regression_only():
    rng = np.random.default_rng(12)
    # the tail above the median stretched so that p99 moves ~10%, p50 does not move
    g = _sides(rng, head={"tail_scale": 1.20})
    verdict, ratio, ci = _verdict(g, 0.99)
    assert verdict == REGRESSION, (ratio, ci)
    assert 1.07 < ratio < 1.14
    assert _verdict(g, 0.5)[0] == NO_CHANGE


def test_shift_in_p50_only():
    rng = np.random.default_rng(13)
    # the body below the median shifts 10%, the tail stays where it was
    g = _sides(rng, head={"body_scale": 1.10, "tail_scale": 1.0})
    v50, r50, _ = _verdict(g, 0.5)
    assert v50 == REGRESSION and r50 > 1.07
    v99, r99, ci = _verdict(g, 0.99, threshold=1.10)
    assert v99 != REGRESSION, (r99, ci)


def test_bimodal_tail_moves_p99_not_p50():
    rng = np.random.default_rng(14)
    # 2% of head's orders take a slow path at ~400 us: p99 lands in the slow mode
    g = _sides(rng, head={"slow_fraction": 0.02, "slow_us": 400.0})
    v99, r99, _ = _verdict(g, 0.99)
    assert v99 == REGRESSION and r99 > 1.5
    v50, r50, _ = _verdict(g, 0.5)
    assert v50 != REGRESSION and r50 < 1.05


def test_few_repeats_cannot_be_significant():
    rng = np.random.default_rng(15)
    g = _sides(rng, runs=2, head={"tail_scale": 2.0})
    verdict, ratio, _ = _verdict(g, 0.99)
    assert ratio > 1.3 and verdict == INCONCLUSIVE  # min two-sided p for 2 vs 2 is 1/3


def test_one_outlier_run_is_not_a_regression():
    # Head has one run whose tail is 4x (a hiccup of the host): the pooled P99 moves a lot,
    # but a split puts that run on either side as often as the data do, so p stays large.
    rng = np.random.default_rng(16)
    base = [encode_ns(latency_run(rng, 10_000)) for _ in range(8)]
    head = [encode_ns(latency_run(rng, 10_000)) for _ in range(7)]
    head.append(encode_ns(latency_run(rng, 10_000, tail_scale=4.0)))
    g = histograms.grid(base, head)
    verdict, ratio, ci = _verdict(g, 0.99, threshold=1.10)
    assert ratio > 1.10, ratio  # the outlier does move the pooled P99 past the threshold
    assert verdict == INCONCLUSIVE, (ratio, ci)
    perm = stats.permutation_quantile_test(g, 0.99, n_perm=2000, rng=np.random.default_rng(1))
    assert perm.p_value > 0.05


def test_uniform_shift_is_a_regression_of_p50_and_p99():
    rng = np.random.default_rng(17)
    g = _sides(rng, head={"body_scale": 1.20, "tail_scale": 1.20})
    for q in (0.5, 0.99):
        verdict, ratio, ci = _verdict(g, q, threshold=1.10, family=4)
        assert verdict == REGRESSION and 1.15 < ratio < 1.25, (q, ratio, ci)


def test_no_change_is_an_equivalence_claim():
    # A/A with sharp runs: the interval of the ratio lies inside ±10%, so "no change".
    rng = np.random.default_rng(18)
    g = _sides(rng, runs=12, base={"run_noise": 0.01}, head={"run_noise": 0.01})
    for q in (0.5, 0.99):
        verdict, ratio, ci = _verdict(g, q, threshold=1.10, family=4)
        assert verdict == NO_CHANGE, (q, ratio, ci)
        assert 1 / 1.10 < ci[0] < ratio < ci[1] < 1.10


# --- the permutation test, the expanded interval, the detectable effect -----------------------


def test_permutation_p_of_complete_separation_is_the_smallest_possible():
    # 4 vs 4 runs, every head run above every base run: p = 2 / C(8, 4) = 2 / 70 for the mean.
    perm = stats.permutation_mean_test([1, 1, 1, 1], [5, 6, 7, 8], n_perm=5000, rng=np.random.default_rng(0))
    assert perm.smallest_p == pytest.approx(2 / 70)
    assert perm.p_value == pytest.approx(2 / 70, rel=0.25)


def test_permutation_quantile_test_of_a_clear_shift_is_as_small_as_the_splits_allow():
    # 8 vs 8 runs, head's distribution 30% slower (runs overlap inside, as real ones do):
    # no split is as extreme as the real one, so p = 1 / (1 + splits).
    rng = np.random.default_rng(20)
    g = _sides(rng, runs=8, head={"body_scale": 1.3, "tail_scale": 1.3})
    for q in (0.5, 0.99):
        perm = stats.permutation_quantile_test(g, q, n_perm=2000, rng=np.random.default_rng(0))
        assert perm.p_value == pytest.approx(1 / 2001), q
        assert perm.smallest_p == pytest.approx(2 / 12870)


def test_permutation_p_of_identical_sides_is_one():
    values = np.array([10.0, 20.0])
    rows = np.array([[5, 5]] * 4)
    perm = stats.permutation_quantile_test(
        histograms.Grid(values, rows, rows), 0.5, n_perm=500, rng=np.random.default_rng(0)
    )
    assert perm.p_value == 1.0


def test_expanded_confidence_fixed_vector():
    # Hesterberg (2015): z = sqrt(n / (n - 1)) t(n - 1); n = 8 -> 1.0690 * 2.3646 = 2.5278
    assert stats.expanded_confidence(0.95, 8) == pytest.approx(0.98852, abs=2e-5)
    assert stats.expanded_confidence(0.95, 1000) == pytest.approx(0.95, abs=1e-3)
    assert stats.expanded_confidence(0.95, 1) == 1.0


def test_detectable_effect_shrinks_with_sharper_runs_and_is_infinite_with_too_few():
    rng = np.random.default_rng(19)
    noisy = _sides(rng, runs=10, base={"run_noise": 0.10}, head={"run_noise": 0.10})
    sharp = _sides(rng, runs=10, base={"run_noise": 0.01}, head={"run_noise": 0.01})
    mde = []
    for g in (noisy, sharp):
        reps = stats.bootstrap_ratio_replicates(g, 0.5, n_boot=2000, rng=np.random.default_rng(2))
        mde.append(detectable_effect(stats.log_sd(reps), 0.0025))
    assert 1.0 < mde[1] < 1.05 < mde[0] < 2.0, mde
    # a fixed vector: sd 0.02 of log ratio at level 0.0025 -> exp((3.0233 + 0.8416) * 0.02)
    assert detectable_effect(0.02, 0.0025) == pytest.approx(np.exp(3.8649 * 0.02), rel=1e-4)
    # 3 vs 3 runs: the permutation test's smallest p is 2 / C(6, 3) = 0.1 > 0.0025
    assert detectable_effect(0.02, 0.0025, smallest_p=0.1) == float("inf")


def test_the_detectable_effect_is_the_noise_not_the_effect():
    # A +30 % shift must not make the comparison look noisier than its A/A twin.
    rng = np.random.default_rng(21)
    aa = _sides(rng, runs=12)
    shifted = _sides(rng, runs=12, head={"body_scale": 1.3, "tail_scale": 1.3})
    sds = [
        log_sd
        for log_sd in (
            stats.log_sd(stats.bootstrap_ratio_replicates(g, 0.5, n_boot=2000, rng=np.random.default_rng(3)))
            for g in (aa, shifted)
        )
    ]
    assert sds[1] < 1.5 * sds[0], sds


def test_rounds_to_settle():
    # half-width 0.05 (log), point at 0: 0.0953 of margin -> 8 * (0.05 / 0.0953)^2 < 8: one more run
    assert rounds_to_settle(1.0, (np.exp(-0.05), np.exp(0.05)), 1.10, 8) == 9
    # point at +5%, interval +-10% around it: margin to +10% is 0.0465 -> 8 * (0.0953 / 0.0465)^2 = 33.6
    r = 1.05
    assert rounds_to_settle(r, (r * np.exp(-0.0953), r * np.exp(0.0953)), 1.10, 8) == 34
    assert rounds_to_settle(1.10, (1.0, 1.2), 1.10, 8) is None  # on the threshold: never


def test_settle_text_stops_counting_where_no_run_could_reach():
    from hftbench.answers import SETTLE_IN_REACH, settle_text

    assert settle_text(40) == "about 40 runs a side would settle it"
    far = settle_text(1563)
    assert "1563" not in far and f"more than {SETTLE_IN_REACH}" in far and "out of reach" in far


def test_weighted_counts_are_the_integer_matmuls():
    rng = np.random.default_rng(11)
    rows = rng.integers(0, 5_000, (16, 3_000))
    for weights in (rng.integers(0, 2, (250, 16)), rng.integers(0, 16, (250, 16))):
        got = stats._weighted_counts(weights, rows)
        assert got.dtype == np.int64 and np.array_equal(got, weights @ rows)
    # past 2^53 a float sum could round: the integer matmul answers
    big = np.array([[2**52, 2**52 + 1]], dtype=np.int64).T
    assert np.array_equal(
        stats._weighted_counts(np.array([[3, 1]]), big), np.array([[3 * 2**52 + 2**52 + 1]])
    )
