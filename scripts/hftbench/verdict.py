"""verdict.json as one type: `Verdict`, built by the judge (judge/compare.py
`Comparison.verdict`), completed by the command that measured it (ab: refs and how it
measured; combine: the pool; bisect: the culprit), written by `to_json`, read back by
`from_json` (the texts, the issue sync, the history store; old files too). Its rows are the
judge's own: `MetricResult` (one series × metric) and `DriftResult` (a soak's drift).

The file's shape is a contract (docs/architecture.md, docs/history-store.md; the dashboard's build
reads it): `to_json` writes the keys and values verdict.json always had (compare's and ab's in
their old order too; combine's sections now in this type's order), and a key a verdict may
lack is `ABSENT` here, never written as null. Every reader takes a `Verdict`: verdict.json as
parsed is read through `Verdict.from_json` once, where the file comes in. Plain Python: the
texts and the issue sync import it on a bare hosted runner, without numpy or scipy.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, TypedDict, cast

from .absent import ABSENT, known_fields
from .answers import INCONCLUSIVE, NOT_GATED
from .bisect_record import BisectRecord
from .profile_record import ProfileRecord

SCHEMA_VERSION = 1


@dataclass
class MetricResult:
    """One series × metric of a comparison: the judge's row (judge/family.py fills it)."""

    scenario: str
    client: str
    metric: str  # gates.yaml name: "p99_us", "throughput_rps", "errors"
    gated: bool  # counts for the exit status (gates.yaml gated, enough samples, a gated scenario)
    base_runs: int
    head_runs: int
    min_samples: int  # fewest samples in one run, both sides
    threshold: float | None = None  # gates.yaml's smallest effect that matters, for the text
    verdict: str = INCONCLUSIVE  # REGRESSION | IMPROVEMENT | NO_CHANGE | INCONCLUSIVE | NOT_GATED
    # head / base (errors: head rate / base rate, None when base is 0; memory_bytes_per_order:
    # None, a difference: head_value - base_value, and ci, mde, fails_at in bytes per order)
    ratio: float | None = None
    ci: tuple[float, float] | None = None  # bootstrap interval of the ratio (None: not computed)
    p_value: float | None = None  # permutation test over runs, two-sided, uncorrected
    p_adjusted: float | None = None  # Holm over the family (gated or reported-only)
    base_value: float | None = None  # pooled quantile (us), pooled throughput (series.py), mean error rate
    head_value: float | None = None
    reason: str | None = None  # why not gated / inconclusive, in words
    # Why not gated, kept apart: an ungated row's verdict may put its own reason in `reason`.
    why_not_gated: str | None = None
    # Smallest worse factor this comparison would flag with 80 % power (1.06 = +6 %);
    # None when not tested, inf when these runs cannot reach significance at all.
    mde: float | None = None
    settle_runs: int | None = None  # inconclusive: runs per side that would likely decide it
    # Smallest worse factor for which the gate *fails* with 80 % power (significant and beyond
    # the threshold: rules.gate_detectable_effect): the verdict's "could detect". `mde` above
    # is the bar of significance alone (calibrate guards a row by it).
    fails_at: float | None = None

    @property
    def series(self) -> str:
        return f"{self.scenario}/{self.client}"

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> MetricResult:
        """A row as written (a row of an old file or a test may lack the counts: 0)."""
        return cls(**{**_COUNTS, **known_fields(cls, d, tuples=("ci",))})


