"""The stats stage: each worker's ``Tally`` (its histograms and counts), the merge of tallies
after the run (per process, then over processes), and the latency summary in microseconds,
computed by hdrh. Workers only record; every statistic is computed here, after the run."""

from dataclasses import dataclass, field

from hdrh.histogram import HdrHistogram

ERROR_KINDS = ("connect", "timeout", "http_4xx", "http_5xx", "other")
PERCENTILES = (("p50", 50.0), ("p90", 90.0), ("p95", 95.0), ("p99", 99.0), ("p999", 99.9), ("p9999", 99.99))
LATENCY_KEYS = ("min", "mean", "stddev", *(k for k, _ in PERCENTILES), "max")


def new_histogram() -> HdrHistogram:
    """Nanoseconds, 1 ns .. 60 s, 3 significant digits, as every client (clients/README.md)."""
    return HdrHistogram(1, 60_000_000_000, 3)


@dataclass
class Tally:
    """What one worker measured, or the merge of several; only its own coroutine writes a
    worker's tally (no lock needed)."""

    latency: HdrHistogram = field(default_factory=new_histogram)  # open loop: from the intended time
    uncorrected: HdrHistogram | None = None  # open loop: from the actual send
    pacing: HdrHistogram | None = None  # open loop: actual send - intended, when the connection was free
    lateness: HdrHistogram | None = None  # open loop: actual send - intended, every measured order
    ok: int = 0
    errors: dict = field(default_factory=lambda: dict.fromkeys(ERROR_KINDS, 0))

    @classmethod
    def for_mode(cls, open_loop: bool) -> "Tally":
        """An empty tally; the open loop's has the uncorrected, pacing and lateness histograms too."""
        if not open_loop:
            return cls()
        return cls(uncorrected=new_histogram(), pacing=new_histogram(), lateness=new_histogram())

    def count(self, kind: str | None) -> bool:
        """Counts one answer: ``kind`` None is a success (True), else that error kind."""
        if kind is None:
            self.ok += 1
            return True
        self.errors[kind] += 1
        return False


def merge(histograms: list) -> HdrHistogram:
    """Sum of the non-empty histograms. hdrh's ``add`` takes min() with an empty histogram's
    min of 0, so the merge starts from a decoded copy of the first non-empty one."""
    filled = [h for h in histograms if h is not None and h.get_total_count() > 0]
    if not filled:
        return new_histogram()
    merged = HdrHistogram.decode(filled[0].encode())
    for h in filled[1:]:
        merged.add(h)
    return merged


def merge_tallies(tallies: list, open_loop: bool) -> Tally:
    """One tally holding every part's counts and histograms."""
    return Tally(
        latency=merge([t.latency for t in tallies]),
        uncorrected=merge([t.uncorrected for t in tallies]) if open_loop else None,
        pacing=merge([t.pacing for t in tallies]) if open_loop else None,
        lateness=merge([t.lateness for t in tallies]) if open_loop else None,
        ok=sum(t.ok for t in tallies),
        errors={k: sum(t.errors[k] for t in tallies) for k in ERROR_KINDS},
    )


def latency_us(hist: HdrHistogram) -> dict:
    """Summary of a histogram of nanoseconds, in microseconds; all None when it is empty."""
    if hist.get_total_count() == 0:
        return dict.fromkeys(LATENCY_KEYS)
    out = {
        "min": hist.get_min_value() / 1000,
        "mean": round(hist.get_mean_value() / 1000, 3),
        "stddev": round(hist.get_stddev() / 1000, 3),
    }
    values = hist.get_percentile_to_value_dict([pct for _, pct in PERCENTILES])  # one pass
    for key, pct in PERCENTILES:
        out[key] = values[pct] / 1000
    out["max"] = hist.get_max_value() / 1000
    return out
