"""What an A/A pool of duet rounds says about the gate's interval (issue 35), offline.

For each series of `hftbench calibrate`'s A/A rounds (<POOL>/aa/base, <POOL>/aa/head): each
quantile's level (the median over rounds of base's round value), the spread of the rounds'
log ratios, and over random draws of K rounds how often Student's interval at the gate's
per-look level held 1 when centred on the ratio of the pooled rounds (the estimate before
2026-11-28) and on the mean of the rounds' log ratios (clustered.py's since). CPU per order
the same, with the ratio of the sides' means as the pooled estimate. For each open-loop
series, the client's own records (median over the rounds and sides): the reply's P99 from
the actual send and from the intended send, and the largest latency; and the round sd of the
head / base log ratio of the P95 and P99 from each send. Each quantile by the slot base's
server took (a: --url, the older process; b: --duet-url): the rounds' mean log ratio in each
and the spread within a slot (clustered.slot_adjusted). CPU per order by the slot head's
server took: the mean log ratio of the rounds in each.

    .venv/bin/python scripts/experiments/aa-pool.py POOL [POOL ...] [--k 12] [--draws 4000]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
from scipy import stats as sps

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from hftbench.design_names import DUET  # noqa: E402
from hftbench.histograms import Grid  # noqa: E402
from hftbench.judge import calibration_draws, clustered, designs  # noqa: E402
from hftbench.judge.rounds import AB_ROUNDS  # noqa: E402
from hftbench.judge.sides import side_from_runs  # noqa: E402

QUANTILES = (0.5, 0.95, 0.99)
CONFIDENCE = 1 - 0.05 / AB_ROUNDS.looks  # gates.yaml's alpha 0.05 over ab's looks


def coverage(base: np.ndarray, head: np.ndarray, pooled, k: int, draws: int) -> tuple[float, float]:
    """(share of draws whose interval about the pooled estimate held 1, ... about the mean)."""
    y = np.log(head / base)
    rng = np.random.default_rng(1)
    half_t = sps.t.ppf(0.5 + CONFIDENCE / 2, k - 1)
    about_pooled = about_mean = 0
    for _ in range(draws):
        idx = rng.choice(len(y), size=k, replace=False)
        half = half_t * y[idx].std(ddof=1) / np.sqrt(k)
        about_pooled += abs(pooled(idx)) <= half
        about_mean += abs(y[idx].mean()) <= half
    return about_pooled / draws, about_mean / draws


def report(pool: Path, k: int, draws: int) -> None:
    rounds = calibration_draws.load_pools(pool)["aa"]
    print(f"== {pool}: {len(rounds)} A/A rounds, draws of {k}, interval {CONFIDENCE:.2%}")
    base = side_from_runs("base", [b for b, _ in rounds])
    head = side_from_runs("head", [h for _, h in rounds])
    for key in base.series:
        u = designs.units(DUET, base.series[key], head.series[key])
        g = u.grid
        for q in QUANTILES:
            qb, qh = clustered.round_quantiles(g, q)

            def pooled(idx, q=q, g=g):
                return _pooled_log_ratio(Grid(g.values_ns, g.base[idx], g.head[idx]), q)

            cp, cm = coverage(qb, qh, pooled, k, draws)
            sd = np.log(qh / qb).std(ddof=1)
            print(
                f"{key[0]:>11} P{q * 100:g}: level {np.median(qb) / 1e3:9.1f} us, round sd {sd:6.2%}, "
                f"covered about the pooled ratio {cp:6.1%}, about the mean {cm:6.1%}"
            )
            by_slot(f"{key[0]:>11} P{q * 100:g}", np.log(qh / qb), np.array(u.slots))
        pairs = designs.pairs(base.series[key], head.series[key])
        cb = np.array([b.cpu_us_per_order for b, _ in pairs], dtype=float)
        ch = np.array([h.cpu_us_per_order for _, h in pairs], dtype=float)
        cp, cm = coverage(cb, ch, lambda idx, b=cb, h=ch: np.log(h[idx].mean() / b[idx].mean()), k, draws)
        print(
            f"{key[0]:>11} CPU per order: round sd {np.log(ch / cb).std(ddof=1):6.2%}, "
            f"covered about the pooled ratio {cp:6.1%}, about the mean {cm:6.1%}"
        )


def by_slot(name: str, y: np.ndarray, slots: np.ndarray) -> None:
    """The rounds' mean log ratio with base's server in slot a and in slot b, and the spread
    within a slot: what clustered.slot_adjusted takes out of the round test."""
    a, b = y[slots == "a"], y[slots == "b"]
    if len(a) < 2 or len(b) < 2:
        return
    resid = np.concatenate([a - a.mean(), b - b.mean()])
    print(
        f"{name} by base's slot: a {a.mean():+.2%} ({len(a)}), b {b.mean():+.2%} ({len(b)}); "
        f"sd within a slot {np.sqrt(resid @ resid / (len(y) - 2)):6.2%}"
    )


def client_records(pool: Path) -> None:
    """The open-loop series' client records: P99 from the actual and the intended send, max;
    the round spread of each send's P95 and P99 ratio."""
    by_series: dict[str, dict[tuple[str, str], dict]] = {}
    for f in sorted(pool.glob("aa/*/run_*/*/*.json")):
        try:
            record = json.loads(f.read_text())
        except json.JSONDecodeError:  # the round a stopped calibrate was writing
            continue
        if record.get("mode") == "open" and "uncorrected_latency_us" in record:
            side, rnd = _side_round(f.parents[1].name)
            by_series.setdefault(f"{record['scenario']}/{record['client']}", {})[(side, rnd)] = record
    for series, records in by_series.items():
        actual = np.median([r["uncorrected_latency_us"]["p99"] for r in records.values()])
        intended = np.median([r["latency_us"]["p99"] for r in records.values()])
        most = [r["latency_us"]["max"] for r in records.values()]
        print(
            f"{series:>15} client records ({len(records)}): P99 from the actual send {actual:,.0f} us, "
            f"from the intended send {intended:,.0f} us; max median {np.median(most):,.0f} us "
            f"({min(most):,.0f}-{max(most):,.0f})"
        )
        rounds = sorted({rnd for _, rnd in records} & {rnd for side, rnd in records if side == "head"})
        pairs = [(records[("base", r)], records[("head", r)]) for r in rounds if ("base", r) in records]
        for field, send in (("uncorrected_latency_us", "actual"), ("latency_us", "intended")):
            for q in ("p95", "p99"):
                y = np.log([h[field][q] / b[field][q] for b, h in pairs])
                print(
                    f"{series:>15} {q.upper()} from the {send} send: round sd {y.std(ddof=1):6.2%} "
                    f"({len(pairs)} rounds)"
                )


