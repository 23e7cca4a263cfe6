"""The history store's JSON files as types (docs/history-store.md): what a reader gets back
from store/history.py and what store/entry.py builds; at the top, so the judge (sides, creep)
reads store entries by the same types. TypedDicts, so an entry stays the plain dict
json.dumps writes and json.loads reads (read_doc checks the parts a reader relies on); keys a
later version added are NotRequired, older files lack them.
"""

from __future__ import annotations

from typing import NotRequired, TypedDict

from .bisect_record import BisectStoredJson


class FlagJson(TypedDict):
    """verdict.Flag as JSON: a gated row whose verdict names a change."""

    scenario: str
    client: str
    metric: str
    ratio: float | None
    verdict: str


class GatedRowJson(TypedDict):
    """stored_verdict.GatedRow as JSON: a gated row's change, interval and MDE."""

    scenario: str
    client: str
    metric: str
    ratio: float | None
    ci: list[float] | None
    mde: float | None
    verdict: str | None


class ShownRowJson(TypedDict):
    """stored_verdict.ShownRow as JSON: a row as the dashboard shows it, its cells' text."""

    scenario: str
    client: str
    metric: str
    gated: bool
    verdict: str
    cells: dict[str, str]


class StoredVerdictJson(TypedDict):
    """An entry's `verdict`: stored_verdict.StoredVerdict.to_json() (its fields, the ABSENT ones
    left out; gh-pages/lib/stored-verdict.schema.json is the dashboard's reading of it)."""

    status: str
    base: str | None
    partial: NotRequired[bool]
    confidence: NotRequired[float | None]
    looks: NotRequired[int | None]
    flags: list[FlagJson]
    gated: NotRequired[list[GatedRowJson]]
    bisect: NotRequired[BisectStoredJson]
    headline: NotRequired[str]
    columns: NotRequired[dict[str, str]]
    rows: NotRequired[list[ShownRowJson]]


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
    verdict: StoredVerdictJson | None  # read back by StoredVerdict.from_json


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
