"""judge/independence.py: calibrate's evidence says how independent it is (issue 62, item 5)."""

import importlib.util
import json
import math
from pathlib import Path

import numpy as np
from hftbench.judge import independence as ind
from hftbench.publish.calibrate_text import count_text, draws_text
from scipy.special import stdtr


def test_a_pool_of_exactly_k_rounds_is_one_comparison_whatever_the_draws():
    assert ind.distinct_draws(16, 16, 200) == 1
    assert not ind.rate_is_independent(16, 16)


def test_distinct_draws_are_bounded_by_the_draws_made_and_by_c_n_k():
    assert ind.distinct_draws(17, 16, 200) == 17
    assert ind.distinct_draws(48, 16, 200) == 200
    assert ind.distinct_draws(10, 16, 200) == 0
    assert ind.rate_is_independent(48, 16) and not ind.rate_is_independent(47, 16)


def test_time_windows_are_contiguous_and_do_not_overlap():
    windows = ind.time_windows(50, 16)
    assert [list(w)[:2] for w in windows] == [[0, 1], [16, 17], [32, 33]]
    assert all(len(w) == 16 for w in windows)
    assert ind.time_windows(15, 16) == []


def test_lag1_autocorrelation_finds_correlated_neighbours_and_not_independent_ones():
    rng = np.random.default_rng(1)
    independent = ind.lag1_autocorrelation(rng.normal(size=160))
    assert independent is not None and not independent.significant
    assert math.isclose(independent.se, 1 / math.sqrt(160))
    # an AR(1) sequence: each round keeps 60 % of its neighbour's state
    e = rng.normal(size=160)
    ar = np.empty(160)
    ar[0] = e[0]
    for i in range(1, 160):
        ar[i] = 0.6 * ar[i - 1] + e[i]
    correlated = ind.lag1_autocorrelation(ar)
    assert correlated is not None and correlated.significant and correlated.r > 0.4
    assert ind.lag1_autocorrelation([1.0, 1.0, 1.0]) is None


def _sessions(rng, n, offset_sd):
    """n A/A sessions of 16 rounds each: z = mean log ratio over its standard error; an added
    session-level offset (a host state that lasts a session) is what an interval built from
    the rounds alone cannot see."""
    zs = []
    for _ in range(n):
        rounds = rng.normal(rng.normal(0, offset_sd), 0.01, size=16)
        se = rounds.std(ddof=1) / math.sqrt(16)
        zs.append(ind.session_z(rounds.mean(), se))
    return zs


def test_z_dispersion_is_about_one_when_sessions_agree_with_their_intervals():
    d = ind.z_dispersion(_sessions(np.random.default_rng(2), 200, 0.0))
    assert d is not None and 0.85 < d.sd < 1.2 and d.low < 1 < d.high and not d.too_narrow


def test_z_dispersion_detects_a_session_level_offset():
    d = ind.z_dispersion(_sessions(np.random.default_rng(3), 20, 0.01))
    assert d is not None and d.sd > 1.5 and d.too_narrow


def test_se_from_ci_inverts_a_normal_interval_on_the_ratio_scale():
    se = 0.02
    half = 1.959963984540054 * se
    assert math.isclose(ind.se_from_ci(math.exp(-half), math.exp(half), 0.95), se, rel_tol=1e-9)


def test_the_report_calls_a_single_set_of_rounds_one_comparison_not_a_rate():

    one = {"pool": 16, "k": 16, "distinct_draws": 1, "rate": False}
    assert draws_text(one) == "one comparison (16 rounds, k 16)"
    assert count_text(200, 200, one) == "yes" and "%" not in count_text(200, 200, one)
    many = {"pool": 48, "k": 16, "distinct_draws": 200, "rate": True}
    assert (
        draws_text(many) == "200 distinct draws of 48 rounds"
        and count_text(190, 200, many) == "95.0% (190/200)"
    )


