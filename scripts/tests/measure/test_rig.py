"""rig.py: the one measuring rig of ab, bisect, calibrate, the profile and `run --rounds`,
driven with fake rounds.

The real rounds (servers, client-hft) are the measuring tests of test_ab.py, test_bisect.py
and test_calibrate.py (and test_run_cli.py's --rounds on the fake bin/); these check what the
rig decides itself: which design runs, in which order, with which side's build and flags, at
which load rate, where, and what a server that does not start becomes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hftbench.config import Scenario
from hftbench.design_names import DUET, PAIRED_ROUNDS
from hftbench.judge.rounds import Rounds
from hftbench.judge.session import Session
from hftbench.measure import capacity
from hftbench.measure import rig as rig_mod
from hftbench.measure import run as run_mod
from hftbench.measure.placement import ENV_CLIENT_NICE, ENV_DUET_SPLIT, Placement
from hftbench.measure.plan import Plan
from hftbench.measure.rig import Group, Rig, RoundError, key, order
from hftbench.measure.served import Served
from hftbench.measure.server import ServerError

LATENCY = Scenario(name="latency-1c", orders=100, connections=1, warmup=10)
LOAD = Scenario(name="load", orders=100, connections=8, warmup=10, capacity_fraction=0.25)
BASE = Served(Path("/b/bin"), ("--x",), repo=Path("/b"), commit="b" * 40, label="main")
HEAD = Served(Path("/h/bin"), ("--x", "--inject-delay-us", "4"), repo=Path("/b"), commit="h" * 40, label="pr")


def rig(scenarios, duet: bool, runner: Placement | None = None) -> Rig:
    runner = runner or Placement((1,), (0,))
    plan = Plan(suite="pr", scenarios=list(scenarios), clients=["hft"], colocate=True)
    design = DUET if duet else PAIRED_ROUNDS
    return Rig(plan, design, {"p50_us": 500}, runner, np.random.default_rng(1))


@pytest.fixture(autouse=True)
def _nice(monkeypatch):
    """colocated() asks for the client's nice: none here, and no note about it."""
    monkeypatch.setenv(ENV_CLIENT_NICE, "0")


@pytest.fixture
def ran(monkeypatch):
    """Every run_plan call the rig makes: (bins, flags, commit, branch, rates, run_dir)."""
    calls = []

    def fake_run_plan(plan, bins, run_dir, *, targets, server_flags, timeout_s, quiet, git, placement):
        rates = [sc.rate for sc in plan.scenarios]
        calls.append((bins, tuple(server_flags), git["commit"], git["branch"], rates, run_dir))
        return f"run of {bins}"

    monkeypatch.setattr(rig_mod, "run_plan", fake_run_plan)
    return calls


def test_paired_rounds_alternate_which_side_runs_first_and_serve_each_sides_own_build(ran, tmp_path):
    r = rig([LATENCY], duet=False)
    for pair in range(3):
        runs = r.round({"base": BASE, "head": HEAD}, tmp_path, pair)
        assert runs == {"base": "run of /b/bin", "head": "run of /h/bin"}
    assert [bins.parts[1] for bins, *_ in ran] == ["b", "h", "h", "b", "b", "h"]
    assert [side for pair in range(3) for side in order(pair)] == [
        "base",
        "head",
        "head",
        "base",
        "base",
        "head",
    ]
    first = ran[0]
    assert first[1:4] == (("--x",), "b" * 40, "main")  # the git info of its commit, read by sha
    assert ran[1][1] == ("--x", "--inject-delay-us", "4")
    # Each run in its own folder under out/<side>, named by side and round (the store keys by id).
    assert [d.parent.name for *_, d in ran] == ["base", "head", "head", "base", "base", "head"]
    assert "_base01_" in ran[0][5].name and "_head02_" in ran[2][5].name


def test_duet_rounds_go_to_the_duet_with_the_rigs_placement_and_balanced_slots(monkeypatch, tmp_path, ran):
    seen = []

    def fake_duet(sides, out, pair, scenarios, *, suite, targets, placement, head_slot):
        seen.append((sides, out, pair, [sc.name for sc in scenarios], suite, placement, head_slot))
        return {"base": "b", "head": "h"}

    monkeypatch.setattr(rig_mod, "run_round", fake_duet)
    r = rig([LATENCY], duet=True)
    assert r.round({"base": BASE, "head": HEAD}, tmp_path / "aa", 4) == {"base": "b", "head": "h"}
    sides, out, pair, names, suite, placement, _ = seen[0]
    assert sides == {"base": BASE, "head": HEAD} and out == tmp_path / "aa" and pair == 4
    assert (names, suite, placement) == (["latency-1c"], "pr", r.placement)
    assert ran == []  # a duet never runs a side alone
    # Head's slot: drawn for each pair of rounds, the other one in the pair's second round.
    for pair in range(40):
        r.round({"base": BASE, "head": HEAD}, tmp_path / "aa", pair)
    slots = [s[-1] for s in seen[1:]]
    assert all({slots[i], slots[i + 1]} == {"a", "b"} for i in range(0, 40, 2))
    assert slots[4] == seen[0][-1]  # round 4 asked twice: the same slot
    firsts = slots[::2]
    assert 0 < firsts.count("a") < 20  # drawn, not fixed: P(all 20 alike) = 2^-19


