"""What a run will do: the suite, scenarios and clients resolved against bench-config and bin/,
and the order of its cells (hftbench run, ab, bisect and calibrate all start from a Plan)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from .. import config as config_mod
from .. import roster
from ..config import FLOOR
from ..errors import UsageError
from .cell import available_clients, build_command, client_binary

FLOOR_SCENARIO = config_mod.Scenario(
    name=FLOOR,
    connections=1,
    warmup=1000,
    orders=10000,
    description="raw TCP ping-pong over loopback (bin/hft-floor): the physical floor of one round trip",
)


@dataclass
class Plan:
    """What a run will do, resolved from the suite, the flags and what exists in bin/."""

    suite: str
    scenarios: list[config_mod.Scenario]
    clients: list[str]
    repeats: int = 1
    floor: bool = False  # run bin/hft-floor once first as a reference row
    skipped: list[dict[str, str]] = field(default_factory=list)  # suite clients missing from bin/
    colocate: bool = False  # the suite's placement: servers on one CPU, client beside (config.Suite)
    links: dict[str, config_mod.LinkProfile] = field(default_factory=dict)  # network scenarios' paths

    def cells(self) -> list[tuple[config_mod.Scenario, str, int]]:
        """(scenario, client, repeat) in run order: repeats outermost, clients rotated; a
        network scenario starts with the floor of its own path (once, in the first repeat)."""
        order = [(FLOOR_SCENARIO, FLOOR, 1)] if self.floor else []
        for r in range(1, self.repeats + 1):
            shift = (r - 1) % max(len(self.clients), 1)
            rotated = self.clients[shift:] + self.clients[:shift]
            for sc in self.scenarios:
                path_floor = [FLOOR] if self.floor and sc.link and r == 1 else []
                order += [(sc, client, r) for client in path_floor + rotated]
        return order


def make_plan(
    cfg: config_mod.Config,
    bins_dir: Path,
    suite: str | None,
    *,
    scenarios: list[str] | None = None,
    clients: list[str] | None = None,
    repeats: int = 1,
    overrides: dict | None = None,
    floor: bool = True,
) -> Plan:
    """Resolve names (UsageError listing the valid ones) and check bin/ (naming the make target)."""
    if suite is None and not scenarios:
        raise UsageError(f"pass --suite NAME or --scenarios a,b; suites: {', '.join(cfg.suites)}")
    chosen = cfg.suite(suite) if suite else None
    scenario_names = scenarios or list(chosen.scenarios)
    scs = [cfg.scenario(n).with_overrides(**(overrides or {})) for n in scenario_names]
    known = cfg.roster or roster.default()
    if clients:
        for c in clients:
            if c not in known:
                raise UsageError(known.unknown(c))
        missing = [c for c in clients if c not in available_clients(bins_dir, clients)]
        if missing:
            fixes = "; ".join(
                f"{client_binary(bins_dir, c)} missing: run `{build_command(c)}`" for c in missing
            )
            raise UsageError(fixes)
        names, skipped = list(clients), []
    else:
        wanted = list(chosen.clients) if chosen else list(known.names)
        names = available_clients(bins_dir, wanted)
        skipped = [
            {"client": c, "reason": f"{client_binary(bins_dir, c)} missing: run `{build_command(c)}`"}
            for c in wanted
            if c not in names
        ]
        if not names:
            raise UsageError(
                f"no client binary in {bins_dir} "
                f"({', '.join(f'client-{c}' for c in wanted)}); run `make build`"
            )
    if repeats < 1:
        raise UsageError(f"--repeat must be >= 1 (got {repeats})")
    has_floor = floor and os.access(client_binary(bins_dir, FLOOR), os.X_OK)
    colocate = bool(chosen and chosen.colocate)
    return Plan(
        suite=suite or "adhoc",
        scenarios=scs,
        clients=names,
        repeats=repeats,
        floor=has_floor,
        skipped=skipped,
        colocate=colocate,
        links=dict(cfg.links),
    )
