"""bench-config/gates.yaml: which metrics the gate tests, their thresholds and sample rules."""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .. import metrics, paths, yamlfile
from ..config import FLOOR
from ..errors import UsageError

GATES_SCHEMA_VERSION = 1

# The metrics gates.yaml may test (metrics.py): the percentiles, throughput and the error rate.
KNOWN = {m.name: m for m in metrics.GATEABLE}


# What each side's server alone spends per order, which a shared host cannot blur: judged
# wherever the series' latency is (where gates.yaml gates the metric at all).
SERVER_OWN = ("cpu_us_per_order", "memory_bytes_per_order")

# Why a metric of a series that gates.yaml's `series` guards on other metrics is reported only,
# where `reported` gives no reason naming its scenario.
OTHER_METRICS_GUARDED = "gates.yaml's series guards other metrics of it"

# ab's early look (rounds.Rounds.early): after 8 rounds a side it stops on a regression
# certain at alpha x EARLY_SHARE, and the usual looks keep alpha x (1 - EARLY_SHARE): the
# error rates stay alpha, and an obvious regression ends the session in half the rounds.
EARLY_SHARE = 1 / 31


@dataclass(frozen=True)
class MetricGate:
    name: str  # "p99_us": also the key in results and the store
    kind: str  # "quantile" | "throughput" | "errors"
    quantile: float | None  # 0.99 for p99_us
    # worse factor (latency, throughput, CPU), absolute rate increase (errors) or bytes per
    # order more than base (memory)
    threshold: float
    alpha: float  # significance level after Holm's correction
    gated: bool  # a regression here fails the gate
    min_samples: int  # per run, on both sides, or the metric is not gated
    min_repeats: int  # per side, or the verdict is inconclusive

    @property
    def lower_is_better(self) -> bool:
        return metrics.BY_NAME[self.name].lower_is_better