@dataclass
class DriftResult:
    """P99 of the last tenth against the first, one soak series (all its repeats pooled)."""

    scenario: str
    client: str
    metric: str  # the gates.yaml metric tested: "p99_us"
    gated: bool  # counts for the exit status
    first_intervals: int  # intervals in the first tenth (the test's "base runs")
    last_intervals: int
    min_samples: int  # fewest samples in one of those intervals
    threshold: float | None = None
    verdict: str = NOT_GATED  # REGRESSION (drifted) | IMPROVEMENT | NO_CHANGE | INCONCLUSIVE | NOT_GATED
    ratio: float | None = None  # last tenth / first tenth
    ci: tuple[float, float] | None = None
    p_value: float | None = None
    p_adjusted: float | None = None  # Holm over the soak series of this comparison
    first_value: float | None = None  # pooled P99 of the first tenth, us
    last_value: float | None = None
    mde: float | None = None
    reason: str | None = None
    rss_growth_mib_per_h: float | None = None  # Theil-Sen slope of the server's RSS (reported only)
    rss_growth_ci: tuple[float, float] | None = None

    @property
    def series(self) -> str:
        return f"{self.scenario}/{self.client}"

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> DriftResult:
        counts = {"gated": False, "first_intervals": 0, "last_intervals": 0, "min_samples": 0}
        return cls(**{**counts, **known_fields(cls, d, tuples=("ci", "rss_growth_ci"))})


@dataclass
class Flag:
    """A gated row whose verdict names a change (regression, improvement, slower, faster),
    or a soak's drift that regressed (metric "<name>_drift")."""

    scenario: str
    client: str
    metric: str
    ratio: float | None
    verdict: str


@dataclass
class Unguarded:
    """A metric gates.yaml gates that this comparison could not judge, and why."""

    series: str
    metric: str
    why: str


@dataclass
class Design:
    name: str  # designs.py: "unpaired", "paired", "duet"
    units: str  # what the tests resample, in words


class SideRefsJson(TypedDict, total=False):
    """verdict.json's `base` and `head`: SideRefs as written (an older file lacks some keys)."""

    runs: int
    run_ids: list[str]
    commit: str | None
    branch: str | None
    runner: str | None
    ref: str | None


@dataclass
class SideRefs:
    """What was measured on one side: its runs and the commit they built."""

    runs: int
    run_ids: list[str]
    commit: str | None = None
    branch: str | None = None
    runner: str | None = None  # the runner's fingerprint id
    ref: str | None = ABSENT  # the name ab showed for it (ab, combine)

    @classmethod
    def from_json(cls, d: SideRefsJson | None) -> SideRefs:
        d = d or {}
        return cls(**{"runs": len(d.get("run_ids") or []), "run_ids": [], **known_fields(cls, d)})


@dataclass
class Sandbox:
    """Where the head's code ran (measure/sandbox.py Policy)."""

    head: str  # "bubblewrap" or "none"
    note: str  # the sentence the verdict says about it


@dataclass
class AbSection:
    """How ab measured (verdict.json's `ab`)."""

    rounds_per_side: int | None = None  # counted rounds a side
    design: str | None = None  # designs.py: "duet", "paired-rounds"
    order: str | None = None  # in words: how base and head took turns
    block_s: float = ABSENT  # duet only: one block of a round's .hlog (measure/duet.py)
    measure_s: float | None = None  # seconds measuring, builds excluded
    build_s: dict[str, float] = field(default_factory=dict)  # seconds building, by side
    server_flags: dict[str, str] = field(default_factory=dict)  # each side's server flags, shell-quoted
    sandbox: Sandbox | None = None  # where the head's code ran
    capacity_rps: int = ABSENT  # the load the open-loop scenarios were set from (measure/capacity.py)

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not ABSENT}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> AbSection:
        known = known_fields(cls, d)
        box = known.get("sandbox")
        if isinstance(box, dict):
            known["sandbox"] = Sandbox(str(box.get("head") or "none"), str(box.get("note") or ""))
        return cls(**known)


class BuildTimeoutJson(TypedDict):
    """verdict.json's `build_timeout`: BuildTimeout's fields."""

    side: str
    commit: str
    timeout_s: float
    log: str
    why: str


@dataclass
class BuildTimeout:
    """A side whose build did not finish in ab's --build-timeout (measure/worktrees.py): killed
    with every process it started, no round measured. The head's makes the verdict a
    regression; base's makes the comparison invalid."""

    side: str  # "base" or "head"
    commit: str
    timeout_s: float
    log: str  # the build's output, as ab's folder has it: "head/build.log"
    why: str  # the headline's words: "head's build did not finish in 900 s: …"

    def to_json(self) -> BuildTimeoutJson:
        return cast(BuildTimeoutJson, asdict(self))

    @classmethod
    def from_json(cls, d: BuildTimeoutJson) -> BuildTimeout:
        return cls(
            **{"side": "", "commit": "", "timeout_s": 0.0, "log": "", "why": "", **known_fields(cls, d)}
        )


