"""A soak's drift: P99 of its last tenth against its first tenth, and its RSS growth (pure).

A soak is one long run whose client cuts the measured phase into intervals (`client-hft
--interval-s`, one `.hlog` line per interval). The question is not "is head slower than base"
but "did this run get slower as it went on", so the two sides of the gate's test are the
first and the last tenth of one soak, and the unit of replication is the *interval*: a run
has no siblings here, and inside an interval the latencies are as correlated as inside a
run (stats.py's reason for testing runs, not samples). Intervals of several seconds are long
against the host's hiccups, so neighbouring intervals are close to exchangeable under "no
drift"; the permutation test over intervals is then exact, as over runs. With the gate's
P99 rules per interval (min_samples: 100 samples beyond P99 in each interval; min_repeats:
intervals in each tenth) the soak's interval must be short enough to give each tenth
min_repeats intervals and long enough to give each one min_samples orders
(bench-config/scenarios.yaml `soak` says how its numbers meet both).

Everything else is the gate's (stats.py): the ratio of the pooled P99s, the permutation p,
the expanded bootstrap interval over intervals, `classify` with gates.yaml's p99_us
threshold and alpha (never widened), and the minimum detectable effect.

RSS growth is the Theil-Sen slope of the server's resident memory against time (robust to
the few samples a GC-like step or a burst puts off the line) with its 95 % interval, in MiB
per hour. It is reported, not gated: gates.yaml has no agreed threshold for memory.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from hdrh.histogram import HdrHistogram
from hdrh.log import HistogramLogReader

from .. import histograms, metrics, samples
from ..answers import INCONCLUSIVE
from ..verdict import DriftResult
from . import stats
from .gates import MetricGate
from .rules import classify, detectable_effect

if TYPE_CHECKING:
    from .gates import Gates
    from .sides import Side

SHORT_INTERVAL = 0.5  # an interval shorter than this share of the nominal one (the drain) is left out
TENTH = 0.1
RSS_CONFIDENCE = 0.95


@dataclass(frozen=True)
class Interval:
    """One untagged line of an .hlog: its start (s since the epoch), length, histogram."""

    start_s: float
    length_s: float
    histogram: str  # HdrHistogram V2 deflate base64, ns
    count: int


def read_intervals(hlog: Path) -> list[Interval]:
    """The untagged (corrected latency) intervals of an interval log, in order."""
    reader = HistogramLogReader(
        str(hlog), HdrHistogram(histograms.LOWEST_NS, histograms.HIGHEST_NS, histograms.SIGNIFICANT_DIGITS)
    )
    out = []
    try:
        while (hist := reader.get_next_interval_histogram()) is not None:
            if hist.get_tag() is not None:
                continue
            start = hist.get_start_time_stamp() / 1000.0
            length = (hist.get_end_time_stamp() - hist.get_start_time_stamp()) / 1000.0
            out.append(Interval(start, length, hist.encode().decode(), hist.get_total_count()))
    finally:
        reader.close()
    return out


def untagged_lines(hlog: Path) -> int:
    """How many untagged interval lines an .hlog has, without decoding them: a cheap
    "is this a soak" for the many one-interval logs a gate reads."""
    with open(hlog, encoding="utf-8", errors="replace") as f:
        return sum(1 for line in f if line[:1].isdigit())


def is_soak(intervals: Sequence[Interval]) -> bool:
    """More than one interval: the client was asked for --interval-s."""
    return len(intervals) > 1


def full_intervals(intervals: Sequence[Interval]) -> list[Interval]:
    """The intervals of (about) the nominal length: the last, partial one (the drain) is left out."""
    if not intervals:
        return []
    nominal = float(np.median([i.length_s for i in intervals]))
    return [i for i in intervals if i.length_s >= SHORT_INTERVAL * nominal]


def tenths(intervals: Sequence[Interval]) -> tuple[list[Interval], list[Interval]]:
    """The intervals of the first and the last tenth of the soak's time (by midpoint)."""
    full = full_intervals(intervals)
    if len(full) < 2:
        return [], []
    t0 = full[0].start_s
    t1 = full[-1].start_s + full[-1].length_s
    span = t1 - t0
    first = [i for i in full if i.start_s + i.length_s / 2 < t0 + TENTH * span]
    last = [i for i in full if i.start_s + i.length_s / 2 >= t1 - TENTH * span]
    return first, last


