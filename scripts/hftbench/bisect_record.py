"""bisect's record (bisect.json; verdict.json's `bisect`, judge/bisect_steps.py `result`) as one
type: the culprit or the range between a good and a bad commit, why it is not narrower, the
culprit's effect and every step. Plain Python, like verdict.py, which holds it. The steps stay
bisect's own records (commands/bisect.py measure_step: bisect_steps.table_row reads them)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any

from .absent import ABSENT


@dataclass
class BisectCulprit:
    sha: str
    subject: str


@dataclass
class BisectEffect:
    """The culprit's slowdown against good, and the comparison it comes from."""

    ratio: float
    ci: list[float] | None
    source: str  # "candidate vs good" | "bad vs good" (`from` in the file)

    def to_json(self) -> dict[str, Any]:
        return {"ratio": self.ratio, "ci": self.ci, "from": self.source}


@dataclass
class BisectRecord:
    status: str  # judge/bisect_steps.py CULPRIT | BETWEEN
    good: str  # the last commit without the slowdown
    bad: str  # the first commit with it (the culprit, when found)
    culprit: BisectCulprit | None  # when found
    steps: list[dict[str, Any]] = ABSENT  # every step (the store keeps the record without them)
    reason: str | None = None  # why the range is not narrower, or what the culprit is
    series: str | None = None
    metric: str | None = None
    effect: BisectEffect | None = None
    runner: str = ABSENT  # combine: the pool's runner whose leg bisected
    other: dict[str, Any] = field(default_factory=dict)  # keys this type does not know: kept

    def to_json(self) -> dict[str, Any]:
        out = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name != "other" and value is not ABSENT:
                out[f.name] = (
                    value.to_json() if isinstance(value, BisectEffect)
                    else asdict(value) if isinstance(value, BisectCulprit) else value
                )  # fmt: skip
        return {**out, **self.other}

    def stored(self) -> dict[str, Any]:
        """The history store's copy (docs/history-store.md): the record without its steps."""
        return {k: v for k, v in self.to_json().items() if k != "steps"}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> BisectRecord:
        names = {f.name for f in fields(cls)} - {"other"}
        known = {k: v for k, v in d.items() if k in names}
        if isinstance(known.get("culprit"), dict):
            known["culprit"] = BisectCulprit(known["culprit"].get("sha"), known["culprit"].get("subject"))
        eff = known.get("effect")
        if isinstance(eff, dict):
            known["effect"] = BisectEffect(eff.get("ratio"), eff.get("ci"), eff.get("from"))
        base = {"status": None, "good": None, "bad": None, "culprit": None}
        return cls(**{**base, **known}, other={k: v for k, v in d.items() if k not in names})
