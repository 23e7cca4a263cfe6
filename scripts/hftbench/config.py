"""bench-config/scenarios.yaml: load, validate, and resolve suites and overrides.

Validation is the JSON Schema `scenarios.schema.json` (beside this module) plus the checks a
schema cannot express (a suite naming an unknown scenario, or a client not in the roster
bench-config/clients.yaml, duplicate keys). Every problem is reported as
`file:line:column: problem`, from PyYAML's node marks.
"""

from __future__ import annotations

import dataclasses
import functools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import jsonschema
import yaml

from . import roster as roster_mod
from . import yamlfile
from .errors import UsageError
from .results_shapes import LinkRecord, ScenarioRecord
from .yamlfile import where as _where

# bin/hft-floor: raw TCP ping-pong over loopback, the physical floor (a reference row). Not in
# the client roster (bench-config/clients.yaml): no suite chooses it, every run may add it.
FLOOR = "floor"
ALL_CLIENTS = "all"  # a suite's `clients: all`: every client of the roster, in its order
_SCHEMA_FILE = Path(__file__).with_name("scenarios.schema.json")


class ConfigError(UsageError):
    """A malformed config file; the message starts with file:line:column."""


@dataclass(frozen=True)
class Scenario:
    """One client invocation's parameters (clients/README.md flags)."""

    name: str
    connections: int
    warmup: int
    orders: int | None = None  # measured orders; None when duration_s is set
    duration_s: float | None = None  # measure for this long instead of a count
    rate: float | None = None  # open loop: total orders/s; None = closed loop
    timeout_ms: int | None = None  # per-request timeout; None = the client's default
    seed: int | None = None  # order-stream seed; None = the client's default
    description: str = ""
    link: str | None = None  # a `links` profile: run over the network path (netpath.py), not loopback
    # A soak: the client writes one .hlog line per interval_s (roster: intervals) and hftbench
    # samples the server's RSS, CPU and connections once a second; the report shows the drift.
    interval_s: float | None = None
    # Open loop at this share of the capacity measured on this runner (capacity.py): the load
    # series, comparable between runners because each loads its own server alike. The rate is
    # set (with_overrides(rate=…)) before a client runs.
    capacity_fraction: float | None = None

    @property
    def mode(self) -> str:
        return "open" if self.rate or self.capacity_fraction else "closed"

    @property
    def soak(self) -> bool:
        return self.interval_s is not None

    def client_args(self, client: str | None = None) -> list[str]:
        """The flags of clients/README.md for this scenario (without --url / --output), and
        `--interval-s` for a soak when `client` writes intervals (its roster line says so)."""
        if self.capacity_fraction is not None and self.rate is None:
            raise ValueError(
                f"scenario {self.name}: the rate of capacity_fraction is not resolved (capacity.py)"
            )
        args = ["--scenario", self.name, "--connections", str(self.connections), "--warmup", str(self.warmup)]
        if self.duration_s is not None:
            args += ["--duration", _num(self.duration_s)]
        else:
            args += ["--orders", str(self.orders)]
        if self.rate is not None:
            args += ["--rate", _num(self.rate)]
        args += self.timeout_flags()
        if self.seed is not None:
            args += ["--seed", str(self.seed)]
        if self.interval_s is not None and client in roster_mod.default().having("intervals"):
            args += ["--interval-s", _num(self.interval_s)]
        return args

    def timeout_flags(self) -> list[str]:
        """The client flag of the per-request timeout; none leaves the client's default (1 s)."""
        return [] if self.timeout_ms is None else ["--timeout-ms", str(self.timeout_ms)]

    def with_overrides(
        self,
        orders: int | None = None,
        connections: int | None = None,
        rate: float | None = None,
        duration_s: float | None = None,
        warmup: int | None = None,
        interval_s: float | None = None,
    ) -> Scenario:
        """A copy with command-line overrides; --orders and --duration replace each other."""
        changes: dict[str, int | float | None] = {}  # Scenario's fields by name
        if orders is not None:
            changes.update(orders=orders, duration_s=None)
        if duration_s is not None:
            changes.update(duration_s=duration_s, orders=None)
        if connections is not None:
            changes["connections"] = connections
        if rate is not None:
            changes["rate"] = rate
        if warmup is not None:
            changes["warmup"] = warmup
        if interval_s is not None and self.soak:  # a soak's interval; other scenarios stay as they are
            changes["interval_s"] = interval_s
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> ScenarioRecord:
        d = dataclasses.asdict(self)
        d.pop("name")
        return cast(ScenarioRecord, d)


