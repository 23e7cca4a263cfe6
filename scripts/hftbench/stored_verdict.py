"""The history store's copy of a verdict (docs/history-store.md), as one type: `StoredVerdict`
(its `GatedRow`s and the dashboard's `ShownRow`s), built from a Verdict by
publish/store_text.py, kept by store/entry.py, read back by judge/creep.py, and read by the
dashboard's build by gh-pages/lib/stored-verdict.schema.json, which test_verdict_type holds
to these dataclasses.
Plain Python, like verdict.py."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any, cast

from .absent import ABSENT, known_fields
from .bisect_record import BisectStoredJson
from .store_shapes import StoredVerdictJson
from .verdict import Flag, Verdict


@dataclass
class GatedRow:
    """A gated row as the history store keeps it: its change, interval and MDE."""

    scenario: str
    client: str
    metric: str
    ratio: float | None = None
    ci: list[float] | None = None
    mde: float | None = None
    verdict: str | None = None

    @property
    def series(self) -> str:
        return f"{self.scenario}/{self.client}"


@dataclass
class ShownRow:
    """A row of the verdict's tables as the dashboard shows it: its cells' text, keyed by
    publish/verdict_cells.py COLUMNS; the other fields find the row and colour it."""

    scenario: str
    client: str
    metric: str
    gated: bool
    verdict: str
    cells: dict[str, str]


@dataclass
class StoredVerdict:
    """The history store's copy of a verdict (docs/history-store.md; publish/store_text.py builds it):
    what the dashboard and the creep watch read. A key added in a later version is ABSENT in an
    older entry."""

    status: str
    base: str | None  # the base commit, else its last run id
    partial: bool = ABSENT
    confidence: float | None = ABSENT  # the rows' interval level (judge/creep.py reads spreads)
    looks: int | None = ABSENT
    flags: list[Flag] = field(default_factory=list)
    gated: list[GatedRow] = ABSENT  # every gated series × metric
    bisect: BisectStoredJson = ABSENT  # verdict.json's bisect without its steps
    headline: str = ABSENT  # rendered once by verdict_text.headline
    columns: dict[str, str] = ABSENT  # column key -> label
    rows: list[ShownRow] = ABSENT

    def to_json(self) -> StoredVerdictJson:
        doc: dict[str, object] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if value is not ABSENT:
                doc[f.name] = [asdict(x) for x in value] if f.name in ("flags", "gated", "rows") else value
        return cast(StoredVerdictJson, doc)

    @classmethod
    def from_json(cls, d: StoredVerdictJson) -> StoredVerdict:
        lists = {"flags": Flag, "gated": GatedRow, "rows": ShownRow}
        known = known_fields(cls, d)
        for key, row in lists.items():
            if isinstance(known.get(key), list):
                known[key] = [row(**known_fields(row, x)) for x in known[key] if isinstance(x, dict)]
            elif key in known:
                del known[key]
        return cls(**{"status": None, "base": None, **known})


def read_any(d: dict[str, Any]) -> Verdict | StoredVerdict:
    """verdict.json or the store's copy of one, told apart by their `base` (an object in
    verdict.json, a commit in the store) and verdict.json's `results`."""
    return (
        Verdict.from_json(d)
        if isinstance(d.get("base"), dict) or "results" in d
        else StoredVerdict.from_json(d)
    )
