"""wrk's raw latency (throughput.py compares it with the clients' raw figures). wrk 4 corrects
its latency for coordinated omission before it prints it: stats_correct() (wrk.c, stats.c)
adds, for every latency n >= 2 x its mean per-connection interval (runtime / (requests /
connections)), synthetic samples at n - interval, n - 2 x interval, ... above the interval.
Its done() hook only sees the corrected histogram too. So a done() hook appended to the order
script (done_script) prints that histogram, and uncorrect() takes the synthetic samples back
out exactly: the correction only ever adds below the value it reads, so it unwinds from the
top. raw_wrk_percentiles checks the result by correcting it again. Pure, apart from
done_script's one file."""

import math
import re
from pathlib import Path

# wrk's done(summary, latency, requests) hook, appended to the order script: one line with
# the measured seconds, the completed requests and every (µs value, count) of the latency
# histogram as done() gets it (already corrected by stats_correct). `#latency` is the number
# of distinct values, `latency(i)` the i-th one and its count (wrk's script.c).
DONE_LUA = """
function done(summary, latency, requests)
  local parts = {}
  for i = 1, #latency do
    local value, count = latency(i)
    parts[#parts + 1] = string.format("%d:%d", value, count)
  end
  io.write(string.format("%s duration_us=%d requests=%d %s\\n", "HFTBENCH_WRK_HISTOGRAM",
                         summary.duration, summary.requests, table.concat(parts, " ")))
end
"""
HISTOGRAM_LINE = re.compile(
    r"^HFTBENCH_WRK_HISTOGRAM duration_us=(\d+) requests=(\d+)((?: \d+:\d+)*)\s*$", re.M
)


def parse_wrk_histogram(output: str) -> tuple[int, int, dict[int, int]] | None:
    """(duration µs, requests, {µs: count}) of done_script's line, or None without one."""
    m = HISTOGRAM_LINE.search(output)
    if m is None:
        return None
    counts: dict[int, int] = {}
    for pair in m.group(3).split():
        value, count = pair.split(":")
        counts[int(value)] = counts.get(int(value), 0) + int(count)
    return int(m.group(1)), int(m.group(2)), counts


def wrk_interval_us(duration_us: int, requests: int, connections: int) -> int | None:
    """The `expected` interval wrk corrects with: runtime_us / (complete / connections), in
    integer arithmetic as wrk.c has it; None when wrk applies no correction."""
    per_connection = requests // connections
    return duration_us // per_connection if per_connection > 0 else None


def stats_correct(counts: dict[int, int], expected: int) -> dict[int, int]:
    """wrk's stats_correct (stats.c), on a copy: for n = 2 × expected .. max ascending, the
    count at n is added at n − expected, n − 2 × expected, ... while above expected."""
    out = dict(counts)
    for n in sorted(v for v in counts if v >= 2 * expected):
        count, m = out[n], n - expected
        while count and m > expected:
            out[m] = out.get(m, 0) + count
            m -= expected
    return out


def uncorrect(counts: dict[int, int], expected: int) -> dict[int, int]:
    """The inverse of stats_correct: the value m > expected received the raw count of every
    n = m + k × expected (k >= 1) above it (counts at n were read before anything was added
    there, since additions only go below), so going down from the top, with one running sum
    per residue mod expected, each raw count is the corrected one minus what came from above."""
    raw: dict[int, int] = {}
    from_above: dict[int, int] = {}
    for m in sorted(counts, reverse=True):
        r = m % expected
        c = counts[m] - (from_above.get(r, 0) if m > expected else 0)
        if c < 0:
            raise ValueError(f"not a wrk-corrected histogram: {c} samples at {m} us")
        if c:
            raw[m] = c
        from_above[r] = from_above.get(r, 0) + c
    return raw


def wrk_percentile(counts: dict[int, int], p: float) -> int | None:
    """wrk's stats_percentile: the first value whose cumulative count reaches
    round(p / 100 × count + 0.5) (C's round, half away from zero)."""
    total = sum(counts.values())
    if total == 0:
        return None
    rank = math.floor(p / 100.0 * total + 0.5 + 0.5)
    seen = 0
    for v in sorted(counts):
        seen += counts[v]
        if seen >= rank:
            return v
    return max(counts)


def raw_wrk_percentiles(output: str, connections: int) -> tuple[float, float] | None:
    """(p50, p99) in µs of wrk's raw latency, or None when the output has no histogram line
    or the uncorrected histogram does not give back wrk's by stats_correct."""
    parsed = parse_wrk_histogram(output)
    if parsed is None or not parsed[2]:
        return None
    duration_us, requests, counts = parsed
    expected = wrk_interval_us(duration_us, requests, connections)
    try:
        raw = counts if expected is None else uncorrect(counts, expected)
    except ValueError:
        return None
    if expected is not None and stats_correct(raw, expected) != counts:
        return None
    p50, p99 = wrk_percentile(raw, 50.0), wrk_percentile(raw, 99.0)
    return (float(p50), float(p99)) if p50 is not None and p99 is not None else None


def done_script(order_script: Path, work: Path) -> Path:
    """order_script as it is, plus DONE_LUA's done() hook (raw latency, module doc), in work/."""
    script = work / "order-with-histogram.lua"
    script.write_text(order_script.read_text() + DONE_LUA)
    return script
