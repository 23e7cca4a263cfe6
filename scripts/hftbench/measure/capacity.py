"""This runner's capacity, and the rate of a scenario given as a share of it (`capacity_fraction`).

The load series runs open loop at a fixed fraction of what this runner's server can do, so
a tuned 28-core runner and a 2-core VM each put their own server at the same relative load:
far enough below saturation that the queue is stable, high enough that queueing, locks and
the worker pool show in P99. The capacity is measured, not configured: client-hft, closed
loop, with the scenario's connections, for PROBE_S seconds against a fresh server of the
base build, placed as the scenario's cells will be. A comparison measures it once, before its
rounds, and every round of both sides runs at the same rate (recorded in the verdict).
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import tempfile
from pathlib import Path

from .. import roster
from ..config import Scenario
from ..errors import UsageError
from .cell import client_binary, client_preexec
from .placement import Placement
from .server import Server, ServerError

PROBE_S = 1.0
PROBE_WARMUP = 1000


def needs_rate(scenarios: list[Scenario]) -> bool:
    return any(sc.capacity_fraction is not None and sc.rate is None for sc in scenarios)


def probe(bins: Path, url: str, load: Scenario, placement: Placement) -> float:
    """Closed-loop orders/s of the roster's probes_capacity client (client-hft) against `url`,
    with the connections and the per-request timeout of `load` (probe_scenario's)."""
    client = roster.default().the_one("probes_capacity")
    binary = client_binary(bins, client)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "probe.json"
        cmd = [
            str(binary),
            *placement.client_flags(client),
            "--url",
            url,
            "--scenario",
            "capacity-probe",
            "--connections",
            str(load.connections),
            *load.timeout_flags(),
            "--warmup",
            str(PROBE_WARMUP),
            "--duration",
            str(PROBE_S),
            "--output",
            str(out),
        ]
        try:
            done = subprocess.run(
                cmd, capture_output=True, text=True, timeout=60, preexec_fn=client_preexec(placement)
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise UsageError(f"capacity probe ({binary}): {exc}; build it with `make build-hft`") from exc
        if done.returncode != 0 or not out.is_file():
            why = (done.stderr or done.stdout).strip().splitlines()[-1:] or [f"exit {done.returncode}"]
            raise UsageError(f"capacity probe against {url} failed: {why[0]}; see the server's log")
        rate = float(json.loads(out.read_text()).get("throughput_rps") or 0.0)
    if rate <= 0:
        raise UsageError(f"capacity probe against {url} measured no throughput; check the server")
    return rate


def resolve(scenarios: list[Scenario], capacity_rps: float) -> list[Scenario]:
    """The scenarios with each capacity_fraction turned into its rate (orders/s, whole)."""
    return [
        dataclasses.replace(sc, rate=float(round(sc.capacity_fraction * capacity_rps)))
        if sc.capacity_fraction is not None and sc.rate is None
        else sc
        for sc in scenarios
    ]


def probe_scenario(scenarios: list[Scenario]) -> Scenario:
    """The load scenario the probe stands in for: the one holding the most connections (the
    load the server will see). The probe keeps its per-request timeout too, so an order the
    scenario would wait for does not fail the probe."""
    return max((sc for sc in scenarios if sc.capacity_fraction is not None), key=lambda sc: sc.connections)


def measure(
    scenarios: list[Scenario], bins: Path, flags: list[str], placement: Placement, log: Path
) -> float:
    """Start a fresh server from `bins` (flags and placement as the rounds will have them),
    probe it, stop it: this runner's capacity for the load scenarios."""
    log.parent.mkdir(parents=True, exist_ok=True)
    try:
        with Server(bins / "hft-server", log, flags, cpus=placement.server) as server:
            return probe(bins, server.url, probe_scenario(scenarios), placement)
    except ServerError as exc:
        raise UsageError(f"capacity probe: {exc}") from exc
