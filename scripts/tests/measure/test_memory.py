"""Memory per order: the statistic on fixed vectors (judge/memory.py), the readings and why they
are missing (measure/memory.py, cgroup_parsing.anon_bytes), the cell's fields through results.json and
a side's repeats, and the row compare makes of them (a leaking head named, an A/A not)."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from hftbench import results
from hftbench.answers import FASTER, IMPROVEMENT, INCONCLUSIVE, NO_CHANGE, NOT_GATED, REGRESSION, SLOWER
from hftbench.judge import memory as stat
from hftbench.judge.compare import compare_sides
from hftbench.judge.gates import load_gates
from hftbench.judge.sides import Side
from hftbench.measure import cgroup_parsing
from hftbench.measure import memory as reading
from hftbench.publish import verdict_text
from hftbench.series import Repeat
from scipy import stats as sp
from support.gate_synth import encode_ns

ROOT = Path(__file__).resolve().parents[3]


# -- the statistic, on fixed vectors ------------------------------------------------------


def test_paired_difference_is_students_t_over_the_rounds_differences():
    base = [10.0, 12.0, 9.0, 11.0]
    head = [11.0, 11.0, 11.0, 11.0]  # differences 1, -1, 2, 0
    d = stat.paired_difference(base, head)
    assert d.estimate == pytest.approx(0.5)
    assert d.se == pytest.approx(math.sqrt(5 / 3) / 2)
    assert d.df == 3
    assert d.p_value == pytest.approx(sp.ttest_1samp([1, -1, 2, 0], 0.0).pvalue)
    assert (d.base_mean, d.head_mean) == (pytest.approx(10.5), pytest.approx(11.0))
    lo, hi = stat.interval(d, 0.95)
    half = sp.t.ppf(0.975, 3) * d.se
    assert (lo, hi) == (pytest.approx(0.5 - half), pytest.approx(0.5 + half))


def test_a_constant_leak_with_no_spread_is_certain():
    d = stat.paired_difference([0.0, 1.0, -1.0], [64.0, 65.0, 63.0])
    assert (d.estimate, d.se, d.p_value) == (64.0, 0.0, 0.0)


def test_the_duet_slot_is_taken_out_of_the_difference():
    # slot a's rounds read 4 B/order more for head than slot b's: the estimate is the mean of
    # the two slots' means, and the spread within each slot is all that is left
    d = stat.paired_difference(
        [0, 0, 0, 0, 0, 0], [66, 62, 66, 62, 66.5, 61.5], ("a", "b", "a", "b", "a", "b")
    )
    assert d.estimate == pytest.approx(64.0)
    assert d.df == 4
    assert d.se == pytest.approx(math.sqrt((2 * (1 / 6) ** 2 + (1 / 3) ** 2) * 2 / 4 / 4 * (1 / 3 + 1 / 3)))


def test_unpaired_difference_is_welchs_t():
    b, h = [1.0, 2.0, 3.0, 2.5], [40.0, 44.0, 38.0]
    d = stat.unpaired_difference(b, h)
    welch = sp.ttest_ind(h, b, equal_var=False)
    assert d.estimate == pytest.approx(np.mean(h) - np.mean(b))
    assert d.p_value == pytest.approx(welch.pvalue)
    assert d.df == pytest.approx(welch.df)


def test_pooled_runners_are_one_weighted_mean():
    one = stat.Difference(60.0, 2.0, 10, 0.0, 1.0, 61.0, 11)
    two = stat.Difference(66.0, 1.0, 14, 0.0, 0.0, 66.0, 15)
    d = stat.pooled([one, two], [1.0, 4.0])  # e.g. calibrated MDEs 2 and 1: 1 / MDE²
    assert d.estimate == pytest.approx(64.8)
    assert d.se == pytest.approx(math.sqrt(0.04 * 4 + 0.64 * 1))
    assert (d.base_mean, d.head_mean) == (pytest.approx(0.2), pytest.approx(65.0))
    assert d.df == 10 and d.n == 26


@pytest.mark.parametrize(
    ("estimate", "ci", "p", "expected"),
    [
        (64.0, (60.0, 68.0), 0.0001, REGRESSION),
        (40.0, (10.0, 70.0), 0.001, REGRESSION),  # significant, its estimate past 32
        (-40.0, (-70.0, -10.0), 0.001, IMPROVEMENT),
        (0.2, (-1.5, 1.9), 0.8, NO_CHANGE),
        (3.0, (1.0, 5.0), 0.02, SLOWER),  # the interval excludes 0: named, under the gate
        (-3.0, (-5.0, -1.0), 0.02, FASTER),
        (20.0, (-5.0, 45.0), 0.1, INCONCLUSIVE),
        (40.0, (-5.0, 85.0), 0.1, INCONCLUSIVE),
    ],
)
def test_classify_against_bytes_per_order(estimate, ci, p, expected):
    assert stat.classify(estimate, ci, p, threshold=32.0, alpha=0.01) == expected


def test_a_certain_difference_under_a_page_a_cell_is_no_change():
    # every round one page more on head over 50,000 orders: certain to the t, but below the grain
    grain = stat.resolution(50_000)
    assert grain == pytest.approx(0.08192)
    assert stat.classify(0.08, (0.08, 0.08), 0.0, threshold=32.0, alpha=0.01, resolution=grain) == NO_CHANGE
    assert stat.classify(0.5, (0.3, 0.7), 0.0, threshold=32.0, alpha=0.01, resolution=grain) == SLOWER
    assert stat.resolution(0) == float("inf")


def test_detectable_bytes_are_the_critical_and_power_quantiles_in_standard_errors():
    level = 0.01
    bar = sp.t.ppf(1 - level / 2, 15) + sp.t.ppf(0.8, 15)
    assert stat.detectable(2.0, 15, level) == pytest.approx(2.0 * bar)
    # the gate's: the threshold is the larger bar here, plus the power quantile
    assert stat.detectable(2.0, 15, level, 32.0) == pytest.approx(32.0 + 2.0 * sp.t.ppf(0.8, 15))
    assert stat.detectable(float("nan"), 15, level) == float("inf")


def test_rounds_to_settle_shrinks_the_interval_by_root_rounds():
    # half width 20 at 8 rounds; the estimate 10 is 22 from -32 and 22 from +32: (20/22)^2 * 8 = 6.6 -> 9
    assert stat.rounds_to_settle(10.0, (-10.0, 30.0), 32.0, 8) == 9
    assert stat.rounds_to_settle(10.0, (-30.0, 50.0), 32.0, 8) == math.ceil(8 * (40 / 22) ** 2)
    assert stat.rounds_to_settle(32.0, (20.0, 44.0), 32.0, 8) is None


# -- the readings ---------------------------------------------------------------------------


def test_anon_bytes_reads_v2_anon_and_v1_total_rss():
    assert cgroup_parsing.anon_bytes("anon 4096\nfile 8192\nkernel 10\n", 2) == 4096
    assert cgroup_parsing.anon_bytes("cache 8192\nrss 4096\ntotal_cache 9\ntotal_rss 12288\n", 1) == 12288
    assert cgroup_parsing.anon_bytes("cache 8192\nrss 4096\n", 1) == 4096
    with pytest.raises(ValueError, match="no anon"):
        cgroup_parsing.anon_bytes("file 8192\n", 2)


class _Group:
    def __init__(self, anon):
        self.anon = anon

    def anon_memory(self):
        return self.anon


def test_a_reading_from_the_group_then_from_proc_then_why_not():
    assert reading.resident(SimpleNamespace(cgroup=_Group(1 << 20), proc=None)) == reading.Reading(
        1 << 20, "cgroup"
    )
    # the group's file unreadable: the live process from /proc
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        got = reading.resident(SimpleNamespace(cgroup=_Group(None), proc=child))
        assert got.source == "proc" and got.bytes > 0
    finally:
        child.kill()
        child.wait()
    gone = reading.resident(SimpleNamespace(cgroup=_Group(None), proc=child))
    assert gone.bytes is None and f"pid {child.pid}) has exited" in gone.why
    stopped = reading.resident(SimpleNamespace(cgroup=None, proc=None))
    assert stopped == reading.Reading(None, why="the server is not running")


def test_a_cell_without_both_readings_records_why():
    ok = reading.cell_fields(reading.Reading(1000, "cgroup"), reading.Reading(5000, "cgroup"))
    assert ok == {
        "server_memory_before_bytes": 1000,
        "server_memory_after_bytes": 5000,
        "server_memory_from": "cgroup",
    }
    missing = reading.cell_fields(
        reading.Reading(1000, "proc"), reading.Reading(None, why="the server (pid 7) has exited")
    )
    why = "the server's memory could not be read after the cell: the server (pid 7) has exited"
    assert missing == {"server_memory_unread": why}
    mixed = reading.cell_fields(reading.Reading(1000, "cgroup"), reading.Reading(5000, "proc"))
    assert "from cgroup before the cell and from proc after it" in mixed["server_memory_unread"]


def test_the_fields_survive_results_json_and_make_a_repeats_bytes_per_order():
    cell = results.Cell(
        scenario="latency-1c",
        client="hft",
        status="ok",
        server_orders=1000,
        server_memory_before_bytes=1 << 20,
        server_memory_after_bytes=(1 << 20) + 64_000,
        server_memory_from="cgroup",
    )
    again = results.Cell.from_dict(cell.to_dict())
    assert again == cell
    assert again.memory_bytes_per_order == 64.0
    unread = results.Cell(
        scenario="s", client="hft", status="ok", server_orders=10, server_memory_unread="why"
    )
    assert results.Cell.from_dict(unread.to_dict()).server_memory_unread == "why"
    assert "server_memory_before_bytes" not in unread.to_dict()
    assert unread.memory_bytes_per_order is None


# -- the row --------------------------------------------------------------------------------


HIST = encode_ns(np.full(2000, 20_000.0))  # what the memory row never reads: any histogram


def _side(label: str, per_order: list[float | None], unread: str | None = None) -> Side:
    side = Side(label)
    for i, value in enumerate(per_order):
        run = f"run_20261203T000000Z_{label}{i + 1:02d}_abcdef"
        side.runs.append(run)
        rep = Repeat.of_rate(run, HIST, 2000, 0, 20_000.0)
        side.add(("latency-1c", "hft"), _with(rep, value, unread))
    return side


def _with(rep: Repeat, value: float | None, unread: str | None) -> Repeat:
    from dataclasses import replace

    return replace(rep, memory_bytes_per_order=value, memory_unread=None if value is not None else unread)


def _memory_row(base: Side, head: Side, *, gated: bool = True):
    from dataclasses import replace

    gates = load_gates(ROOT / "bench-config" / "gates.yaml")
    only = [replace(m, gated=gated) for m in gates.metrics if m.name == "memory_bytes_per_order"]
    c = compare_sides(base, head, replace(gates, metrics=only), design="paired-rounds")
    (row,) = c.results
    return c, row


def _noise(seed: int):
    rng = np.random.default_rng(seed)
    return lambda: list(rng.normal(0.0, 1.5, 10))


def test_a_leaking_head_fails_the_gate_naming_memory_and_an_aa_passes():
    noise = _noise(7)
    c, row = _memory_row(_side("base", noise()), _side("head", [64 + x for x in noise()]))
    assert row.gated and row.verdict == REGRESSION and row.ratio is None
    assert row.ci[0] > 32 and row.mde is not None and row.mde < 32 and row.fails_at >= 32
    assert c.status == REGRESSION and c.exit_code == 1
    (failure,) = c.failures()
    assert failure.startswith("latency-1c/hft memory per order: head keeps +6") and "32 B/order" in failure
    line = verdict_text.headline(c.verdict())
    assert line.startswith("❌ Regression: latency-1c/hft memory per order +6") and line.endswith(" B")
    aa, aa_row = _memory_row(_side("base", noise()), _side("head", noise()))
    assert aa_row.verdict in (NO_CHANGE, SLOWER, FASTER) and aa.exit_code == 0
    assert aa_row.ci[0] > -32 and aa_row.ci[1] < 32


def test_reported_only_a_leak_is_a_warning_naming_memory():
    noise = _noise(8)
    c, row = _memory_row(_side("base", noise()), _side("head", [64 + x for x in noise()]), gated=False)
    assert not row.gated and row.verdict == REGRESSION
    assert c.warnings() == [row] and c.status == NO_CHANGE and c.exit_code == 0
    doc = c.verdict()
    assert "reported only, beyond its threshold: latency-1c/hft memory per order +6" in verdict_text.headline(
        doc
    )
    table = verdict_text.markdown(doc)
    assert "| memory per order | " in table and " B … +" in table
    aa, _ = _memory_row(_side("base", noise()), _side("head", noise()), gated=False)
    assert not aa.warnings() and "memory" not in verdict_text.headline(aa.verdict())


def test_an_undecided_gated_leak_past_the_threshold_fails():
    # 6 rounds, 2 short of min_repeats: undecided, yet head keeps more for certain, past 32 B
    noise = _noise(9)
    c, row = _memory_row(_side("base", noise()[:6]), _side("head", [64 + x for x in noise()[:6]]))
    assert row.verdict == INCONCLUSIVE and row.reason == "6 repeats < min_repeats 8" and row.ci[0] > 32
    assert c.beyond_threshold() == [row] and c.exit_code == 1
    assert "undecided: 6 repeats < min_repeats 8" in c.failures()[0]
    assert verdict_text.beyond_threshold(c.verdict()) == [row]
    # the same rounds under the threshold are undecided and pass
    c, row = _memory_row(_side("base", noise()[:6]), _side("head", [8 + x for x in noise()[:6]]))
    assert row.verdict == INCONCLUSIVE and not c.beyond_threshold() and c.exit_code == 0


def test_a_row_whose_memory_was_never_read_says_why():
    why = "the server's memory could not be read before the cell: the server is not running"
    _, row = _memory_row(_side("base", [None] * 8, why), _side("head", [None] * 8, why))
    assert row.verdict == NOT_GATED and row.reason == why


# -- the history store ----------------------------------------------------------------------


def test_the_store_keeps_each_series_memory_per_order_for_the_dashboard(tmp_path):
    import json

    from hftbench.store.entry import run_entry
    from support.gate_synth import result_doc, write_run

    rng = np.random.default_rng(3)
    runs = []
    for i, grown in enumerate((64_000, 32_000)):
        path = write_run(
            tmp_path,
            f"run_20261203T00000{i}Z_head{i + 1:02d}_abcdef",
            {("latency-1c", "hft"): [result_doc("latency-1c", "hft", rng.normal(20_000, 500, 1000))]},
        )
        doc = json.loads((path / "results.json").read_text())
        doc["cells"][0].update(
            server_memory_before_bytes=1 << 20, server_memory_after_bytes=(1 << 20) + grown
        )
        (path / "results.json").write_text(json.dumps(doc))
        runs.append(results.load_run(path))
    (res,) = run_entry(runs)["results"]
    assert res["memory_bytes_per_order"] == 48.0  # 64 and 32 bytes over the 1,000 orders of each cell
    plain = write_run(
        tmp_path,
        "run_20261203T000009Z",
        {("latency-1c", "hft"): [result_doc("latency-1c", "hft", rng.normal(20_000, 500, 1000))]},
    )
    assert "memory_bytes_per_order" not in run_entry(results.load_run(plain))["results"][0]


# -- a run's cells, end to end on the fake bin/ ---------------------------------------------


def _fake_run(tmp_path) -> results.Run:
    from hftbench import cli
    from support.hftbench_fakes import make_bins, write_config

    make_bins(tmp_path, {"rust": "ok"})
    write_config(tmp_path / "s.yaml")
    out = tmp_path / "run"
    args = ["run", "--config", str(tmp_path / "s.yaml"), "--bin", str(tmp_path / "bin"), "--quiet"]
    assert cli.main([*args, "--suite", "t", "--clients", "rust", "--out", str(out), "--no-report"]) == 0
    return results.load_run(out)


def test_a_run_reads_each_cells_server_memory(tmp_path):
    (cell,) = _fake_run(tmp_path).cells
    assert cell.ok and cell.server_memory_from in ("cgroup", "proc") and cell.server_memory_unread is None
    assert cell.server_memory_before_bytes > 0 and cell.memory_bytes_per_order is not None


def test_a_cell_whose_server_memory_cannot_be_read_says_why_and_still_counts(tmp_path, monkeypatch):
    # no cgroup, and a kernel whose /proc/<pid>/status has no RssAnon (before 4.5)
    monkeypatch.setenv("HFT_CGROUPS", "off")

    def no_rss_anon(text: str) -> int:
        raise ValueError(
            "no RssAnon line in /proc/PID/status (a kernel before 4.5, a kernel thread or a zombie)"
        )

    monkeypatch.setattr(reading, "rss_anon_kib", no_rss_anon)
    (cell,) = _fake_run(tmp_path).cells
    assert cell.ok and cell.server_memory_before_bytes is None and cell.memory_bytes_per_order is None
    assert cell.server_memory_unread.startswith(
        "the server's memory could not be read before the cell: no cgroup, "
    )
    assert "no RssAnon line" in cell.server_memory_unread


# -- calibrate's record ---------------------------------------------------------------------


def test_calibrate_guards_memory_by_its_bytes_and_never_asks_the_solo_pairs():
    from hftbench.judge.calibration import guard_rows

    aa = {
        "comparisons": 200,
        "series_tested": {
            "latency-1c/hft memory_bytes_per_order": 200,
            "latency-8c/hft memory_bytes_per_order": 200,
        },
        "series_regression": {},
        "mde": {"latency-1c/hft memory_bytes_per_order": 1.4, "latency-8c/hft memory_bytes_per_order": 40.0},
    }
    # no kind's solo pairs measured memory (hidden.py's effects are ratios): not asked of it
    survival = {"slow": {"latency-1c/hft p50_us": {"whole": True}}}
    rows = {
        r["series"]: r for r in guard_rows(aa, load_gates(ROOT / "bench-config" / "gates.yaml"), survival)
    }
    assert rows["latency-1c/hft"]["guarded"] and rows["latency-1c/hft"]["why_not"] is None
    assert rows["latency-8c/hft"]["why_not"] == "MDE 40.0 B/order > 32 B/order on this runner"


def test_a_small_certain_leak_is_more_memory_under_the_gate_in_bytes():
    noise = _noise(10)
    c, row = _memory_row(_side("base", noise()), _side("head", [8 + x for x in noise()]))
    assert row.verdict == SLOWER and c.exit_code == 0
    doc = c.verdict()
    line = verdict_text.headline(doc)
    assert line.startswith("⚠️ Slower, under the gate of 32 B/order: latency-1c/hft memory per order +")
    assert line.endswith("(the whole interval under it, and excluding 0)")
    assert "| more, under the gate |" in verdict_text.markdown(doc)
