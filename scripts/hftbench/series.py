"""A series (one scenario × client) over its repeats: the one definition every surface uses.

report.md, results.csv, the plots, the GAB export, the history store's entries and the gate
all take a series' numbers from here, so the same thing shows the same number everywhere:

- **Latency**: the quantile of the *pooled* histogram of the repeats (every recorded order
  counts once), by HdrHistogram's definition (histograms.quantile_rows: the highest equivalent
  value of the bucket where the cumulative count first reaches max(1, int(q · n + 0.5))).
  That is the number the clients print for one repeat and the statistic the gate tests.
- **Throughput**: Σ successful orders / Σ measured seconds over the repeats. That is the
  rate the repeats delivered together, every order and every second weighted once. A
  median or mean of per-repeat rates weights a short repeat like a long one (a repeat that
  stalled for half its time and one that did not count alike) and, for a mean of rates,
  lands above the delivered rate whenever the repeats differ (the mean of ok/t is not
  Σok/Σt); with equal repeats all agree. One repeat's throughput is its client's
  `throughput_rps` (= ok / duration_s, Contract 3).

The gate's statistics need the repeats themselves (a permutation test and a bootstrap over
runs, stats.py): `repeats`, `histograms()` and `repeat_throughputs()` give them; the
statistics are not computed here.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

from . import histograms

if TYPE_CHECKING:
    from hdrh.histogram import HdrHistogram

    from .results import Cell, ClientResult


@dataclass(frozen=True)
class Repeat:
    """One repeat of one series: what the numbers and the statistics need, nothing else."""

    run_id: str  # "run_20261122T030000Z_3fa2c1" or "run_…#r2" for the 2nd repeat inside a run
    histogram: str | None  # HdrHistogram V2 deflate base64 (ns); None when no order succeeded
    ok: int  # latency samples recorded = successful measured orders
    errors: int
    duration_s: float  # measured seconds (after warm-up; see of_result)
    hlog: str | None = None  # the cell's .hlog (run folders only): a soak's intervals, for its drift
    # Open loop: the send-lateness P99 (µs) when the load generator fell behind its schedule
    # (lateness.fell_behind); None when it kept up or the run is closed loop.
    behind_p99_us: float | None = None
    # The server's own CPU microseconds per order it handled (warm-up included); None when
    # the run did not record it (results.Cell.server_cpu_s; runs from before it).
    cpu_us_per_order: float | None = None
    # The server's anonymous resident memory grown over the cell, in bytes per order it handled
    # (measure/memory.py); None when not recorded, and then `memory_unread` says why when the
    # cell did (results.Cell.server_memory_unread).
    memory_bytes_per_order: float | None = None
    memory_unread: str | None = None
    # A duet round's slot of this side's server ("a": --url, the older process; "b"); None
    # outside a duet (clustered.py takes the slot out of the round test).
    slot: str | None = None
    # The failed orders by kind ((kind, count): http_5xx, timeout, connect, …), from the
    # client's error_kinds; `errors` is their sum.
    failure_kinds: tuple[tuple[str, int], ...] = ()
    # Why this round broke beyond its failed orders (the server died or hung, the client could
    # not finish, the counts disagree); None when it ran whole (judge/failures.py).
    broken: str | None = None

    @property
    def throughput_rps(self) -> float:
        """This repeat's successful orders per second (the client's `throughput_rps`)."""
        return self.ok / self.duration_s if self.duration_s > 0 else 0.0

    @classmethod
    def of_result(
        cls, r: ClientResult, run_id: str = "", hlog: str | None = None, uncorrected: bool = False
    ) -> Repeat:
        """A client result as a repeat. Its seconds are those its own `throughput_rps` implies
        (ok / throughput_rps, = duration_s by Contract 3): some clients round `duration_s` in
        the JSON (C to 10 µs, 0.001 % of a 40 ms run) but not the rate, and one repeat must
        show the rate its client printed. A repeat without a rate counts its duration_s."""
        data = r.uncorrected_histogram_data if uncorrected else r.histogram_data
        seconds = r.ok / r.throughput_rps if r.ok > 0 and r.throughput_rps > 0 else r.duration_s
        return cls(run_id, data, r.ok, r.errors, seconds, hlog)

    @classmethod
    def of_rate(cls, run_id: str, histogram: str | None, ok: int, errors: int, rate: float) -> Repeat:
        """A repeat known by its rate, not its duration (a history-store entry): the duration
        that gives back the stored rate."""
        return cls(run_id, histogram, ok, errors, ok / rate if rate > 0 else 0.0)


@dataclass(frozen=True)
class Series:
    scenario: str
    client: str
    repeats: tuple[Repeat, ...]

    @classmethod
    def of_results(
        cls, scenario: str, client: str, results: Iterable[ClientResult], uncorrected: bool = False
    ) -> Series:
        return cls(scenario, client, tuple(Repeat.of_result(r, uncorrected=uncorrected) for r in results))

    @classmethod
    def of_cells(cls, cells: Iterable[Cell], ok_only: bool = True, uncorrected: bool = False) -> Series:
        """The repeats of one scenario × client from run cells: the ok ones, or (ok_only False,
        for the report's ❌ rows) every cell that wrote a result."""
        chosen = [c for c in cells if c.result is not None and (c.ok or not ok_only)]
        if not chosen:
            raise ValueError("Series.of_cells: no cell with a result")
        return cls.of_results(
            chosen[0].scenario, chosen[0].client, [c.result for c in chosen if c.result], uncorrected
        )

    @property
    def samples(self) -> int:
        """Latency samples of all repeats (= successful measured orders)."""
        return sum(r.ok for r in self.repeats)

    @property
    def errors(self) -> int:
        return sum(r.errors for r in self.repeats)

    @property
    def fewest_samples(self) -> int:
        """The smallest repeat's samples (what a per-repeat sample rule must check)."""
        return min((r.ok for r in self.repeats), default=0)

    def throughput_rps(self) -> float | None:
        """Σ ok / Σ duration over the repeats (why: the module docstring); None without repeats."""
        if not self.repeats:
            return None
        seconds = sum(r.duration_s for r in self.repeats)
        return self.samples / seconds if seconds > 0 else 0.0

    def repeat_throughputs(self) -> list[float]:
        """Each repeat's own rate, for the gate's tests over runs."""
        return [r.throughput_rps for r in self.repeats]

    def histograms(self) -> list[str] | None:
        """Each recording repeat's encoded histogram; None when one that recorded has none
        (its orders cannot be pooled) or no repeat recorded a latency."""
        recorded = [r for r in self.repeats if r.ok > 0]
        if not recorded or any(not r.histogram for r in recorded):
            return None
        return [r.histogram for r in recorded if r.histogram]

    @cached_property
    def _pooled(self) -> tuple | None:
        encoded = self.histograms()
        if encoded is None:
            return None
        g = histograms.grid(encoded, [])
        counts = g.base.sum(axis=0)
        return (g.values_ns, counts) if counts.sum() > 0 else None

    def pooled_counts(self):
        """(bucket values in ns, pooled counts) over the recorded buckets, or None."""
        return self._pooled

    def quantile_us(self, q: float) -> float | None:
        """The q-quantile (0 < q <= 1) of the pooled histogram, in µs; None without one."""
        if self._pooled is None:
            return None
        values_ns, counts = self._pooled
        return histograms.merged_quantile(values_ns, counts[None, :], q) / 1000.0

    def merged_histogram(self) -> HdrHistogram | None:
        """The repeats' histograms added into one (for mean, stddev, min, max, curves)."""
        encoded = self.histograms()
        if encoded is None:
            return None
        merged = histograms.decode(encoded[0])
        for e in encoded[1:]:
            merged.add(histograms.decode(e))
        return merged if merged.get_total_count() > 0 else None
