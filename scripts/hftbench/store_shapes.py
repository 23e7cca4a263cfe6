"""The history store's JSON files as types (docs/history-store.md): what a reader gets back
from store/history.py and what store/entry.py builds; at the top, so the judge (sides, creep)
reads store entries by the same types. TypedDicts, so an entry stays the plain dict
json.dumps writes and json.loads reads (read_doc checks the parts a reader relies on); keys a
later version added are NotRequired, older files lack them.
"""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict


class SeriesEntry(TypedDict):
    """One scenario × client of an entry: the merged histogram's numbers."""

    scenario: str
    client: str
    orders: int
    ok: int
    errors: int
    rounds: NotRequired[int]
    p50_us: float | None
    p90_us: float | None
    p99_us: float | None
    p999_us: float | None
    max_us: float | None
    spread: NotRequired[dict[str, list[float]]]  # metric name -> [lo, hi]
    histogram: str | None
    throughput_rps: float
    memory_bytes_per_order: NotRequired[float]


class RunEntry(TypedDict):
    """One commit's runs as one entry of a shard (entry.run_entry)."""

    run_id: str
    date: str | None
    commit: str | None
    branch: str | None
    message: str
    author: str | None
    url: str | None
    job_url: NotRequired[str | None]
    runner: str | None
    dirty: bool
    rounds: NotRequired[int]
    results: list[SeriesEntry]
    verdict: dict[str, Any] | None  # StoredVerdict.to_json(), read by StoredVerdict.from_json


class Shard(TypedDict):
    """shards/<suite>/<YYYY-MM>.json: one month of one suite, in date order."""

    schema_version: int
    suite: str
    month: str
    runs: list[RunEntry]


class SuiteIndex(TypedDict):
    shards: list[str]
    runs: int
    series: list[dict[str, str]]  # {"scenario", "client"}
    latest_run: str | None


class Index(TypedDict):
    """index.json: what the store holds."""

    schema_version: int
    updated_at: str | None
    suites: dict[str, SuiteIndex]
    branches: list[str]
    runners: dict[str, dict[str, str | int | bool | None]]  # runner id -> its stable fields, tuned


class ChangePoint(TypedDict):
    """A change point of one series × metric in one runner's runs (changepoints.json)."""

    run_id: str
    commit: str | None
    date: str | None
    runner: str | None
    index: int  # the first run of the new regime, in that runner's series
    before: float
    after: float
    change_pct: float
    p_value: float


class ChangePoints(TypedDict):
    """changepoints.json: recomputed whole after each add."""

    schema_version: int
    updated_at: str
    series: dict[str, list[ChangePoint]]  # "<suite>/<scenario>/<client>/<metric>" -> its points
