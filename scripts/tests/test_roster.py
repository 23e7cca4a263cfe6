"""bench-config/clients.yaml loading: the real roster, what its flags drive, file:line errors."""

from __future__ import annotations

import pytest
from hftbench import config, roster
from hftbench.measure import cell, duet, placement
from support.hftbench_fakes import REPO

GOOD = """schema_version: 1
clients:
  c: {folder: clients/c, language: c, throughput_goal: 0.8}
  hft: {folder: clients/hft, language: c, throughput_goal: 1.0, pins_threads: true, intervals: true}
"""


def load_text(tmp_path, text):
    path = tmp_path / "clients.yaml"
    path.write_text(text)
    return roster.load(path)


def test_the_repository_roster_is_the_six_clients_in_report_order():
    r = roster.default()
    assert r.path == REPO / "bench-config" / "clients.yaml" == roster.ROSTER_FILE
    assert r.names == ("python", "c", "cpp", "rust", "go", "hft")
    assert r.having("pins_threads") == r.having("intervals") == ("hft",)
    assert r.the_one("duet") == r.the_one("probes_capacity") == "hft"
    hft = r["hft"]
    assert (hft.folder, hft.binary, hft.make_target) == ("clients/hft", "client-hft", "build-hft")


def test_readers_take_their_client_facts_from_the_roster():
    assert cell.build_command("cpp") == "make build-cpp" and cell.build_command("floor") == "make build"
    assert [c for c in ("python", "hft", "floor") if placement.pins_each_thread(c)] == ["hft", "floor"]
    latency_1c = config.load(REPO / "bench-config" / "scenarios.yaml").scenario("latency-1c")
    assert duet.duet_client() == "hft" and duet.qualifies(latency_1c, "rust").startswith("only client-hft")
    assert duet.qualifies(latency_1c, "hft") is None


def test_an_ability_two_clients_claim_is_refused_by_name(tmp_path):
    both = GOOD.replace("folder: clients/c,", "folder: clients/c, duet: true,")
    r = load_text(tmp_path, both.replace("intervals: true}", "intervals: true, duet: true}"))
    with pytest.raises(roster.RosterError, match="exactly one client must have duet: true"):
        r.the_one("duet")


def test_a_good_roster_keeps_its_order_and_defaults(tmp_path):
    r = load_text(tmp_path, GOOD)
    assert r.names == ("c", "hft") and "c" in r and "rust" not in r
    assert (r["c"].pins_threads, r["c"].intervals, r["c"].throughput_goal) == (False, False, 0.8)
    path = tmp_path / "clients.yaml"
    assert r.unknown("go") == f"unknown client 'go'; valid clients: c, hft (the roster: {path})"


@pytest.mark.parametrize(
    ("text", "where", "words"),
    [
        (GOOD.replace("language: c,", "language: c, colour: red,", 1), ":3:", "unknown key 'colour'"),
        (GOOD.replace("folder: clients/c, ", ""), ":3:", "client 'c' needs 'folder'"),
        (GOOD.replace("throughput_goal: 0.8", "throughput_goal: fast"), ":3:", "c.throughput_goal: 'fast'"),
        (GOOD.replace("throughput_goal: 0.8", "throughput_goal: 0"), ":3:", "must lie in (0, 2]"),
        (GOOD.replace("pins_threads: true", "pins_threads: 1"), ":4:", "hft.pins_threads: 1 is the wrong"),
        (GOOD.replace("  c:", "  C++:"), ":3:", "client name 'C++' must be lower-case"),
        (GOOD.replace("  c:", "  floor:"), ":3:", "and not floor"),
        (GOOD + GOOD.splitlines(keepends=True)[2], ":5:", "duplicate key 'c' in clients"),
        (GOOD.replace("schema_version: 1", "schema_version: 2"), ":1:", "exactly schema_version: 1"),
        (GOOD.replace("{folder: clients/c,", "{folder: clients/c"), ":3:", "not valid YAML"),
        ("schema_version: 1\nclients: {}\n", ":2:", "clients is empty"),
        ("", ":1:", "empty"),
    ],
    ids=[
        "key",
        "required",
        "type",
        "range",
        "bool",
        "name",
        "floor",
        "duplicate",
        "version",
        "yaml",
        "none",
        "empty",
    ],
)
def test_a_malformed_roster_names_file_line_and_problem(tmp_path, text, where, words):
    with pytest.raises(roster.RosterError) as info:
        load_text(tmp_path, text)
    message = str(info.value)
    assert message.startswith(str(tmp_path / "clients.yaml") + where), message
    assert words in message


def test_a_missing_roster_is_named(tmp_path):
    with pytest.raises(roster.RosterError, match="cannot read the client roster"):
        roster.load(tmp_path / "absent.yaml")
