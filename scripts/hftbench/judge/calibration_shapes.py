"""calibration.json's parts as types (docs/architecture.md, "calibration.json"): what
calibration_draws.py tallies and analyses, calibration.py's guard rows, and the record
commands/calibrate.py writes around them, which publish/calibrate_text.py renders. TypedDicts,
because the record is the dict json writes: these name its keys, they change none of them. A
key marked NotRequired is missing from a record written before it was (the texts read it with
.get)."""

from __future__ import annotations

from typing import NotRequired, TypedDict

# Kolmogorov's D and the shares of A/A p-values under 0.01 and 0.05 (calibration.p_spread);
# {"n": 0} where none were read. Functional form: its keys hold dots.
PSpread = TypedDict(
    "PSpread",
    {
        "n": int,
        "below_0.01": NotRequired[float],
        "below_0.05": NotRequired[float],
        "ks_d": NotRequired[float],
    },
)


class _Counts(TypedDict):
    """A tally's counts: per status, per gated metric, and per "series metric"."""

    comparisons: int
    flagged: int
    statuses: dict[str, int]
    regression: dict[str, int]  # comparisons where this metric regressed somewhere
    no_change: dict[str, int]  # ... where every gated series said no change for it
    tested: dict[str, int]  # comparisons where the metric was gated somewhere
    series_regression: dict[str, int]
    series_tested: dict[str, int]
    series_no_change: dict[str, int]
    series_covered: dict[str, int]  # comparisons whose interval held 1 (A/A: coverage)
    series_passed: dict[str, int]  # read "no change" or "improvement"
    series_why_not: NotRequired[dict[str, str]]  # gated by gates.yaml, left out of the test: why


class Counting(_Counts):
    """A tally while the draws are counted: every MDE and p-value read, per "series metric"."""

    mde: dict[str, list[float]]
    series_p: dict[str, list[float]]


class Tally(_Counts):
    """A kind's tally as the record keeps it: the median MDE and the p-values' spread."""

    mde: dict[str, float]
    series_p: dict[str, PSpread]


class Lag1(TypedDict):
    """independence.lag1_autocorrelation of a row's rounds, in the order measured."""

    r: float
    se: float
    n: int
    significant: bool


class Evidence(TypedDict):
    """How independent a kind's draws are (calibration_draws.evidence)."""

    pool: int
    k: int
    distinct_draws: int
    rate: bool  # a rate over the draws may be stated (pool >= 3k)
    windows: Tally  # contiguous windows of k rounds, tallied as the draws are
    lag1: dict[str, Lag1]


class PoolOffset(TypedDict):
    """The whole A/A pool of a "series metric" judged as one comparison."""

    ratio: float
    p: float
    rounds: int


class SurvivalRow(TypedDict):
    """hidden.survival's row: a kind's effect alone against what the design shows of it."""

    alone: float
    alone_low: NotRequired[float]
    alone_high: NotRequired[float]
    pairs: NotRequired[int]
    design: float
    seen: float | None  # the share of the effect alone the design shows; None: no effect alone
    seen_low: NotRequired[float]  # its interval (hidden.seen_interval), where the share is above 0
    seen_high: NotRequired[float | None]  # None: unbounded (the effect alone's interval reaches 1)
    whole: NotRequired[bool]  # the solo pairs show the design does not magnify it


Survival = dict[str, dict[str, SurvivalRow]]  # kind -> "series metric" -> its row


class SurvivalRule(TypedDict):
    """What decided `whole`: the interval's level, the magnification allowed, the pairs needed."""

    confidence: float
    magnifies_beyond: float
    min_pairs: NotRequired[int]


class GuardRow(TypedDict):
    """calibration.guard_rows' row: a series × gated metric, guarded or not and why."""

    series: str
    metric: str
    false_alarms: float | None
    coverage: NotRequired[float | None]
    p_values: NotRequired[PSpread | None]
    mde: float | None
    guarded: bool
    why_not: str | None


class Analysis(TypedDict):
    """calibration_draws.analyse: the draws' tallies and what they decide."""

    tallies: dict[str, Tally]
    aa_pool: dict[str, PoolOffset]
    # kind -> "series metric" -> its effect, all rounds merged: a ratio head / base, or for a
    # difference metric (calibration_draws.DIFFERENCES: memory per order) head − base in its unit
    effects: dict[str, dict[str, float]]
    survival: Survival
    survival_rule: NotRequired[SurvivalRule]
    confidence: NotRequired[float]
    guards: list[GuardRow]
    as_judged: NotRequired[dict[str, Tally]]
    independence: NotRequired[dict[str, Evidence]]


class CalibrationRecord(Analysis):
    """calibration.json as commands/calibrate.py writes it: the run's settings around the analysis."""

    schema_version: int
    date: str
    suite: str
    design: str
    inject_delay_us: int | float | None  # µs, a decimal since the knob takes nanoseconds
    inject_stall_us: int | None
    inject_stall_every: int | None
    inject_after_reply_us: int | None
    inject_contention_us: int | None
    inject_leak_bytes: NotRequired[int | None]  # records from before the leak kind have none
    inject_width_us: NotRequired[int | float | None]  # ... and the width kind
    inject_width_connections: NotRequired[int | None]
    runs: dict[str, int]  # kind -> its rounds
    k: int
    looks: NotRequired[int]
    gates: str
    max_false_alarms: float
    price_of_duet: dict[str, dict[str, float]]