@dataclass(frozen=True)
class Gates:
    metrics: list[MetricGate]  # by importance
    confidence: float = 0.95
    bootstrap: int = 2000
    seed: int = 0
    source: str = "<defaults>"
    permutations: int = 2000  # random splits of the permutation test
    # fnmatch patterns of "scenario/client" the gate judges; None = every series. The
    # others are reported only (a scenario that measures the host's run queue, the floor).
    # A pattern may name one metric ("load/hft p50_us"): only that metric of the series,
    # with its error rate and server CPU per order (why_not_judged).
    series: tuple[str, ...] | None = None
    # "scenario/client" pattern -> why the series is reported only (gates.yaml `reported`), said
    # in the verdict's guard lines where `series` leaves it out.
    reported: dict[str, str] = field(default_factory=dict)

    looks: int = 1  # verdicts taken on growing data (ab's sequential rounds); see for_looks
    # The metric a soak's drift is tested on (drift.py): its threshold, alpha, min_samples
    # (per interval) and min_repeats (intervals per tenth); its `gated` decides the exit status.
    drift_metric: str = "p99_us"
    # This runner's calibration (calibration.py): "scenario/client metric" -> None when the
    # runner guards it, else why not. None (no record): `series` decides, as gates.yaml says.
    guards: dict[str, str | None] | None = None
    calibration: str | None = None  # the record's path, for the verdict
    # From the same record (judge/hidden.py): per injected kind, "series metric" -> the share of
    # its effect alone that this runner's design shows; the verdict says what it could not see.
    survival: dict[str, dict[str, float | None]] | None = None

    def spend(self, share: float) -> Gates:
        """These gates with every alpha times `share`: an early look's part of it
        (EARLY_SHARE), or what that leaves the usual looks (1 - EARLY_SHARE)."""
        return replace(self, metrics=[replace(m, alpha=m.alpha * share) for m in self.metrics])

    def for_looks(self, looks: int) -> Gates:
        """The gates for a comparison looked at `looks` times as runs are added (Bonferroni):
        every alpha divided by `looks`, the interval widened to 1 - (1 - confidence) / looks.
        Stopping as soon as a look is conclusive would otherwise raise both error rates."""
        if looks <= 1:
            return self
        return replace(
            self,
            metrics=[replace(m, alpha=m.alpha / looks) for m in self.metrics],
            confidence=1.0 - (1.0 - self.confidence) / looks,
            looks=looks,
        )

    def gates_series(self, scenario: str, client: str, metric: str | None = None) -> bool:
        """Whether a regression of this series (of `metric`, when given) fails the gate (the
        floor never does). Without `metric`: whether any metric of the series is gated."""
        if scenario == FLOOR:  # a yardstick of the host, never a series of the product
            return False
        if self.series is None:
            return True
        name = f"{scenario}/{client}"
        for pat in self.series:
            where, _, only = pat.partition(" ")
            if fnmatch.fnmatchcase(name, where) and (not only or metric is None or only == metric):
                return True
        return False

    def why_not_judged(self, scenario: str, client: str, metric: str) -> str | None:
        """None when a regression of this series' metric fails the gate, else why it does not:
        the floor never does; with a calibration record, what the runner can judge; else
        gates.yaml's `series`."""
        if scenario == FLOOR:
            return "the floor is a yardstick of the host, never a series of the product"
        if metric == "errors":  # failures are facts, not noise: judged on every series (failures.py)
            return None
        if self.guards is None:
            follows = metric in SERVER_OWN  # judged wherever the latency is
            if self.gates_series(scenario, client, None if follows else metric):
                return None
            name = f"{scenario}/{client}"
            if self.gates_series(scenario, client):
                # Its other metrics are guarded: a `reported` reason counts only where it names
                # the scenario (width-64c/*), not where a catch-all ("*") covers every series.
                why = self.reported_reason(name, naming_the_scenario=True)
                return f"reported only: {why or OTHER_METRICS_GUARDED}"
            why = self.reported_reason(name)
            return f"reported only: {why}" if why else "reported only: not in gates.yaml's series"
        series, key = f"{scenario}/{client}", f"{scenario}/{client} {metric}"
        if metric in SERVER_OWN and key not in self.guards:
            # A record without a row of its own for the server's CPU or memory per order (made
            # before calibrate judged them): they follow the series' latency. Where the record
            # has one, its own verdict stands: a row the solo pairs do not show whole is reported.
            guarded = any(k.startswith(f"{series} ") and why is None for k, why in self.guards.items())
            return None if guarded else "no metric of this series is guarded on this runner"
        return self.guards.get(key, "not calibrated on this runner (hftbench calibrate)")

    def reported_reason(self, series: str, *, naming_the_scenario: bool = False) -> str | None:
        """Why gates.yaml's `reported` reports this "scenario/client" only: the first pattern
        that matches it (with `naming_the_scenario`, only a pattern whose scenario part has no
        wildcard), else None."""
        for pattern, why in self.reported.items():
            if naming_the_scenario and any(c in pattern.partition("/")[0] for c in "*?["):
                continue
            if fnmatch.fnmatchcase(series, pattern):
                return why
        return None

    def metric(self, name: str) -> MetricGate:
        for m in self.metrics:
            if m.name == name:
                return m
        raise KeyError(name)


def load_gates(path: Path | str | None = None) -> Gates:
    """Read and validate gates.yaml (default: beside the scenarios.yaml in use, from
    $HFTBENCH_ROOT or the current repository); every error names the file, the key and the fix."""
    path = Path(path) if path else paths.gates_file()
    doc = yamlfile.read(path, "gates file", "pass --gates bench-config/gates.yaml")
    return parse_gates(doc, str(path))


