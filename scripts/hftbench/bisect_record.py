"""bisect's record (bisect.json; verdict.json's `bisect`, judge/bisect_steps.py `result`) as one
type: the culprit or the range between a good and a bad commit, why it is not narrower, the
culprit's effect and every step (BisectStep: commands/bisect.py measure_step builds one,
bisect_steps.table_row shows it). Plain Python, like verdict.py, which holds it."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import TypedDict, cast

from .absent import ABSENT, split_known

# The record's JSON (bisect.json, verdict.json's `bisect`), part by part: what to_json writes
# and from_json reads. Keys are optional (total=False) where a file of an older version may lack
# them: from_json fills the defaults. A key no type here knows is kept and written back (`other`).


class CulpritJson(TypedDict):
    sha: str
    subject: str


# Functional form: `from` is a keyword.
EffectJson = TypedDict("EffectJson", {"ratio": float, "ci": list[float] | None, "from": str})


class StepComparisonJson(TypedDict, total=False):
    verdict: str
    ratio: float | None
    ci: list[float] | None
    mde: float | None
    reason: str | None


class BisectStepJson(TypedDict, total=False):
    commit: str
    subject: str
    good: str
    bad: str
    range: list[str]
    rounds: int
    vs_good: StepComparisonJson | None
    vs_bad: StepComparisonJson | None
    ends: StepComparisonJson | None
    decision: str
    seconds: float
    stopped: str
    reason: str


class BisectStoredJson(TypedDict, total=False):
    """The record as the history store keeps it (docs/history-store.md): without its steps."""

    status: str
    good: str
    bad: str
    culprit: CulpritJson | None
    reason: str | None
    series: str | None
    metric: str | None
    effect: EffectJson | None
    runner: str


class BisectRecordJson(BisectStoredJson, total=False):
    """bisect.json: the stored record and every step."""

    steps: list[BisectStepJson]


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

    def to_json(self) -> EffectJson:
        return {"ratio": self.ratio, "ci": self.ci, "from": self.source}


def _written(obj: StepComparison | BisectStep) -> dict[str, object]:
    """obj's fields in order, ABSENT ones left out, then the keys it kept unknown."""
    out = {f.name: getattr(obj, f.name) for f in fields(obj) if f.name != "other"}
    return {**{k: v for k, v in out.items() if v is not ABSENT}, **obj.other}


@dataclass
class StepComparison:
    """One of a step's comparisons on the bisected series × metric (vs good, vs bad, the ends)."""

    verdict: str  # answers.py
    ratio: float | None
    ci: list[float] | None
    mde: float | None = ABSENT  # absent where nothing was measured
    reason: str | None = None
    other: dict[str, object] = field(default_factory=dict)  # unknown keys: kept, unread

    def to_json(self) -> StepComparisonJson:
        return cast(StepComparisonJson, _written(self))

    @classmethod
    def from_json(cls, d: StepComparisonJson) -> StepComparison:
        known, other = split_known(cls, d)
        return cls(**{"verdict": None, "ratio": None, "ci": None, **known}, other=other)


@dataclass
class BisectStep:
    """A candidate measured interleaved with both ends until placed (or out of looks / time)."""

    commit: str
    subject: str
    good: str  # the range's ends it was measured against
    bad: str
    range: list[str]  # the known-good and known-bad commit before the step
    rounds: int = 0
    vs_good: StepComparison | None = None
    vs_bad: StepComparison | None = None
    ends: StepComparison | None = None  # bad against good in the same rounds
    decision: str = ""  # judge/bisect_steps.py GOOD | BAD | UNDECIDED
    seconds: float = 0.0
    stopped: str = ABSENT  # "time budget" when it ended undecided for time
    reason: str = ABSENT  # why undecided
    other: dict[str, object] = field(default_factory=dict)  # unknown keys: kept, unread

    def to_json(self) -> BisectStepJson:
        out = _written(self)
        for name in ("vs_good", "vs_bad", "ends"):
            if isinstance(out.get(name), StepComparison):
                out[name] = out[name].to_json()
        return cast(BisectStepJson, out)

    @classmethod
    def from_json(cls, d: BisectStepJson) -> BisectStep:
        known, other = split_known(cls, d)
        for name in ("vs_good", "vs_bad", "ends"):
            if isinstance(known.get(name), dict):
                known[name] = StepComparison.from_json(known[name])
        base = {"commit": None, "subject": "", "good": None, "bad": None, "range": []}
        return cls(**{**base, **known}, other=other)


@dataclass
class BisectRecord:
    status: str  # judge/bisect_steps.py CULPRIT | BETWEEN
    good: str  # the last commit without the slowdown
    bad: str  # the first commit with it (the culprit, when found)
    culprit: BisectCulprit | None  # when found
    steps: list[BisectStep] = ABSENT  # every step (the store keeps the record without them)
    reason: str | None = None  # why the range is not narrower, or what the culprit is
    series: str | None = None
    metric: str | None = None
    effect: BisectEffect | None = None
    runner: str = ABSENT  # combine: the pool's runner whose leg bisected
    other: dict[str, object] = field(default_factory=dict)  # keys this type does not know: kept, unread

    def to_json(self) -> BisectRecordJson:
        out: dict[str, object] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name != "other" and value is not ABSENT:
                out[f.name] = (
                    value.to_json()
                    if isinstance(value, BisectEffect)
                    else asdict(value)
                    if isinstance(value, BisectCulprit)
                    else [step.to_json() for step in value]
                    if f.name == "steps"
                    else value
                )
        return cast(BisectRecordJson, {**out, **self.other})

    def stored(self) -> BisectStoredJson:
        """The history store's copy (docs/history-store.md): the record without its steps."""
        return cast(BisectStoredJson, {k: v for k, v in self.to_json().items() if k != "steps"})

    @classmethod
    def from_json(cls, d: BisectRecordJson) -> BisectRecord:
        known, other = split_known(cls, d)
        if isinstance(known.get("culprit"), dict):
            known["culprit"] = BisectCulprit(known["culprit"].get("sha"), known["culprit"].get("subject"))
        eff = known.get("effect")
        if isinstance(eff, dict):
            known["effect"] = BisectEffect(eff.get("ratio"), eff.get("ci"), eff.get("from"))
        if isinstance(known.get("steps"), list):
            known["steps"] = [BisectStep.from_json(step) for step in known["steps"]]
        base = {"status": None, "good": None, "bad": None, "culprit": None}
        return cls(**{**base, **known}, other=other)
