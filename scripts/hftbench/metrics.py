"""The metric vocabulary, declared once: every surface (results, rows, report, csv, plots, GAB
export, history store, gates, verdict text, soak tables) names a metric from here.

A metric has a `name` (the key in targets, gates.yaml, results.csv, the history store and
verdict.json: "p99_us"), a `key` (the key in a client result's `latency_us`: "p99"), a
`quantile` for percentiles (0.99), a `label` for people ("P99"), a `unit`, and a direction
(`lower_is_better`). `fmt_us` and `fmt_rate` are the display formats of report.md and the
soak tables.
"""

from __future__ import annotations

from dataclasses import dataclass

QUANTILE = "quantile"  # a percentile of the pooled latency histogram
LATENCY = "latency"  # min, mean, stddev, max of the latency histogram
THROUGHPUT = "throughput"  # successful orders per second (series.py: pooled over repeats)
ERRORS = "errors"  # error rate: errors / (ok + errors)
CPU = "cpu"  # the server process's own CPU time per order it handled (results.Cell.server_cpu_s)
MEMORY = "memory"  # the server's resident memory grown per order it handled: judged as a difference
EXCEEDANCE = "exceedance"  # head's share of orders past base's quantile, over base's own (a comparison's)


@dataclass(frozen=True)
class Metric:
    name: str  # "p99_us": targets, gates.yaml, results.csv, the store, verdict.json
    key: str  # "p99": the key in a result's latency_us; "throughput" / "errors" otherwise
    kind: str  # QUANTILE | LATENCY | THROUGHPUT | ERRORS | CPU | MEMORY | EXCEEDANCE
    label: str  # "P99", for tables and charts
    unit: str  # "us" | "orders/s" | "ratio"
    quantile: float | None = None  # 0.99 for p99_us; None when not a percentile
    lower_is_better: bool = True  # latency and errors; throughput is the one higher-is-better

    @property
    def percent(self) -> float:
        """The quantile in percent (99.9 for p999_us), as samples.py and HdrHistogram take it."""
        if self.quantile is None:
            raise ValueError(f"{self.name} is not a percentile")
        return round(100.0 * self.quantile, 6)


def _q(key: str, quantile: float, label: str) -> Metric:
    return Metric(f"{key}_us", key, QUANTILE, label, "us", quantile)


P50 = _q("p50", 0.50, "P50")
P90 = _q("p90", 0.90, "P90")
P95 = _q("p95", 0.95, "P95")
P99 = _q("p99", 0.99, "P99")
P999 = _q("p999", 0.999, "P99.9")
P9999 = _q("p9999", 0.9999, "P99.99")
MIN = Metric("min_us", "min", LATENCY, "min", "us")
MEAN = Metric("mean_us", "mean", LATENCY, "mean", "us")
STDDEV = Metric("stddev_us", "stddev", LATENCY, "jitter (σ)", "us")
MAX = Metric("max_us", "max", LATENCY, "max", "us")
THROUGHPUT_RPS = Metric(
    "throughput_rps", "throughput", THROUGHPUT, "throughput", "orders/s", lower_is_better=False
)
ERROR_RATE = Metric("errors", "errors", ERRORS, "error rate", "ratio")
# Not a client's number: the server's CPU seconds over a cell / the orders it handled. Each
# side of a duet is its own process, so this is the one view the shared CPU cannot blur:
# work done after the reply, or paid by the other side, shows here (judge/compare.py).
CPU_PER_ORDER = Metric("cpu_us_per_order", "cpu_us_per_order", CPU, "server CPU per order", "us")
# Not a client's number either: the server's anonymous resident memory grown over a cell / the
# orders it handled (measure/memory.py). Judged as head − base in bytes, not as a ratio: base
# keeps about nothing per order (judge/memory.py).
MEMORY_PER_ORDER = Metric(
    "memory_bytes_per_order", "memory_bytes_per_order", MEMORY, "memory per order", "bytes"
)
# Not one run's number: a comparison's (judge/exceedance.py). Per round, head's share of its
# orders past the round's P99.9 (both sides' orders) over base's share; 2.0: of the round's
# slowest 0.1 %, head's outnumber base's 2 to 1. Its rows show each side's share.
P999_EXCEEDANCE = Metric("p999_exceedance", "p999_exceedance", EXCEEDANCE, "P99.9 exceedance", "share", 0.999)