def test_the_load_rate_is_probed_once_on_the_side_given_and_every_later_round_runs_at_it(
    monkeypatch, ran, tmp_path
):
    probes = []

    def fake_capacity(scenarios, bins, flags, placement, log):
        probes.append((bins, tuple(flags), log))
        return 40_000.0

    monkeypatch.setattr(capacity, "measure", fake_capacity)
    r = rig([LATENCY, LOAD], duet=False)
    assert r.load(BASE, tmp_path / "probe.log") == 40_000.0
    assert probes == [(Path("/b/bin"), ("--x",), tmp_path / "probe.log")]
    r.round({"base": BASE, "head": HEAD}, tmp_path, 0)
    r.run(HEAD, tmp_path / "solo")
    assert [rates for *_, rates, _ in ran] == [[None, 10_000.0]] * 3  # a quarter of the capacity, both sides
    assert r.capacity_rps == 40_000.0


def test_a_plan_without_a_load_scenario_probes_nothing(monkeypatch, tmp_path):
    monkeypatch.setattr(capacity, "measure", lambda *a: pytest.fail("probed a plan with no load"))
    r = rig([LATENCY], duet=True)
    assert r.load(BASE, tmp_path / "probe.log") is None and r.capacity_rps is None


def test_a_server_that_does_not_start_is_a_round_error_naming_the_side(monkeypatch, tmp_path):
    def refuse(plan, bins, run_dir, **kw):
        raise ServerError("port 8080 in use")

    monkeypatch.setattr(rig_mod, "run_plan", refuse)
    with pytest.raises(RoundError, match="head server: port 8080 in use"):
        rig([LATENCY], duet=False).round({"base": BASE, "head": HEAD}, tmp_path, 1)  # head runs first


def test_the_rig_holds_its_design_once_and_says_whether_it_is_a_duet():
    assert rig([LATENCY], duet=True).design == DUET and rig([LATENCY], duet=True).duet
    assert rig([LATENCY], duet=False).design == PAIRED_ROUNDS and not rig([LATENCY], duet=False).duet


class Placed(Exception):
    """run_plan reached its placement check: the placement its run would have."""


def test_a_tuned_runners_second_server_cpu_survives_the_rigs_run_path(monkeypatch, tmp_path):
    monkeypatch.setenv(ENV_DUET_SPLIT, "1")

    # colocated() once: the last server CPU, the other one a duet's second server. Applied twice
    # (the rig's, then run_plan's), the second server CPU is gone.
    def stop(self):
        raise Placed(self)

    monkeypatch.setattr(Placement, "check", stop)
    r = rig([LATENCY], duet=False, runner=Placement((2, 3), (4,)))
    assert r.placement.server == (3,) and r.placement.second_server == (2,) and r.placement.busy_poll
    with pytest.raises(Placed) as where:  # the real run_plan, stopped before it starts anything
        r.run(BASE, tmp_path / "run")
    assert where.value.args[0] == r.placement and where.value.args[0].second_server == (2,)
    assert run_mod.placed(r.plan, r.runner) == r.placement


def test_the_capacity_probe_runs_where_the_rounds_run(monkeypatch, tmp_path):
    monkeypatch.setenv(ENV_DUET_SPLIT, "1")
    seen = []
    monkeypatch.setattr(capacity, "measure", lambda sc, bins, fl, where, log: seen.append(where) or 1e4)
    r = rig([LATENCY, LOAD], duet=False, runner=Placement((2, 3), (4,)))
    r.load(BASE, tmp_path / "probe.log")
    assert seen == [r.placement] and seen[0].second_server == (2,)


def test_rounds_alone_probe_the_load_rate_once_and_run_each_round_in_a_folder(monkeypatch, ran, tmp_path):
    probes = []
    monkeypatch.setattr(capacity, "measure", lambda sc, bins, fl, where, log: probes.append(log) or 40_000.0)
    started = []
    r = rig([LATENCY, LOAD], duet=False)
    runs = list(r.rounds(BASE, tmp_path, 3, starting=lambda i, d: started.append((i, d))))
    assert runs == ["run of /b/bin"] * 3
    assert probes == [tmp_path / "capacity-probe.log"]  # once, before the rounds, in the parent folder
    assert [rates for *_, rates, _ in ran] == [[None, 10_000.0]] * 3  # every round at the one rate
    folders = [d for *_, d in ran]
    assert [i for i, _ in started] == [1, 2, 3] and [d for _, d in started] == folders
    assert [d.parent for d in folders] == [tmp_path] * 3 and all(d.is_dir() for d in folders)
    assert [d.name.split("_")[2] for d in folders] == ["r01", "r02", "r03"]
    assert all(d.name.startswith("run_") for d in folders) and folders == sorted(folders)
    assert {b for b, *_ in ran} == {Path("/b/bin")} and {f for _, f, *_ in ran} == {("--x",)}


