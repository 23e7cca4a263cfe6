"""bench-config/scenarios.yaml loading: the real file, overrides, and file:line errors."""

from __future__ import annotations

import pytest
from hftbench import config, roster
from hftbench.errors import UsageError
from support.hftbench_fakes import REPO

GOOD = """schema_version: 1
targets: {p50_us: 500, p99_us: 2000, throughput_rps: 10000}
scenarios:
  a: {orders: 10, connections: 2, warmup: 1}
  b: {duration_s: 3, connections: 1, warmup: 0, rate: 100}
suites:
  s: {scenarios: [a, b], clients: [c, rust]}
"""


def load_text(tmp_path, text):
    path = tmp_path / "scenarios.yaml"
    path.write_text(text)
    return config.load(path)


def test_the_repository_config_loads_with_the_seed_scenarios():
    cfg = config.load(REPO / "bench-config" / "scenarios.yaml")
    assert {"quick", "pr", "standard", "stress"} <= set(cfg.suites)
    assert cfg.scenarios["large"].orders == 10000 and cfg.scenarios["large"].connections == 100
    assert cfg.targets == {"p50_us": 500, "p99_us": 2000, "throughput_rps": 10000}
    for suite in cfg.suites.values():
        assert all(name in cfg.scenarios for name in suite.scenarios)


def test_client_args_follow_the_client_contract(tmp_path):
    cfg = load_text(tmp_path, GOOD)
    assert cfg.scenarios["a"].client_args() == [
        "--scenario",
        "a",
        "--connections",
        "2",
        "--warmup",
        "1",
        "--orders",
        "10",
    ]
    b = cfg.scenarios["b"]
    assert b.mode == "open"
    assert b.client_args()[-4:] == ["--duration", "3", "--rate", "100"]


def test_overrides_replace_orders_and_duration_each_other(tmp_path):
    cfg = load_text(tmp_path, GOOD)
    a = cfg.scenarios["a"].with_overrides(duration_s=2.5, connections=7)
    assert (a.orders, a.duration_s, a.connections) == (None, 2.5, 7)
    b = cfg.scenarios["b"].with_overrides(orders=50)
    assert (b.orders, b.duration_s, b.rate) == (50, None, 100)


@pytest.mark.parametrize(
    ("text", "where", "words"),
    [
        (GOOD.replace("warmup: 1}", "warmup: 1, bogus: 3}"), ":4:", "unknown key 'bogus'"),
        (GOOD.replace("connections: 2", "connections: 0"), ":4:", "less than the minimum of 1"),
        (GOOD.replace("orders: 10,", "orders: 10, duration_s: 1,"), ":4:", "both orders and duration_s"),
        (GOOD.replace("clients: [c, rust]", "clients: [c, java]"), ":7:", "unknown client 'java'"),
        (GOOD.replace("clients: [c, rust]", "clients: everyone"), ":7:", "neither all nor a non-empty list"),
        (GOOD.replace("scenarios: [a, b]", "scenarios: [a, zz]"), ":7:", "unknown scenario 'zz'"),
        (GOOD.replace("targets: {p50_us: 500,", "targets: {p50_us: 500"), ":2:", "not valid YAML"),
        (GOOD + "suites: {}\n", ":8:", "duplicate key 'suites'"),
        ("", ":1:", "empty"),
    ],
    ids=[
        "unknown-key",
        "range",
        "orders-and-duration",
        "client",
        "clients-word",
        "suite-scenario",
        "yaml",
        "duplicate",
        "empty",
    ],
)
def test_malformed_config_names_file_line_and_problem(tmp_path, text, where, words):
    with pytest.raises(config.ConfigError) as info:
        load_text(tmp_path, text)
    message = str(info.value)
    assert message.startswith(str(tmp_path / "scenarios.yaml") + where), message
    assert words in message


def test_unknown_suite_and_scenario_list_the_valid_names(tmp_path):
    cfg = load_text(tmp_path, GOOD)
    with pytest.raises(UsageError, match=r"unknown suite 'nope'; valid suites: s"):
        cfg.suite("nope")
    with pytest.raises(UsageError, match=r"unknown scenario 'x'; valid scenarios: a, b"):
        cfg.scenario("x")


def test_missing_file_says_how_to_pass_one(tmp_path):
    with pytest.raises(config.ConfigError, match="--config"):
        config.load(tmp_path / "absent.yaml")


SOAK = GOOD.replace(
    "  b: {duration_s: 3,",
    "  k: {duration_s: 20, connections: 1, warmup: 0, rate: 500, interval_s: 2}\n  b: {duration_s: 3,",
)


def test_a_soak_asks_only_interval_clients_for_intervals(tmp_path):
    k = load_text(tmp_path, SOAK).scenarios["k"]
    assert k.soak and k.client_args("hft")[-2:] == ["--interval-s", "2"]
    assert "--interval-s" not in k.client_args("rust") and "--interval-s" not in k.client_args()
    assert k.with_overrides(interval_s=0.5).interval_s == 0.5
    a = load_text(tmp_path, SOAK).scenarios["a"]
    assert a.with_overrides(interval_s=0.5).interval_s is None  # only a soak's interval is overridden


def test_a_suite_running_a_soak_with_a_client_without_intervals_is_refused(tmp_path):
    text = SOAK.replace(
        "  s: {scenarios: [a, b], clients: [c, rust]}", "  s: {scenarios: [a, k], clients: [hft, rust]}"
    )
    with pytest.raises(config.ConfigError, match=r"runs the soak 'k' with rust, which write no per-interval"):
        load_text(tmp_path, text)
    ok = load_text(tmp_path, text.replace("clients: [hft, rust]", "clients: [hft]"))
    assert ok.suites["s"].clients == ("hft",)


def test_the_repository_suites_of_all_clients_run_the_roster_in_its_order():
    cfg = config.load(REPO / "bench-config" / "scenarios.yaml")
    names = roster.default().names
    assert names == ("python", "c", "cpp", "rust", "go", "hft")  # `run --suite quick` as before
    for suite in ("quick", "standard", "network"):
        assert cfg.suites[suite].clients == names
    assert cfg.suites["pr"].clients == ("hft",) and cfg.roster == roster.default()


def test_a_client_added_to_the_roster_is_seen_by_the_suites(tmp_path):
    """One line in clients.yaml: a suite may name the client, and `all` includes it."""
    text = GOOD.replace("[c, rust]", "[c, zig]") + "  every: {scenarios: [a], clients: all}\n"
    with pytest.raises(config.ConfigError) as info:
        load_text(tmp_path, text)
    message = str(info.value)
    assert message.startswith(f"{tmp_path / 'scenarios.yaml'}:7:"), message
    valid = "valid clients: python, c, cpp, rust, go, hft"
    assert f"unknown client 'zig'; {valid} (the roster: {roster.ROSTER_FILE})" in message

    seventh = tmp_path / "clients.yaml"
    line = "  zig: {folder: clients/zig, language: zig, throughput_goal: 0.8}\n"
    seventh.write_text(roster.ROSTER_FILE.read_text() + line)
    cfg = config.load(tmp_path / "scenarios.yaml", roster=roster.load(seventh))
    assert cfg.suites["s"].clients == ("c", "zig")
    assert cfg.suites["every"].clients == ("python", "c", "cpp", "rust", "go", "hft", "zig")