@dataclass
class IntervalRow:
    """One row of the soak's per-interval table."""

    start_s: float  # since the first interval's start
    length_s: float
    count: int
    p50_us: float | None  # None: the interval has too few samples for it (samples.DISPLAY rule)
    p99_us: float | None
    p999_us: float | None


def interval_rows(intervals: Sequence[Interval]) -> list[IntervalRow]:
    rows = []
    t0 = intervals[0].start_s if intervals else 0.0
    for i in intervals:
        h = histograms.decode(i.histogram)
        n = h.get_total_count()

        def pct(p: float, h=h, n=n) -> float | None:
            return h.get_value_at_percentile(p) / 1000.0 if n and samples.supports(n, p) else None

        rows.append(
            IntervalRow(i.start_s - t0, i.length_s, n, *(pct(m.percent) for m in metrics.SOAK_PERCENTILES))
        )
    return rows


@dataclass(frozen=True)
class DriftTest:
    """The test's raw answer, before Holm and the verdict."""

    ratio: float
    ci: tuple[float, float]
    p_value: float
    first_value_us: float
    last_value_us: float
    noise_log_sd: float
    smallest_p: float


def drift_test(
    first: Sequence[Interval],
    last: Sequence[Interval],
    quantile: float,
    *,
    n_perm: int,
    n_boot: int,
    confidence: float,
    rng: np.random.Generator,
) -> DriftTest:
    """The gate's quantile test with the first tenth's intervals as base and the last's as head."""
    g = histograms.grid([i.histogram for i in first], [i.histogram for i in last])
    qb = histograms.merged_quantile(g.values_ns, g.base, quantile)
    qh = histograms.merged_quantile(g.values_ns, g.head, quantile)
    perm = stats.permutation_quantile_test(g, quantile, n_perm=n_perm, rng=rng)
    reps = stats.bootstrap_ratio_replicates(g, quantile, n_boot=n_boot, rng=rng)
    ci = stats.ratio_interval(reps, confidence, min(len(first), len(last)))
    return DriftTest(
        ratio=qh / qb,
        ci=ci,
        p_value=perm.p_value,
        first_value_us=qb / 1000.0,
        last_value_us=qh / 1000.0,
        noise_log_sd=stats.log_sd(reps),
        smallest_p=perm.smallest_p,
    )


def drift_result(
    scenario: str,
    client: str,
    intervals_per_run: Sequence[Sequence[Interval]],
    m: MetricGate,
    *,
    gated: bool,
    n_perm: int,
    n_boot: int,
    confidence: float,
    rng: np.random.Generator,
) -> tuple[DriftResult, tuple[float, float] | None]:
    """Test one soak series (each repeat's tenths pooled). Returns the result, its verdict
    left to `assign_verdicts`, and the noise for the MDE (bootstrap sd of log ratio, smallest p)."""
    first: list[Interval] = []
    last: list[Interval] = []
    for intervals in intervals_per_run:
        f, la = tenths(intervals)
        first += f
        last += la
    fewest = min((i.count for i in [*first, *last]), default=0)
    res = DriftResult(
        scenario=scenario,
        client=client,
        metric=m.name,
        gated=gated,
        first_intervals=len(first),
        last_intervals=len(last),
        min_samples=fewest,
        threshold=m.threshold,
    )
    if not first or not last or fewest == 0:
        res.gated, res.reason = (
            False,
            "the soak's .hlog has too few full intervals (or an empty one) to split",
        )
        return res, None
    if fewest < m.min_samples:
        res.gated = False
        res.reason = (
            f"an interval recorded {fewest:,} latencies < min_samples {m.min_samples:,} (longer intervals)"
        )
        return res, None
    t = drift_test(first, last, m.quantile, n_perm=n_perm, n_boot=n_boot, confidence=confidence, rng=rng)
    res.ratio, res.ci, res.p_value = t.ratio, t.ci, t.p_value
    res.first_value, res.last_value = t.first_value_us, t.last_value_us
    return res, (t.noise_log_sd, t.smallest_p)