@dataclass
class SeenRow:
    """What one runner of a pool saw of a row (judge/pooled.py): its own ratio and its weight."""

    series: str
    metric: str
    ratio: float | None
    gated: bool
    weight: float  # 0: not used for the pooled row
    weight_from: str  # strata.CALIBRATED or strata.EQUAL


@dataclass
class PoolRunner:
    """One runner's leg of a pool (commands/combine.py pool_doc)."""

    name: str
    state: str  # judge/pooled.py: COMPLETE, INTERRUPTED, FAILED, MISSING, OTHER_REFS, REFUSED
    why: str | None
    runner: str | None  # its fingerprint id, as its leg's verdict says
    verdict: str | None  # its leg's own status
    rounds_per_side: int | None
    measure_s: float | None
    calibration: str | None  # the calibration record's sha256 (pool.yaml), or None
    rows: list[SeenRow]
    calibrated_mde: dict[str, float] | None
    optional: bool  # pool.yaml: the check may pass without it


@dataclass
class Alone:
    """A complete runner's own regression of a gated row (judge/pooled.py own_regressions)."""

    runner: str
    series: str
    metric: str
    ratio: float | None  # its own test's
    ci: list[float] | None
    p_adjusted: float | None
    pooled_ratio: float | None
    pooled_verdict: str
    decided: bool  # the pooled test alone would not have said regression


@dataclass
class PoolCheck:
    passes: bool
    why: list[str]  # why the pool's check fails whatever the verdict


@dataclass
class PoolSection:
    """verdict.json's `pool` (combine): who took part, what each saw, who is missing."""

    runners: list[PoolRunner]
    missing: list[str]
    partial: bool
    alone: list[Alone]
    check: PoolCheck

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> PoolSection:
        runners = [
            PoolRunner(
                **{
                    **known_fields(PoolRunner, r),
                    "rows": [SeenRow(**known_fields(SeenRow, x)) for x in r.get("rows") or []],
                }
            )
            for r in d.get("runners") or []
        ]
        check = d.get("check") or {}
        return cls(
            runners,
            list(d.get("missing") or []),
            bool(d.get("partial")),
            [Alone(**known_fields(Alone, a)) for a in d.get("alone") or []],
            PoolCheck(bool(check.get("passes", True)), list(check.get("why") or [])),
        )