def parse_gates(doc: Any, source: str) -> Gates:
    if not isinstance(doc, dict):
        raise UsageError(f"{source}: expected a mapping with 'metrics'")
    version = doc.get("schema_version")
    if version != GATES_SCHEMA_VERSION:
        raise UsageError(f"{source}: schema_version {version!r}; this hftbench reads {GATES_SCHEMA_VERSION}")
    metrics_doc = doc.get("metrics")
    if not isinstance(metrics_doc, dict) or not metrics_doc:
        raise UsageError(f"{source}: 'metrics' must map metric names ({', '.join(KNOWN)}) to settings")
    metrics = [_metric(name, spec, source) for name, spec in metrics_doc.items()]
    confidence = _number(doc, "confidence", source, 0.95)
    if not 0.5 <= confidence < 1:
        raise UsageError(f"{source}: confidence must be in [0.5, 1) (got {confidence}); e.g. 0.95")
    boot = int(_number(doc, "bootstrap", source, 2000))
    if boot < 100:
        raise UsageError(f"{source}: bootstrap must be >= 100 replicates (got {boot}); e.g. 2000")
    perms = int(_number(doc, "permutations", source, 2000))
    if perms < 200:
        raise UsageError(f"{source}: permutations must be >= 200 splits (got {perms}); e.g. 2000")
    seed = int(_number(doc, "seed", source, 0))
    series = doc.get("series")
    if series is not None and (
        not isinstance(series, list) or not series or not all(isinstance(x, str) and "/" in x for x in series)
    ):
        raise UsageError(
            f"{source}: series must be a list of 'scenario/client' patterns, each optionally followed "
            f"by one metric (got {series!r}); e.g. [latency-1c/*, load/hft p50_us]"
        )
    for pat in series or []:
        _, _, only = pat.partition(" ")
        if only and only not in {m.name for m in metrics}:
            raise UsageError(f"{source}: series {pat!r} names {only!r}, not a metric of 'metrics'")
    reported = doc.get("reported", {})
    if not isinstance(reported, dict) or not all(isinstance(v, str) for v in reported.values()):
        raise UsageError(
            f"{source}: reported must map 'scenario/client' patterns to the reason they are reported "
            f"only (got {reported!r}); e.g. {{latency-8c/hft: the duet magnifies it}}"
        )
    drift_doc = doc.get("drift", {})
    drift_metric = drift_doc.get("metric", "p99_us") if isinstance(drift_doc, dict) else None
    if drift_metric not in {m.name for m in metrics if m.kind == "quantile"}:
        raise UsageError(
            f"{source}: drift.metric must name a quantile metric of 'metrics' "
            f"(got {drift_metric!r}); e.g. p99_us"
        )
    return Gates(
        metrics=metrics,
        confidence=confidence,
        bootstrap=boot,
        seed=seed,
        source=source,
        permutations=perms,
        series=tuple(series) if series else None,
        reported=dict(reported),
        drift_metric=drift_metric,
    )


def _metric(name: str, spec: Any, source: str) -> MetricGate:
    where = f"{source}: metrics.{name}"
    if name not in KNOWN:
        raise UsageError(f"{where}: unknown metric; known: {', '.join(KNOWN)}")
    if not isinstance(spec, dict):
        raise UsageError(f"{where}: expected a mapping (threshold, alpha, gated, min_samples, min_repeats)")
    known = KNOWN[name]
    kind, quantile = known.kind, known.quantile
    # The quantile is the metric's (metrics.py); gates.yaml may state it, but not change it.
    if "quantile" in spec and spec["quantile"] != quantile:
        what = f"is the {quantile} quantile; set {quantile}" if quantile is not None else "has no quantile"
        raise UsageError(f"{where}.quantile is {spec['quantile']!r}, but {name} {what}, or leave it out")
    threshold = _number(spec, "threshold", where)
    if kind == "errors" and not 0 <= threshold < 1:
        raise UsageError(f"{where}.threshold is an error-rate increase in [0, 1) (got {threshold})")
    if kind == "memory" and threshold <= 0:
        raise UsageError(
            f"{where}.threshold is bytes per order more than base, > 0 (got {threshold}); e.g. 32"
        )
    if kind not in ("errors", "memory") and threshold < 1:
        raise UsageError(f"{where}.threshold is a worse factor >= 1 (got {threshold}); e.g. 1.10 for 10%")
    alpha = _number(spec, "alpha", where, 0.01)
    if not 0 < alpha < 0.5:
        raise UsageError(f"{where}.alpha must be in (0, 0.5) (got {alpha}); e.g. 0.01")
    gated = spec.get("gated", True)
    if not isinstance(gated, bool):
        raise UsageError(f"{where}.gated must be true or false (got {gated!r})")
    min_samples = int(_number(spec, "min_samples", where, 1))
    min_repeats = int(_number(spec, "min_repeats", where, 3))
    if min_repeats < 2:
        raise UsageError(f"{where}.min_repeats must be >= 2 (got {min_repeats}): one run has no spread")
    return MetricGate(
        name=name,
        kind=kind,
        quantile=quantile,
        threshold=threshold,
        alpha=alpha,
        gated=gated,
        min_samples=min_samples,
        min_repeats=min_repeats,
    )


def _number(doc: dict, key: str, where: str, default: float | None = None) -> float:
    value = doc.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise UsageError(f"{where}.{key} must be a number (got {value!r})")
    return float(value)