def slot_cpu(pool: Path) -> None:
    """CPU per order's mean log ratio over the rounds where head's server took slot a, and b."""
    heads = {}
    for f in pool.glob("aa/head/run_*/results.json"):
        heads[_side_round(f.parent.name)[1]] = json.loads(f.read_text())
    bases = {
        _side_round(f.parent.name)[1]: json.loads(f.read_text())
        for f in pool.glob("aa/base/run_*/results.json")
    }
    by: dict[tuple[str, str], list[float]] = {}
    for rnd, head in heads.items():
        base, slot = bases.get(rnd), head.get("server", {}).get("duet_slot")
        if base is None or slot is None:
            continue
        for cb, ch in zip(base["cells"], head["cells"], strict=False):
            if cb.get("server_orders") and ch.get("server_orders"):
                ratio = (ch["server_cpu_s"] / ch["server_orders"]) / (
                    cb["server_cpu_s"] / cb["server_orders"]
                )
                by.setdefault((cb["scenario"], slot), []).append(float(np.log(ratio)))
    for (scenario, slot), y in sorted(by.items()):
        print(
            f"{scenario:>15} CPU per order, head in slot {slot}: mean log ratio {np.mean(y):+.2%}, "
            f"sd {np.std(y, ddof=1):.2%} ({len(y)} rounds)"
        )


def _side_round(run_id: str) -> tuple[str, str]:
    """("base" or "head", the round's number) of a duet round's run id run_<stamp>_<side>NN_<hex>."""
    tag = run_id.split("_")[2]
    return tag[:4], tag[4:]


def _pooled_log_ratio(g: Grid, q: float) -> float:
    """log(q of head's pooled rounds / q of base's pooled rounds)."""
    whole = Grid(g.values_ns, g.base.sum(axis=0, keepdims=True), g.head.sum(axis=0, keepdims=True))
    qb, qh = clustered.round_quantiles(whole, q)
    return float(np.log(qh[0] / qb[0]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("pools", nargs="+", type=Path)
    ap.add_argument("--k", type=int, default=AB_ROUNDS.repeats)
    ap.add_argument("--draws", type=int, default=4000)
    args = ap.parse_args()
    for pool in args.pools:
        report(pool, args.k, args.draws)
        client_records(pool)
        slot_cpu(pool)


if __name__ == "__main__":
    main()