def assign_verdicts(results: Sequence[tuple[DriftResult, tuple[float, float] | None]], m: MetricGate) -> None:
    """Holm over the tested soak series, the MDE at Holm's first level, then each verdict."""
    tested = [(r, noise) for r, noise in results if r.p_value is not None and noise is not None]
    adjusted = stats.holm([r.p_value for r, _ in tested])
    for (r, (sd, smallest_p)), adj in zip(tested, adjusted, strict=True):
        r.p_adjusted = adj
        r.mde = detectable_effect(sd, m.alpha / len(tested), smallest_p=smallest_p)
        fewest = min(r.first_intervals, r.last_intervals)
        if fewest < m.min_repeats:
            r.verdict = INCONCLUSIVE
            r.reason = (
                f"{fewest} intervals in a tenth < min_repeats {m.min_repeats} "
                "(shorter intervals or a longer soak)"
            )
            continue
        r.verdict = classify(r.ratio, r.ci, adj, threshold=m.threshold, alpha=m.alpha)
        if r.verdict == INCONCLUSIVE:
            band = f"{100 * (1 / m.threshold - 1):+.1f}% … {100 * (m.threshold - 1):+.1f}%"
            r.reason = (
                f"the interval is not inside {band}: a longer soak (more intervals a tenth) would settle it"
            )


def rss_growth_in(intervals: Sequence[Interval], server: Sequence) -> Growth | None:
    """RSS growth over a soak's measured phase (its full intervals), from the server's
    proc_sampler samples (warm-up and drain left out)."""
    full = full_intervals(intervals)
    if not full:
        return None
    t0, t1 = full[0].start_s, full[-1].start_s + full[-1].length_s
    inside = [s for s in server if t0 <= s.unix_s <= t1]
    return rss_growth_mib_per_h([s.unix_s - t0 for s in inside], [s.rss_kib for s in inside])


@dataclass(frozen=True)
class Growth:
    """A Theil-Sen slope with its interval, per hour."""

    per_hour: float
    low: float
    high: float


def rss_growth_mib_per_h(t_s: Sequence[float], rss_kib: Sequence[float]) -> Growth | None:
    """The server's RSS growth in MiB per hour (Theil-Sen, 95 % interval); None under 3 samples."""
    if len(t_s) < 3 or len(t_s) != len(rss_kib):
        return None
    hours = np.asarray(t_s, dtype=float) / 3600.0
    mib = np.asarray(rss_kib, dtype=float) / 1024.0
    from scipy.stats import theilslopes  # not at the top: judge/__init__.py says why

    res = theilslopes(mib, hours, alpha=RSS_CONFIDENCE)
    if not all(math.isfinite(x) for x in (res.slope, res.low_slope, res.high_slope)):
        return None
    return Growth(float(res.slope), float(res.low_slope), float(res.high_slope))


def soak_drift(head: Side, gates: Gates) -> list[DriftResult]:
    """The drift of every head series whose .hlog is cut into intervals (a soak), its
    repeats' tenths pooled; Holm over those series; RSS growth from its last repeat."""
    from ..measure.cell import server_samples_path
    from ..measure.proc_sampler import read_csv

    soaks = {}
    for i, (key, repeats) in enumerate(head.series.items()):
        per_run = [
            read_intervals(Path(r.hlog)) for r in repeats if r.hlog and untagged_lines(Path(r.hlog)) > 1
        ]
        per_run = [iv for iv in per_run if is_soak(iv)]
        if per_run:
            soaks[key] = (i, repeats, per_run)
    # A gate narrowed to other metrics (bisect judges one series x metric) tests no drift.
    if not soaks or gates.drift_metric not in {g.name for g in gates.metrics}:
        return []
    m = gates.metric(gates.drift_metric)
    tested = []
    for key, (i, repeats, per_run) in soaks.items():
        rng = np.random.default_rng([gates.seed, 1_000_003, i])
        res, noise = drift_result(
            *key,
            per_run,
            m,
            gated=m.gated,
            n_perm=gates.permutations,
            n_boot=gates.bootstrap,
            confidence=gates.confidence,
            rng=rng,
        )
        last = next(r for r in reversed(repeats) if r.hlog)
        csv_path = server_samples_path(Path(last.hlog).with_suffix(".json"))
        if csv_path.is_file():
            growth = rss_growth_in(per_run[-1], read_csv(csv_path))
            if growth is not None:
                res.rss_growth_mib_per_h, res.rss_growth_ci = growth.per_hour, (growth.low, growth.high)
        tested.append((res, noise))
    assign_verdicts(tested, m)
    return [r for r, _ in tested]