@dataclass(frozen=True)
class LinkProfile:
    """A network path for the network scenarios: veth only, or hft-linkem adding one-way
    delay ± uniform jitter and loss in each direction (hft/linkem/README.md)."""

    name: str
    emulate: bool = True  # False: veth only, no emulator (profile `none`)
    delay_us: float = 0.0  # one-way, each direction
    jitter_us: float = 0.0  # uniform ± around delay_us
    loss_pct: float = 0.0  # each frame lost with this probability (%)
    seed: int = 1  # of the emulator's jitter and loss stream
    spin_us: float = 0.0  # the emulator sleeps until this long before a release, then spins
    description: str = ""

    def to_dict(self) -> LinkRecord:
        d = dataclasses.asdict(self)
        d.pop("name")
        return cast(LinkRecord, d)


@dataclass(frozen=True)
class Suite:
    name: str
    scenarios: tuple[str, ...]
    clients: tuple[str, ...]
    description: str = ""
    # The gate's placement (placement.Placement.colocated): the server(s) (one worker each)
    # together on one CPU, client-hft busy-polling on another, so a closed loop of one
    # connection measures the server's work per order, not where the scheduler put threads.
    colocate: bool = False


@dataclass(frozen=True)
class Config:
    path: Path
    targets: dict[str, float]  # p50_us / p99_us (upper bounds), throughput_rps (lower bound)
    scenarios: dict[str, Scenario]
    suites: dict[str, Suite]
    links: dict[str, LinkProfile] = dataclasses.field(default_factory=dict)
    roster: roster_mod.Roster | None = None  # the clients the suites were checked against

    def suite(self, name: str) -> Suite:
        if name not in self.suites:
            raise UsageError(
                f"unknown suite {name!r}; valid suites: {', '.join(self.suites)} (see {self.path})"
            )
        return self.suites[name]

    def scenario(self, name: str) -> Scenario:
        if name not in self.scenarios:
            raise UsageError(
                f"unknown scenario {name!r}; valid scenarios: {', '.join(self.scenarios)} (see {self.path})"
            )
        return self.scenarios[name]


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else repr(float(x))


@functools.cache
def _schema() -> dict[str, Any]:
    return json.loads(_SCHEMA_FILE.read_text())


def _child(node: yaml.Node, key: str | int) -> tuple[yaml.Node, yaml.Node | None]:
    """(value node, key node) of `key` inside a mapping / sequence node; (node, None) if absent."""
    if isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            if k.value == key:
                return v, k
    elif isinstance(node, yaml.SequenceNode) and isinstance(key, int) and key < len(node.value):
        return node.value[key], None
    return node, None


def _node_at(root: yaml.Node, json_path: list[str | int]) -> yaml.Node:
    node = root
    for part in json_path:
        node, _ = _child(node, part)
    return node


def _check_duplicate_keys(path: Path, node: yaml.Node) -> None:
    if isinstance(node, yaml.MappingNode):
        seen: set[str] = set()
        for k, v in node.value:
            if k.value in seen:
                raise ConfigError(f"{_where(path, k)}: duplicate key {k.value!r}")
            seen.add(k.value)
            _check_duplicate_keys(path, v)
    elif isinstance(node, yaml.SequenceNode):
        for v in node.value:
            _check_duplicate_keys(path, v)


def _schema_error_message(path: Path, root: yaml.Node, err: jsonschema.ValidationError) -> str:
    json_path = list(err.absolute_path)
    node = _node_at(root, json_path)
    where = ".".join(str(p) for p in json_path) or "(top level)"
    if err.validator == "additionalProperties" and isinstance(err.instance, dict):
        allowed = set(err.schema.get("properties", {}))
        extra = [k for k in err.instance if k not in allowed]
        if extra and allowed:
            _, key_node = _child(node, extra[0])
            return (
                f"{_where(path, key_node or node)}: unknown key {extra[0]!r} in {where}; "
                f"allowed: {', '.join(sorted(allowed))}"
            )
    if err.validator == "anyOf" and json_path[-1:] == ["clients"]:
        return (
            f"{_where(path, node)}: {where}: {err.instance!r} is neither {ALL_CLIENTS} nor a non-empty "
            "list of distinct client names (bench-config/clients.yaml)"
        )
    if err.validator == "oneOf" and isinstance(err.instance, dict):
        both = "orders" in err.instance and "duration_s" in err.instance
        problem = "has both orders and duration_s" if both else "needs orders or duration_s"
        return f"{_where(path, node)}: scenario {where.split('.')[-1]!r} {problem} (exactly one)"
    return f"{_where(path, node)}: {where}: {err.message}"


