"""The capacity probe stands in for the load scenarios: their connections and their timeout."""

import json
import subprocess
from pathlib import Path

from hftbench.config import Scenario
from hftbench.measure import capacity
from hftbench.measure.placement import Placement

LATENCY = Scenario(name="latency-1c", orders=100, connections=1, warmup=10, timeout_ms=5)
LOAD = Scenario(name="load", orders=100, connections=8, warmup=10, capacity_fraction=0.25, timeout_ms=30_000)
LOAD_2C = Scenario(name="load-2c", orders=100, connections=2, warmup=10, capacity_fraction=0.5)


def probed_with(monkeypatch, scenarios: list[Scenario]) -> list[str]:
    """The client command the probe runs for `scenarios` (a client that reports 5,000 orders/s)."""
    seen = []

    def client(cmd, **kw):
        seen.append(cmd)
        Path(cmd[cmd.index("--output") + 1]).write_text(json.dumps({"throughput_rps": 5000.0}))
        return subprocess.CompletedProcess(cmd, 0, "", "")

    monkeypatch.setattr(subprocess, "run", client)
    load = capacity.probe_scenario(scenarios)
    assert capacity.probe(Path("/b/bin"), "http://127.0.0.1:1", load, Placement()) == 5000.0
    return seen[0]


def test_the_probe_keeps_the_load_scenarios_connections_and_timeout(monkeypatch):
    cmd = probed_with(monkeypatch, [LATENCY, LOAD_2C, LOAD])
    assert cmd[cmd.index("--connections") + 1] == "8"  # the busiest load scenario, not the latency one
    # an order the scenario would wait 30 s for does not fail the probe at the client's 1 s default
    assert cmd[cmd.index("--timeout-ms") + 1] == "30000"


def test_a_load_scenario_without_a_timeout_leaves_the_clients_default(monkeypatch):
    cmd = probed_with(monkeypatch, [LATENCY, LOAD_2C])
    assert cmd[cmd.index("--connections") + 1] == "2" and "--timeout-ms" not in cmd
