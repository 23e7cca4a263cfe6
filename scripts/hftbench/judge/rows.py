"""One series' rows: each gated metric of gates.yaml judged on one series (scenario × client)
by its kind (quantile, exceedance, throughput, CPU, memory, failures), with the test the
design calls for (designs.py). compare.py runs these over every series and corrects the
family; pooled.py runs them per runner.
"""

from __future__ import annotations

import numpy as np

from .. import samples
from ..answers import NOT_GATED
from ..design_names import DUET, UNPAIRED
from ..series import Repeat, Series
from ..verdict import MetricResult
from . import clustered, designs, failures, stats
from . import memory as memory_stats
from .gates import Gates, MetricGate
from .sides import SeriesKey, whole


def series_rows(
    key: SeriesKey,
    b: list[Repeat],
    h: list[Repeat],
    gates: Gates,
    rng,
    noise: dict[int, tuple],
    design: str,
    estimates_only: bool = False,
) -> list[MetricResult]:
    all_b, all_h = b, h  # every round, failed ones included: the failure row's
    b, h = whole(b), whole(h)  # the rounds that ran whole: the latency, throughput and CPU tests'
    with_hist = bool(b and h)
    sides = Series(*key, tuple(b)), Series(*key, tuple(h))  # the shown numbers (series.py)
    u = designs.units(design, b, h) if with_hist else None
    behind = _fell_behind(b, h) if design != DUET else None
    cpu_known = any(r.cpu_us_per_order is not None for r in (*b, *h))
    # Runs from before the server's memory was read carry neither a value nor why not.
    memory_known = any(r.memory_bytes_per_order is not None or r.memory_unread for r in (*b, *h))
    results = []
    for m in gates.metrics:
        if m.kind == "cpu" and not cpu_known:
            continue  # runs from before the server's CPU was recorded: nothing to show
        if m.kind == "memory" and not memory_known:
            continue
        why_not = gates.why_not_judged(*key, m.name)
        if m.kind == "errors":  # every round counts, failed ones first of all
            res = MetricResult(
                key[0],
                key[1],
                m.name,
                m.gated and why_not is None,
                len(all_b),
                len(all_h),
                min((r.ok + r.errors for r in (*all_b, *all_h)), default=0),
                threshold=m.threshold,
            )
            _failures(res, all_b, all_h)
            results.append(res)
            continue
        n = min((r.ok for r in (*b, *h)), default=0)  # latency counts the successful orders
        where = "in a run"
        if u is not None and u.pairs and m.kind == "quantile":
            n, where = _round_samples(b, h, m)
        res = MetricResult(
            scenario=key[0],
            client=key[1],
            metric=m.name,
            gated=m.gated and why_not is None,
            base_runs=len(b),
            head_runs=len(h),
            min_samples=n,
            threshold=m.threshold,
        )
        enough = n >= m.min_samples
        if m.kind == "quantile":
            spread = _quantile(res, m, u, sides, gates=gates, rng=rng, test=enough and not estimates_only)
        elif m.kind == "exceedance":
            spread = _exceedance(res, m, u, gates=gates, rng=rng, test=enough)
        elif m.kind == "throughput":
            spread = _throughput(res, *sides, gates, rng, design)
        elif m.kind == "memory":
            spread = _memory(res, b, h, gates, design)
        else:
            spread = _cpu(res, b, h, gates, rng, design)
        if spread is not None:
            noise[id(res)] = spread
        if res.verdict != NOT_GATED and not enough:
            res.verdict, res.reason = NOT_GATED, f"n too small: {n} samples {where} < {m.min_samples}"
        if res.verdict == NOT_GATED:
            res.gated = False
        if m.gated and why_not and res.reason is None:
            res.reason = why_not
        if res.gated and behind:  # the latency holds the client's delay: not the server's
            res.gated, res.reason = False, behind
        if m.gated and not res.gated:
            res.why_not_gated = res.reason
        results.append(res)
    return results