PERCENTILES: tuple[Metric, ...] = (P50, P90, P95, P99, P999, P9999)
# A result's latency_us object, in its documented order (Contract 3).
LATENCY_US: tuple[Metric, ...] = (MIN, MEAN, STDDEV, *PERCENTILES, MAX)
ALL: tuple[Metric, ...] = (
    *LATENCY_US,
    THROUGHPUT_RPS,
    ERROR_RATE,
    CPU_PER_ORDER,
    MEMORY_PER_ORDER,
    P999_EXCEEDANCE,
)
BY_NAME: dict[str, Metric] = {m.name: m for m in ALL}
BY_KEY: dict[str, Metric] = {m.key: m for m in ALL}

# Subsets a surface shows; each is a choice of that surface, not a second vocabulary.
REPORT_COLUMNS: tuple[Metric, ...] = (P50, P90, P99, P999)  # report.md's per-scenario table
STORE_PERCENTILES: tuple[Metric, ...] = (P50, P90, P99, P999)  # history entries, GAB, stored runs
SOAK_PERCENTILES: tuple[Metric, ...] = (P50, P99, P999)  # a soak's per-interval tables and chart
TARGETS: tuple[Metric, ...] = (*PERCENTILES, MAX, THROUGHPUT_RPS)  # what scenarios.yaml may bound
GATEABLE: tuple[Metric, ...] = (
    *PERCENTILES,
    THROUGHPUT_RPS,
    ERROR_RATE,
    CPU_PER_ORDER,
    MEMORY_PER_ORDER,
    P999_EXCEEDANCE,
)  # what gates.yaml may test


def get(name_or_key: str) -> Metric:
    """A metric by its name ("p99_us") or its latency_us key ("p99")."""
    found = BY_NAME.get(name_or_key) or BY_KEY.get(name_or_key)
    if found is None:
        raise KeyError(f"unknown metric {name_or_key!r}; known: {', '.join(BY_NAME)}")
    return found


def label(name: str) -> str:
    """The label of a metric name, or the name itself when it is not one (a foreign key)."""
    m = BY_NAME.get(name) or BY_KEY.get(name)
    return m.label if m else name


def fmt_us(value: float | None) -> str:
    """123 µs, 1.23 ms, 12.3 ms; '–' for None."""
    if value is None:
        return "–"
    if value >= 1000:
        ms = value / 1000
        return f"{ms:.2f} ms" if ms < 10 else f"{ms:.1f} ms" if ms < 100 else f"{ms:,.0f} ms"
    return f"{value:.1f} µs" if value < 100 else f"{value:,.0f} µs"


def fmt_rate(value: float | None) -> str:
    """Orders per second, whole: 46,948; '–' for None."""
    return "–" if value is None else f"{value:,.0f}"


def fmt_bytes_per_order(value: float | None, *, signed: bool = False) -> str:
    """Bytes per order: '64.2 B', '+0.4 B', '1,234 B'; '–' for None."""
    if value is None or value != value:
        return "–"
    text = f"{value:+,.1f}" if signed else f"{value:,.1f}"
    if abs(value) >= 1000:
        text = f"{value:+,.0f}" if signed else f"{value:,.0f}"
    return f"{text} B"


def fmt_change(ratio: float | None) -> str:
    """A head/base ratio as a signed change: 1.138 -> '+13.8%'; '–' for None."""
    return "–" if ratio is None else f"{100 * (ratio - 1):+.1f}%"