def load(path: Path | str, roster: roster_mod.Roster | None = None) -> Config:
    """Read and validate the config file; raises ConfigError naming file:line:column. A
    suite's clients are checked against `roster` (default: the repository's clients.yaml)."""
    path = Path(path)
    text, root = yamlfile.compose(path, "config file", "pass --config FILE", ConfigError)
    data = yaml.safe_load(text)
    if root is None:
        raise ConfigError(f"{path}:1:1: the config file is empty")
    _check_duplicate_keys(path, root)

    validator = jsonschema.Draft202012Validator(_schema())
    errors = sorted(validator.iter_errors(data), key=lambda e: (len(e.absolute_path), list(map(str, e.path))))
    if errors:
        # The deepest error first names the exact field; report it and count the rest.
        err = max(errors, key=lambda e: len(e.absolute_path))
        more = f" (+{len(errors) - 1} more problems)" if len(errors) > 1 else ""
        raise ConfigError(_schema_error_message(path, root, err) + more)

    links = {name: LinkProfile(name=name, **spec) for name, spec in data.get("links", {}).items()}
    for name, link in links.items():
        if link.jitter_us > link.delay_us:
            node = _node_at(root, ["links", name, "jitter_us"])
            raise ConfigError(
                f"{_where(path, node)}: link {name!r} has jitter_us {link.jitter_us:g} > delay_us "
                f"{link.delay_us:g}; the jitter is ± around the delay, so keep it at most the delay"
            )
    scenarios = {name: Scenario(name=name, **spec) for name, spec in data["scenarios"].items()}
    for name, sc in scenarios.items():
        if sc.link is not None and sc.link not in links:
            node = _node_at(root, ["scenarios", name, "link"])
            raise ConfigError(
                f"{_where(path, node)}: scenario {name!r} names unknown link {sc.link!r}; "
                f"defined: {', '.join(links) or 'none (add a `links:` section)'}"
            )
    roster = roster or roster_mod.default()
    suites = {}
    for name, spec in data["suites"].items():
        clients = _suite_clients(path, root, name, spec["clients"], roster)
        for i, sc in enumerate(spec["scenarios"]):
            if sc not in scenarios:
                node = _node_at(root, ["suites", name, "scenarios", i])
                raise ConfigError(
                    f"{_where(path, node)}: suite {name!r} names unknown scenario {sc!r}; "
                    f"defined: {', '.join(scenarios)}"
                )
        writers = roster.having("intervals")
        for sc in spec["scenarios"]:
            blind = [c for c in clients if scenarios[sc].soak and c not in writers]
            if blind:
                node = _node_at(root, ["suites", name, "clients"])
                raise ConfigError(
                    f"{_where(path, node)}: suite {name!r} runs the soak {sc!r} with {', '.join(blind)}, "
                    f"which write no per-interval .hlog (only {', '.join(writers)} do): its drift "
                    "could not be read; give the soak its own suite of those clients"
                )
        suites[name] = Suite(
            name=name,
            scenarios=tuple(spec["scenarios"]),
            clients=clients,
            description=spec.get("description", ""),
            colocate=bool(spec.get("colocate", False)),
        )
    targets = dict(data["targets"])
    return Config(path=path, targets=targets, scenarios=scenarios, suites=suites, links=links, roster=roster)


def _suite_clients(
    path: Path, root: yaml.Node, suite: str, listed: str | list[str], roster: roster_mod.Roster
) -> tuple[str, ...]:
    """A suite's clients: `all` = the roster's, in its order; else each listed name must be in it."""
    if listed == ALL_CLIENTS:
        return roster.names
    for i, client in enumerate(listed):
        if client not in roster:
            node = _node_at(root, ["suites", suite, "clients", i])
            raise ConfigError(
                f"{_where(path, node)}: suite {suite!r} names {roster.unknown(client)}; "
                f"a new client is one line there (`clients: {ALL_CLIENTS}` runs every one)"
            )
    return tuple(listed)