def _round_samples(b: list[Repeat], h: list[Repeat], m: MetricGate) -> tuple[int, str]:
    """The samples a round design's quantile rests on, and where they are counted: the rounds,
    not one run, carry them (the test is over the rounds' own quantiles), so the fewer of the
    two sides' totals over the rounds; but a round with fewer than DISPLAY_MIN_BEYOND samples
    beyond the quantile counts as its own size (its quantile would be one of a handful of
    orders). P99.9 of latency-1c, 50,000 orders a round, is judged from 16 rounds (800,000)
    where one run could never reach it."""
    each = samples.min_samples(100 * (m.quantile or 0.5))
    thin = min(r.ok for r in (*b, *h))
    if thin < each:
        return thin, f"in a round (each needs ≥ {each:,})"
    return min(sum(r.ok for r in b), sum(r.ok for r in h)), "over the rounds"


def _fell_behind(b: list[Repeat], h: list[Repeat]) -> str | None:
    """Why a series is not gated when its open-loop generator fell behind (lateness.py) on
    base's side: the host could not carry the schedule, so neither side's latency is the
    server's. Behind on head's side only is not a reason: a head that overloads its server
    would otherwise take its own series out of the gate, and its latency (measured from the
    intended send time) already holds what its users would wait.

    Not asked of a duet: there one generator's schedule feeds both servers, each order's side
    drawn at random, so a slipping schedule delays both sides alike within every round. The
    client's delay then dilutes the ratio toward 1 (less power: the interval says so), never
    biases it, and a head that slows the generator makes its own latency worse, not ungated."""
    late = [r.behind_p99_us for r in b if r.behind_p99_us is not None]
    if not late:
        return None
    return (
        f"the load generator fell behind in {len(late)} of {len(b)} of base's runs (send lateness "
        f"P99 up to {max(late):,.0f} µs > 10 % of a connection's send interval): not gated"
    )


def _quantile(
    res: MetricResult,
    m: MetricGate,
    u: designs.Units | None,
    sides: tuple[Series, Series],
    *,
    gates: Gates,
    rng,
    test: bool,
) -> tuple[float, float] | None:
    """Pooled quantiles (series.py) and their ratio; the test and the interval (over the
    design's units) only when `test`. Returns the noise for the MDE: (bootstrap sd of log
    ratio, the test's smallest p)."""
    if u is None:
        why = "a run recorded no latency (every order failed)"
        if any(s.repeats for s in sides) and all(r.histogram for s in sides for r in s.repeats):
            why = "no round measured on both sides: nothing to pair"
        res.verdict, res.reason = NOT_GATED, why
        return None
    qb, qh = (s.quantile_us(m.quantile) for s in sides)
    res.base_value, res.head_value, res.ratio = qb, qh, qh / qb
    if not test:
        return None
    t = designs.quantile_test(u, m.quantile, n_perm=gates.permutations, n_boot=gates.bootstrap, rng=rng)
    return _tested(res, t, gates)


def _exceedance(
    res: MetricResult, m: MetricGate, u: designs.Units | None, *, gates: Gates, rng, test: bool
) -> tuple[float, float, designs.Tested] | None:
    """Head's share of its orders past the P99.9 of both sides' orders over base's share
    (exceedance.py): shown as each side's share, the rounds' geometric means (or the runs'
    means, unpaired); tested only when every run holds `min_samples` orders, so each line has
    orders past it to count."""
    if u is None:
        res.verdict, res.reason = (
            NOT_GATED,
            "a run recorded no latency, or no round was measured on both sides",
        )
        return None
    if not test:
        return None
    t = designs.exceedance_test(u, m.quantile, n_perm=gates.permutations, n_boot=gates.bootstrap, rng=rng)
    if t.df == 0 and t.shown is not None:  # unpaired: each side's mean share over its runs
        res.base_value, res.head_value = t.shown
        res.ratio = res.head_value / res.base_value if res.base_value > 0 else None
    return _tested(res, t, gates)


def _throughput(res: MetricResult, base: Series, head: Series, gates: Gates, rng, design: str):
    """The shown values and ratio are each side's pooled throughput (series.py); the test and
    the interval are over per-run rates (runs, or round pairs: designs.mean_test)."""
    mb, mh = base.throughput_rps() or 0.0, head.throughput_rps() or 0.0
    res.base_value, res.head_value = mb, mh
    res.ratio = mh / mb if mb > 0 else None
    t = designs.mean_test(
        design, base.repeats, head.repeats, n_perm=gates.permutations, n_boot=gates.bootstrap, rng=rng
    )
    return _tested(res, t, gates)


