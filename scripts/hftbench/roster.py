"""bench-config/clients.yaml: the load clients, the one list every reader takes them from.

Readers: config.py (a suite's clients, `clients: all`, who may run a soak), plan.py and cell.py
(bin/client-<name>, `make build-<name>`), placement.py (who pins threads),
clients/tests/conformance.py and clients/bench/throughput.py. bench-config/tests/test_roster_agreement.py
checks that result.schema.json's `client` pattern and the Makefile agree with it. Every problem
is reported as `file:line:column: problem`, like config.py's.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from . import yamlfile
from .errors import UsageError
from .yamlfile import where as _where

# The roster of this package's own repository, not of a --config file's or $HFTBENCH_ROOT's:
# it says which clients this code knows how to run (their flags), so it travels with the code,
# as scenarios.schema.json does.
ROSTER_FILE = Path(__file__).resolve().parents[2] / "bench-config" / "clients.yaml"
# A name becomes bin/client-<name>, `make build-<name>` and HAVE_<NAME>_CLIENT: keep it plain.
_NAME = re.compile(r"^[a-z][a-z0-9]*$")
RESERVED = ("floor",)  # bin/hft-floor's rows (config.FLOOR): not a client


class RosterError(UsageError):
    """A malformed roster; the message starts with file:line:column."""


@dataclass(frozen=True)
class Client:
    name: str
    folder: str  # its sources, from the repository root (the Makefile's HAVE_ line looks there)
    language: str
    throughput_goal: float  # least req/s as a share of wrk's (clients/bench/throughput.py)
    pins_threads: bool = False  # takes --cpus LIST and --busy-poll (placement.py)
    intervals: bool = False  # takes --interval-s: its .hlog shows a soak's drift (config.py)
    duet: bool = False  # takes --duet-url: each order to one of two servers (measure/duet.py)
    probes_capacity: bool = False  # the closed loop the capacity probe runs (measure/capacity.py)

    @property
    def binary(self) -> str:
        """Its file in bin/ (Contract 2)."""
        return f"client-{self.name}"

    @property
    def make_target(self) -> str:
        """The Makefile target that installs bin/client-<name>."""
        return f"build-{self.name}"


_FIELDS: dict[str, tuple[type | tuple[type, ...], bool]] = {  # key: (type, required)
    "folder": (str, True),
    "language": (str, True),
    "throughput_goal": ((int, float), True),
    "pins_threads": (bool, False),
    "intervals": (bool, False),
    "duet": (bool, False),
    "probes_capacity": (bool, False),
}


@dataclass(frozen=True)
class Roster:
    path: Path
    clients: tuple[Client, ...]  # in report order

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.clients)

    def __contains__(self, name: object) -> bool:
        return name in self.names

    def __getitem__(self, name: str) -> Client:
        for c in self.clients:
            if c.name == name:
                return c
        raise KeyError(name)

    def having(self, flag: str) -> tuple[str, ...]:
        """The clients whose boolean `flag` (pins_threads, intervals, duet, ...) is true."""
        return tuple(c.name for c in self.clients if getattr(c, flag))

    def the_one(self, flag: str) -> str:
        """The client whose ability `flag` is (duet, probes_capacity: one client each); a
        RosterError naming the file when none or several have it."""
        found = self.having(flag)
        if len(found) != 1:
            have = ", ".join(found) or "none"
            raise RosterError(f"{self.path}: exactly one client must have {flag}: true (found: {have})")
        return found[0]

    def unknown(self, name: str) -> str:
        """The message for a name not in the roster, naming the valid ones and the file."""
        return f"unknown client {name!r}; valid clients: {', '.join(self.names)} (the roster: {self.path})"


def _pairs(path: Path, node: yaml.Node, what: str) -> list[tuple[yaml.Node, yaml.Node]]:
    """A mapping node's (key, value) nodes; RosterError when it is no mapping or repeats a key."""
    if not isinstance(node, yaml.MappingNode):
        raise RosterError(f"{_where(path, node)}: {what} must be a mapping")
    seen: set[str] = set()
    for k, _ in node.value:
        if k.value in seen:
            raise RosterError(f"{_where(path, k)}: duplicate key {k.value!r} in {what}")
        seen.add(k.value)
    return node.value


def _value(node: yaml.Node) -> Any:
    """A value node as Python (int, float, bool, str); keys are read as written, from the nodes."""
    return yaml.safe_load(yaml.serialize(node))


def _client(path: Path, key: yaml.Node, node: yaml.Node) -> Client:
    name = key.value
    if not _NAME.match(name) or name in RESERVED:
        raise RosterError(
            f"{_where(path, key)}: client name {name!r} must be lower-case letters and digits, "
            f"starting with a letter, and not {', '.join(RESERVED)} (it becomes bin/client-<name>)"
        )
    pairs = _pairs(path, node, f"client {name!r}")
    spec = {k.value: _value(v) for k, v in pairs}
    for k, _ in pairs:
        if k.value not in _FIELDS:
            raise RosterError(
                f"{_where(path, k)}: unknown key {k.value!r} in client {name!r}; "
                f"allowed: {', '.join(_FIELDS)}"
            )
    for field, (kind, required) in _FIELDS.items():
        value_node = next((v for k, v in pairs if k.value == field), None)
        if value_node is None:
            if required:
                raise RosterError(f"{_where(path, node)}: client {name!r} needs {field!r}")
            continue
        value = spec[field]
        if not isinstance(value, kind) or (field == "throughput_goal" and isinstance(value, bool)):
            raise RosterError(f"{_where(path, value_node)}: {name}.{field}: {value!r} is the wrong type")
    if not 0 < spec["throughput_goal"] <= 2:
        node_goal = next(v for k, v in pairs if k.value == "throughput_goal")
        raise RosterError(f"{_where(path, node_goal)}: {name}.throughput_goal must lie in (0, 2]")
    return Client(name=name, **spec)


def load(path: Path | str = ROSTER_FILE) -> Roster:
    """Read and check the roster; RosterError naming file:line:column and the problem."""
    path = Path(path)
    _, root = yamlfile.compose(path, "client roster", "restore bench-config/clients.yaml", RosterError)
    if root is None:
        raise RosterError(f"{path}:1:1: the roster is empty; it needs schema_version: 1 and clients")
    top = dict((k.value, v) for k, v in _pairs(path, root, "the roster"))
    if set(top) != {"schema_version", "clients"} or _value(top["schema_version"]) != 1:
        raise RosterError(f"{_where(path, root)}: the roster has exactly schema_version: 1 and clients")
    pairs = _pairs(path, top["clients"], "clients")
    if not pairs:
        raise RosterError(f"{_where(path, top['clients'])}: clients is empty")
    clients = tuple(_client(path, k, v) for k, v in pairs)
    return Roster(path=path, clients=clients)


@functools.cache
def default() -> Roster:
    """The repository's roster, read once (lazily: a broken file fails the command that needs
    it with file:line, not every import)."""
    return load(ROSTER_FILE)
