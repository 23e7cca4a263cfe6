"""results.json's recorded parts as types (results.py's docstring gives the whole file): the
host's fingerprint, the commit's git info, the server and its cgroup, each scenario's
parameters and a network cell's link stats. TypedDicts, as store_shapes.py is for the history
store: each part stays the dict json writes and reads, as the measure stage recorded it, and
results.py's Run and Cell hold them. Keys a later version added are optional; older files lack
them."""

from __future__ import annotations

from typing import TypedDict


class LinkDirection(TypedDict, total=False):
    """One direction of hft-linkem's exit stats (hft/linkem/README.md)."""

    frames: int
    bytes: int
    lost: int
    ring_full: int
    send_errors: int
    max_queued: int
    delay_us: dict[str, float]  # the applied one-way delay's percentiles ("p50", ...)
    lateness_us: dict[str, float]


class LinkStats(TypedDict, total=False):
    """A network cell's `link`: hft-linkem's stats, each direction."""

    a_to_b: LinkDirection
    b_to_a: LinkDirection


class GitInfo(TypedDict):
    """results.json's `git`: the measured commit (measure/fingerprint.py git_info, commit_info);
    each None where git could not say."""

    commit: str | None
    branch: str | None
    dirty: bool | None
    message: str | None
    author: str | None


class Knob(TypedDict, total=False):
    """One tuning knob as the tuning check reads it."""

    value: str | None
    status: str  # "tuned" | "not tuned" | "unknown" | …


class Tuning(TypedDict, total=False):
    """The fingerprint's `tuning`: the tuning script's JSON (its other keys kept), or the direct
    reading of /sys and /proc."""

    source: str
    knobs: dict[str, Knob]


class Fingerprint(TypedDict, total=False):
    """results.json's `fingerprint` (measure/fingerprint.py host); a run materialized from the
    history store carries only its `id`."""

    id: str
    hostname: str
    os: str
    kernel: str
    arch: str
    cpu_model: str | None
    cores: int | None
    memory_gib: float | None
    virtualization: str | None
    load_avg: list[float] | None
    tuning: Tuning
    placement: str  # pinned runs: where the server and clients ran (measure/placement.py)
    isolated_cpus: str  # older files: isolcpus at the top level


class LinkRecord(TypedDict, total=False):
    """A network scenario's `link_profile` in results.json (config.LinkProfile.to_dict)."""

    emulate: bool
    delay_us: float
    jitter_us: float
    loss_pct: float
    seed: int
    spin_us: float
    description: str


class ScenarioRecord(TypedDict, total=False):
    """results.json's `scenarios[name]`: the parameters used (config.Scenario.to_dict), with
    the link profile of a network scenario (measure/run.py)."""

    connections: int
    warmup: int
    orders: int | None
    duration_s: float | None
    rate: float | None
    timeout_ms: int | None
    seed: int | None
    description: str
    link: str | None
    interval_s: float | None
    capacity_fraction: float | None
    link_profile: LinkRecord


class CgroupRecord(TypedDict, total=False):
    """The `cgroup` of results.json's `server` (measure/cgroups.py): its group, or `none` and why."""

    path: str
    version: int
    memory_max_bytes: int
    pids_max: int
    note: str  # where hftbench moved the processes of the group it runs in
    none: str | None


class ServerRecord(TypedDict, total=False):
    """results.json's `server` (measure/server.Server.describe), with its cgroup and, in a
    duet, the slot it took (measure/duet.py)."""

    binary: str
    sha256: str | None
    version: str | None
    flags: list[str]
    url: str
    listen: str  # who bound the socket: the harness's fd, or "--addr" (an old build)
    cgroup: CgroupRecord
    duet_slot: str