@dataclass
class Verdict:
    """verdict.json. Fields in the file's order; the sections after `drift` are the
    commands' (ABSENT where a command did not add them)."""

    status: str  # answers.py: the worst answer over the gated rows (invalid: base failed, or unjudged)
    # The process's: 1 on a regression, an invalid comparison, or an undecided gated row whose
    # estimate lies beyond its threshold (combine: 3 when the pool's check fails)
    exit_code: int
    gates: str  # gates.yaml, as shown
    confidence: float | None  # the rows' interval level, after the looks (None: an old file's)
    looks: int | None  # verdicts taken on growing data (ab's sequential rounds; None: an old file's)
    design: Design
    calibration: str | None  # the calibration record's path, or None
    guarded: list[str]  # "series metric" of every gated row
    unguarded: list[Unguarded]
    suite: str | None
    base: SideRefs
    head: SideRefs
    flags: list[Flag]
    results: list[MetricResult]
    drift: list[DriftResult] = field(default_factory=list)
    # What each injected kind's effect this design shows (judge/hidden.py), when calibrated.
    survival: dict[str, dict[str, float | None]] | None = ABSENT
    schema_version: int = SCHEMA_VERSION
    partial: bool = ABSENT  # interrupted (ab) or a leg missing (combine)
    ab: AbSection = ABSENT  # how ab measured: rounds, design, seconds, flags, sandbox
    profile: ProfileRecord = ABSENT  # differential flame graph and top functions (profile.py)
    harness_changes: list[str] = ABSENT  # harness files the head changes (hftbench pr-leg)
    pool_leg: str | None = ABSENT  # the pool leg that wrote it (hftbench pr-leg, push-leg)
    bisect: BisectRecord = ABSENT  # the culprit or range (judge/bisect_steps.py)
    pool: PoolSection = ABSENT  # each runner's leg (commands/combine.py pool_doc)
    attachments: list[dict[str, str]] = ABSENT  # files the texts list: {"title", "path"}
    # Gated series that no row judged, and why: each makes the comparison invalid (compare.py).
    unjudged: list[str] = ABSENT
    build_timeout: BuildTimeout = ABSENT  # a side's build killed at ab's --build-timeout: no rounds
    # Keys this type does not know (a later version's): kept as read, written back after the rest.
    other: dict[str, object] = field(default_factory=dict)  # never read: written back as read

    HEAD_KEYS = (
        "schema_version",
        "status",
        "exit_code",
        "gates",
        "confidence",
        "looks",
        "design",
        "calibration",
        "survival",
        "guarded",
        "unguarded",
        "suite",
        "base",
        "head",
        "flags",
        "results",
        "drift",
    )
    SECTION_KEYS = (
        "partial",
        "ab",
        "profile",
        "harness_changes",
        "pool_leg",
        "bisect",
        "pool",
        "attachments",
        "unjudged",
        "build_timeout",
    )

    @property
    def shown_confidence(self) -> float:
        """The interval level the texts name (an old file without it: 95 %)."""
        return 0.95 if self.confidence is None else self.confidence

    @property
    def shown_looks(self) -> int:
        return 1 if self.looks is None else self.looks

    def gated_results(self) -> list[MetricResult]:
        return [r for r in self.results if r.gated]

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {}
        for key in (*self.HEAD_KEYS, *self.SECTION_KEYS):
            value = getattr(self, key)
            if value is ABSENT:
                continue
            if key in ("results", "drift"):
                value = [asdict(r) for r in value]
            elif key in ("ab", "profile", "bisect", "build_timeout"):
                value = value.to_json()
            elif key == "pool":
                value = asdict(value)
            elif key in ("design", "base", "head"):
                value = {k: v for k, v in asdict(value).items() if v is not ABSENT}
            elif key in ("unguarded", "flags"):
                value = [asdict(x) for x in value]
            doc[key] = value
        doc.update(self.other)
        return doc

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Verdict:
        """A verdict.json as written by any version (a missing list reads as empty)."""
        known = {*cls.HEAD_KEYS, *cls.SECTION_KEYS}
        typed = {
            "ab": AbSection,
            "profile": ProfileRecord,
            "bisect": BisectRecord,
            "pool": PoolSection,
            "build_timeout": BuildTimeout,
        }
        design = d.get("design") or {}
        return cls(
            schema_version=d.get("schema_version", SCHEMA_VERSION),
            status=d.get("status"),
            exit_code=d.get("exit_code", 0),
            gates=d.get("gates"),
            confidence=d.get("confidence"),
            looks=d.get("looks"),
            design=Design(design.get("name"), design.get("units")),
            calibration=d.get("calibration"),
            survival=d.get("survival", ABSENT),
            guarded=list(d.get("guarded") or []),
            unguarded=[Unguarded(**u) for u in d.get("unguarded") or []],
            suite=d.get("suite"),
            base=SideRefs.from_json(d.get("base")),
            head=SideRefs.from_json(d.get("head")),
            flags=[Flag(**known_fields(Flag, f)) for f in d.get("flags") or []],
            results=[MetricResult.from_json(r) for r in d.get("results") or []],
            drift=[DriftResult.from_json(r) for r in d.get("drift") or []],
            **{k: d[k] for k in cls.SECTION_KEYS if k in d and k not in typed},
            **{k: t.from_json(d[k]) for k, t in typed.items() if isinstance(d.get(k), dict)},
            other={k: v for k, v in d.items() if k not in known},
        )


_COUNTS = {"gated": False, "base_runs": 0, "head_runs": 0, "min_samples": 0}
