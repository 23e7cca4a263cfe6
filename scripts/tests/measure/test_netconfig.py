"""Network scenarios in bench-config: link profiles validated like everything else, and a
network scenario's run plan starting with the floor of its own path. Pure, no root needed."""

from __future__ import annotations

import pytest
from hftbench import config
from hftbench.measure import netpath
from hftbench.measure.plan import Plan
from support.hftbench_fakes import REPO

BASE = """schema_version: 1
targets: {p50_us: 500}
links:
  lan: {delay_us: 25, jitter_us: 5}
  none: {emulate: false}
scenarios:
  a: {orders: 10, connections: 1, warmup: 0}
  n: {orders: 10, connections: 1, warmup: 0, link: LINK}
suites:
  s: {scenarios: [a, n], clients: [hft]}
"""


def load(tmp_path, text):
    f = tmp_path / "scenarios.yaml"
    f.write_text(text)
    return config.load(f)


def test_the_shipped_network_suite_and_profiles():
    cfg = config.load(REPO / "bench-config" / "scenarios.yaml")
    assert cfg.suite("network").scenarios == ("net-none", "net-lan", "net-metro")
    lan, metro, none = cfg.links["lan"], cfg.links["metro"], cfg.links["none"]
    assert (lan.delay_us, lan.jitter_us, lan.loss_pct) == (25, 5, 0)
    assert (metro.delay_us, metro.jitter_us, metro.loss_pct) == (250, 50, 0.01)
    assert not none.emulate and lan.emulate
    assert {cfg.scenarios[s].link for s in cfg.suite("network").scenarios} == {"none", "lan", "metro"}


def test_a_scenario_naming_an_unknown_link_is_refused_with_the_line(tmp_path):
    with pytest.raises(
        config.ConfigError, match=r"scenarios.yaml:8:\d+: scenario 'n' names unknown link 'wan'"
    ):
        load(tmp_path, BASE.replace("LINK", "wan"))


def test_jitter_beyond_the_delay_and_unknown_keys_are_refused(tmp_path):
    with pytest.raises(config.ConfigError, match="jitter_us 30 > delay_us 25"):
        load(tmp_path, BASE.replace("LINK", "lan").replace("jitter_us: 5", "jitter_us: 30"))
    with pytest.raises(config.ConfigError, match="unknown key 'delay_ms'"):
        load(tmp_path, BASE.replace("LINK", "lan").replace("delay_us: 25", "delay_ms: 25"))


def test_a_network_scenario_starts_with_its_path_floor_once(tmp_path):
    cfg = load(tmp_path, BASE.replace("LINK", "lan"))
    plan = Plan("s", [cfg.scenarios["a"], cfg.scenarios["n"]], ["hft", "c"], repeats=2, floor=True)
    order = [(sc.name, client, r) for sc, client, r in plan.cells()]
    assert order == [
        ("floor", "floor", 1),
        ("a", "hft", 1),
        ("a", "c", 1),
        ("n", "floor", 1),
        ("n", "hft", 1),
        ("n", "c", 1),
        ("a", "c", 2),
        ("a", "hft", 2),
        ("n", "c", 2),
        ("n", "hft", 2),
    ]
    no_floor = Plan("s", [cfg.scenarios["n"]], ["hft"], floor=False)
    assert [c for _, c, _ in no_floor.cells()] == ["hft"]


def test_the_added_round_trip_is_the_sum_of_both_directions():
    stats = {
        "a_to_b": {"delay_us": {"p50": 25.5, "p99": 30.0}},
        "b_to_a": {"delay_us": {"p50": 24.5, "p99": 29.0}},
    }
    assert netpath.round_trip_added_us(stats) == 50.0
    assert netpath.round_trip_added_us(stats, "p99") == 59.0
    assert netpath.round_trip_added_us({"a_to_b": {"delay_us": None}, "b_to_a": {}}) is None
    assert netpath.round_trip_added_us(None) is None


def test_only_names_of_ours_with_a_dead_owner_are_swept(monkeypatch):
    listing = "hftb-111-srv (id: 3)\nhftb-111-link\nhftb-222-srv\nother-ns\nhftbx-1-srv\n"
    calls = []

    def fake_ip(ip, *args):
        calls.append(args)
        if args[:2] == ("netns", "list"):
            return listing
        if args[:2] == ("-o", "link"):
            return "7: hftb111c@if2: <BROADCAST>\n8: hftb222c@if3: <UP>\n9: eth0: <UP>\n"
        return ""

    monkeypatch.setattr(netpath, "_ip", fake_ip)
    removed = netpath.sweep_leftovers("ip", alive=lambda pid: pid == 222)
    assert removed == ["hftb-111-srv", "hftb-111-link", "hftb111c"]
    deleted = [a[-1] for a in calls if a[-2:-1] == ("delete",)]
    assert deleted == ["hftb-111-srv", "hftb-111-link", "hftb111c"]


def test_a_veth_gone_with_its_namespace_before_its_delete_is_swept_and_other_errors_are_not(monkeypatch):
    def fake_ip(error):
        def ip(_, *args):
            if args[:2] == ("netns", "list"):
                return "hftb-111-srv\n"
            if args[:2] == ("-o", "link"):
                return "7: hftb111c@if2: <BROADCAST>\n"
            if args[:2] == ("link", "delete"):
                raise netpath.NetPathError(f"`ip link delete hftb111c` failed: {error}")
            return ""

        return ip

    monkeypatch.setattr(netpath, "_ip", fake_ip('Cannot find device "hftb111c"'))
    assert netpath.sweep_leftovers("ip", alive=lambda pid: False) == ["hftb-111-srv", "hftb111c"]
    monkeypatch.setattr(netpath, "_ip", fake_ip("Operation not permitted"))
    with pytest.raises(netpath.NetPathError, match="Operation not permitted"):
        netpath.sweep_leftovers("ip", alive=lambda pid: False)