def _cpu(res: MetricResult, b: list[Repeat], h: list[Repeat], gates: Gates, rng, design: str):
    """The server's own CPU per order: each side's mean over its runs, tested over rounds
    (paired designs) or runs. A run without the reading is left out of its side."""
    rb = [r.cpu_us_per_order for r in b if r.cpu_us_per_order is not None]
    rh = [r.cpu_us_per_order for r in h if r.cpu_us_per_order is not None]
    if not rb or not rh:
        res.verdict, res.reason = (
            NOT_GATED,
            f"the server's CPU was not recorded on {'base' if not rb else 'head'}",
        )
        return None
    res.base_value, res.head_value = float(np.mean(rb)), float(np.mean(rh))
    res.ratio = res.head_value / res.base_value if res.base_value > 0 else None
    t = designs.value_test(
        design, b, h, lambda r: r.cpu_us_per_order, n_perm=gates.permutations, n_boot=gates.bootstrap, rng=rng
    )
    return _tested(res, t, gates)


def _memory(res: MetricResult, b: list[Repeat], h: list[Repeat], gates: Gates, design: str):
    """The server's resident memory grown per order: each side's mean, and head − base tested
    over the rounds (paired designs) or runs (memory.py: a difference, not a ratio; `ratio`
    stays None and `ci` holds the difference's interval in bytes per order). A run whose
    memory could not be read is left out of its side, and the row says why."""
    unread = sorted(
        {r.memory_unread for r in (*b, *h) if r.memory_bytes_per_order is None and r.memory_unread}
    )
    missing = f"; memory not read in some runs: {unread[0]}" if unread else ""
    if design != UNPAIRED:
        matched = [
            (x, y)
            for x, y in designs.pairs(b, h)
            if x.memory_bytes_per_order is not None and y.memory_bytes_per_order is not None
        ]
        rb = [x.memory_bytes_per_order for x, _ in matched]
        rh = [y.memory_bytes_per_order for _, y in matched]
    else:
        rb = [x.memory_bytes_per_order for x in b if x.memory_bytes_per_order is not None]
        rh = [y.memory_bytes_per_order for y in h if y.memory_bytes_per_order is not None]
    if not rb or not rh:
        res.verdict, res.reason = NOT_GATED, (unread[0] if unread else "the server's memory was not read")
        return None
    if design != UNPAIRED:
        d = memory_stats.paired_difference(rb, rh, tuple(x.slot for x, _ in matched))
    else:
        d = memory_stats.unpaired_difference(rb, rh)
    res.base_value, res.head_value = d.base_mean, d.head_mean
    res.p_value = d.p_value
    res.ci = memory_stats.interval(d, gates.confidence)
    res.reason = missing[2:] or None
    return d.se, 0.0, d


def _tested(res: MetricResult, t: designs.Tested, gates: Gates) -> tuple[float, float, designs.Tested]:
    """The row's p and interval; the noise for the MDE, and the test itself (a pool's combine
    adds the runners' tests up: strata.py). A round-level t (t.df > 0) gives Student's
    interval about its estimate and its standard error as the noise; its estimate is the
    rounds' geometric mean ratio, shown with each side's geometric mean (clustered.py)."""
    res.p_value = t.p_value
    if t.df > 0:
        if t.shown is not None:
            (res.base_value, res.head_value), res.ratio = t.shown, float(np.exp(t.observed))
        res.ci = clustered.t_interval(t.observed, t.se, t.df, gates.confidence)
        return t.se, t.smallest_p, t
    res.ci = stats.ratio_interval(t.replicates, gates.confidence, t.n)
    return stats.log_sd(t.replicates), t.smallest_p, t


def _failures(res: MetricResult, b: list[Repeat], h: list[Repeat]) -> None:
    """The failure row (failures.py): each side's failure rate over every round, the verdict
    and its reason; no test (a failed order is a fact, not a sample)."""
    j = failures.judge(b, h)
    res.base_value, res.head_value = j.base.rate, j.head.rate
    res.ratio = res.head_value / res.base_value if res.base_value > 0 else None
    res.verdict, res.reason = j.verdict, j.reason