def test_a_round_whose_server_does_not_start_names_the_round_and_the_side(monkeypatch, tmp_path):
    calls = []

    def second_fails(plan, bins, run_dir, **kw):
        calls.append(run_dir)
        if len(calls) == 2:
            raise ServerError("port 8080 in use")
        (run_dir / "results.json").write_text("{}")
        return f"run of {bins}"

    monkeypatch.setattr(rig_mod, "run_plan", second_fails)
    kept = []
    said = r"round 2 of 4 \(run_\w+_r02_[0-9a-f]{6}\): main server: port 8080 in use"
    with pytest.raises(RoundError, match=said):
        for run in rig([LATENCY], duet=False).rounds(BASE, tmp_path, 4):
            kept.append(run)
    assert len(calls) == 2 and kept == ["run of /b/bin"]  # no round after it
    assert (calls[0] / "results.json").is_file()  # the round before it stays written


CAND = Served(Path("/c/bin"), ("--x",), repo=Path("/b"), commit="c" * 40, label="cand")


def fixed(n: int) -> Session:
    """A session of exactly n rounds, no look (calibrate's)."""
    return Session(Rounds(repeats=n, max_repeats=n, step=1, time_budget_s=1e9))


def test_paired_rounds_of_three_sides_rotate_every_side_through_every_place(ran, tmp_path):
    session = fixed(6)
    group = Group({"good": BASE, "cand": CAND, "bad": HEAD})
    assert rig([LATENCY], duet=False).measure(session, {"": group}, tmp_path, lambda: True) is None
    firsts = [bins.parts[1] for bins, *_ in ran]
    rounds = [firsts[i : i + 3] for i in range(0, 18, 3)]
    assert rounds[0] == ["b", "c", "h"] and rounds[1] == ["h", "c", "b"]  # good, cand, bad; reversed
    for place in range(3):  # each side first, second and last twice in six rounds
        assert sorted(r[place] for r in rounds) == ["b", "b", "c", "c", "h", "h"]
    assert session.done == 6 and {k: len(v) for k, v in session.runs.items()} == {
        "good": 6,
        "cand": 6,
        "bad": 6,
    }
    assert [d.parent for *_, d in ran[:3]] == [tmp_path / "good", tmp_path / "cand", tmp_path / "bad"]
    assert "_cand01_" in ran[1][5].name and "_cand06_" in ran[-3][5].name  # round 6: cand, good, bad


def test_groups_of_a_round_go_to_folders_of_their_own_and_stop_at_their_own_count(monkeypatch, tmp_path):
    seen = []

    def fake_duet(sides, out, pair, scenarios, *, suite, targets, placement, head_slot):
        seen.append((out.name, pair, head_slot, sides["head"].label))
        return {"base": f"b{pair}", "head": f"{out.name}{pair}"}

    monkeypatch.setattr(rig_mod, "run_round", fake_duet)
    told, after = [], []
    groups = {
        "aa": Group({"base": BASE, "head": BASE}),
        "slow": Group({"base": BASE, "head": HEAD}, rounds=2),
    }
    session = fixed(3)
    r = rig([LATENCY], duet=True)
    r.measure(
        session,
        groups,
        tmp_path,
        lambda: True,
        told=lambda g, i, runs: told.append((g, i)),
        after=after.append,
    )
    assert [(o, p) for o, p, *_ in seen] == [("aa", 0), ("slow", 0), ("aa", 1), ("slow", 1), ("aa", 2)]
    assert seen[0][2] == seen[1][2] and seen[2][2] == seen[3][2]  # one slot per round, every group
    assert told == [("aa", 0), ("slow", 0), ("aa", 1), ("slow", 1), ("aa", 2)] and after == [0, 1, 2]
    assert session.pairs(key("slow", "base"), key("slow", "head")) == [("b0", "slow0"), ("b1", "slow1")]
    assert len(session.pairs(key("aa", "base"), key("aa", "head"))) == 3


def test_a_duet_serves_base_and_head_only(tmp_path):
    with pytest.raises(ValueError, match="base and head, not good, cand"):
        rig([LATENCY], duet=True).round({"good": BASE, "cand": CAND}, tmp_path, 0)


def test_a_server_that_does_not_start_in_a_group_says_its_group_and_side(monkeypatch, tmp_path):
    def refuse(plan, bins, run_dir, **kw):
        raise ServerError("port 8080 in use")

    monkeypatch.setattr(rig_mod, "run_plan", refuse)
    group = Group({"good": BASE, "cand": CAND})
    with pytest.raises(RoundError, match="good server: port 8080 in use") as raised:
        rig([LATENCY], duet=False).measure(fixed(2), {"vs_good": group}, tmp_path, lambda: True)
    assert (raised.value.group, raised.value.side) == ("vs_good", "good")
