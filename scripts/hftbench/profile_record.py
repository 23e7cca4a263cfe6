"""verdict.json's `profile` (ab's differential profile, measure/profile.py) as one type: the
flame graph and the functions whose self time grew, or why there is none (`skipped`). Plain
Python, like verdict.py, which holds it."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import TypedDict, cast

from .absent import ABSENT, known_fields


@dataclass
class TopFunction:
    """A function whose share of self time grew from base to head, in percent of each side."""

    function: str
    base_self_pct: float
    head_self_pct: float
    added_self_pct: float


class TopFunctionJson(TypedDict):
    function: str
    base_self_pct: float
    head_self_pct: float
    added_self_pct: float


class ProfileRecordJson(TypedDict, total=False):
    """verdict.json's `profile`, as to_json writes it: every key optional (a skipped profile
    is {"skipped": why} and its runner)."""

    svg: str
    folded: dict[str, str]
    tool: str
    cpu_ms: dict[str, float]
    top: list[TopFunctionJson]
    round_p50_us: dict[str, dict[str, float | None]]
    skipped: str
    runner: str


@dataclass
class ProfileRecord:
    """One profiled, uncounted round a side (paths relative to ab's folder); only `skipped`
    when this machine could not profile."""

    svg: str = ABSENT  # the differential flame graph
    folded: dict[str, str] = ABSENT  # each side's folded stacks
    tool: str = ABSENT  # the perf and inferno command, in words
    cpu_ms: dict[str, float] = ABSENT  # each side's server CPU in its profiled round
    top: list[TopFunction] = field(default_factory=list)
    # Each side's profiled round's P50 against the median of its counted rounds.
    round_p50_us: dict[str, dict[str, float | None]] = ABSENT
    skipped: str = ABSENT  # why there is no profile (the verdict stands)
    runner: str = ABSENT  # combine: the pool's runner whose leg profiled

    def to_json(self) -> ProfileRecordJson:
        out: dict[str, object] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "top" and self.skipped is not ABSENT:
                continue  # a skipped profile is {"skipped": why} (and its runner)
            if value is not ABSENT:
                out[f.name] = [asdict(t) for t in value] if f.name == "top" else value
        return cast(ProfileRecordJson, out)

    @classmethod
    def from_json(cls, d: ProfileRecordJson) -> ProfileRecord:
        known = known_fields(cls, d)
        known["top"] = [TopFunction(**t) for t in known.get("top") or []]
        return cls(**known)