def _verdict(rng, offset_sd):
    """One synthetic A/A session's verdict.json: 16 rounds' log ratios, Student's t over them."""
    rounds = rng.normal(rng.normal(0, offset_sd), 0.01, size=16)
    t = rounds.mean() / (rounds.std(ddof=1) / 4)
    p = float(2 * stdtr(15, -abs(t)))
    row = {"scenario": "latency-1c", "client": "hft", "metric": "p50_us", "gated": True}
    return {"results": [{**row, "ratio": math.exp(rounds.mean()), "p_value": p}]}


def test_sessions_read_from_verdicts_disperse_as_one_or_show_a_session_offset():
    rng = np.random.default_rng(5)
    calm = ind.sessions_z([_verdict(rng, 0.0) for _ in range(300)])["latency-1c/hft p50_us"]
    d = ind.z_dispersion(calm)
    assert d is not None and d.low < 1 < d.high and not d.too_narrow
    offset = ind.sessions_z([_verdict(rng, 0.01) for _ in range(20)])["latency-1c/hft p50_us"]
    assert ind.z_dispersion(offset).too_narrow


def _aa_sessions():
    """scripts/experiments/aa-sessions.py as a module (its name has a dash)."""
    path = Path(__file__).resolve().parents[2] / "experiments" / "aa-sessions.py"
    spec = importlib.util.spec_from_file_location("aa_sessions", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _folders(root, docs):
    for i, doc in enumerate(docs):
        (root / f"ab{i:02d}").mkdir(parents=True)
        (root / f"ab{i:02d}" / "verdict.json").write_text(json.dumps(doc))
    return [str(root / f"ab{i:02d}") for i in range(len(docs))]


def test_the_sessions_script_names_a_session_offset_and_a_missing_verdict(tmp_path, capsys):
    rng, script = np.random.default_rng(7), _aa_sessions()
    assert script.main(_folders(tmp_path / "offset", [_verdict(rng, 0.01) for _ in range(20)])) == 0
    out = capsys.readouterr().out
    assert "| latency-1c/hft p50_us | 20 |" in out and "interval too narrow at the session level" in out
    assert script.main(_folders(tmp_path / "calm", [_verdict(rng, 0.0) for _ in range(60)])) == 0
    assert "consistent with 1" in capsys.readouterr().out
    (tmp_path / "empty").mkdir()
    assert script.main([str(tmp_path / "empty")]) == 2
    assert "no verdict.json" in capsys.readouterr().err


def test_lag1_within_groups_reads_slots_and_sessions_as_structure_and_finds_a_drifting_host():
    """Eight sessions of 20 rounds, slots alternating a b, a slot effect and a session offset
    each: shuffles within each session's slot carry the negative lag-1 that centring and
    alternation make, so independent rounds read p > 0.05; a host state that lasts a few
    rounds (AR(1), 0.6) reads correlated."""
    rng = np.random.default_rng(5)
    groups, plain, drifting = [], [], []
    for session in range(8):
        offset, ar = rng.normal(0, 1.0), 0.0
        for i in range(20):
            slot = "ab"[i % 2]
            groups.append(f"{session}{slot}")
            noise = rng.normal()
            ar = 0.6 * ar + noise
            plain.append(offset + (0.8 if slot == "a" else -0.8) + noise)
            drifting.append(offset + (0.8 if slot == "a" else -0.8) + ar)
    raw = ind.lag1_autocorrelation(plain)
    assert raw.significant  # sessions and slots alone, read as if rounds had no structure
    calm = ind.lag1_within_groups(plain, groups, shuffles=500, rng=np.random.default_rng(1))
    assert calm.p > 0.05 and calm.null_mean < 0
    moving = ind.lag1_within_groups(drifting, groups, shuffles=500, rng=np.random.default_rng(1))
    assert moving.p < 0.01 and moving.r > moving.null_mean + 3 * moving.null_sd
