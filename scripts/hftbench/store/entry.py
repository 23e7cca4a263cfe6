"""One commit's runs as one history-store entry (docs/history-store.md): the merged histogram
and percentiles of each series, the run-level spread of P50 and P99, the commit, and the
verdict's stored copy as given (publish/store_text.py reduces a Verdict to it and renders
what the dashboard shows; the store renders nothing). history.py writes it; this module only
builds it.
"""

from __future__ import annotations

import os
from typing import cast

import numpy as np
from hdrh.histogram import HdrHistogram

from .. import histograms, metrics, results
from ..judge import stats
from ..measure.fingerprint import runner_id
from ..series import Series
from ..store_shapes import RunEntry, SeriesEntry
from ..stored_verdict import StoredVerdict

SPREAD_METRICS = (metrics.P50, metrics.P99)  # the dashboard's noise bands


def run_entry(run: results.Run | list[results.Run], verdict: StoredVerdict | None = None) -> RunEntry:
    """One commit's runs as one store entry: one result per scenario × client.

    Several runs (the rounds `hftbench ab` measured of one commit) are one trend point: their
    histograms are merged, and `spread` holds the run-level interval of P50 and P99 (the
    same expanded bootstrap the gate uses), so the chart can draw the noise around the point.
    A run's own --repeat cells are merged into that run first.
    """
    runs = run if isinstance(run, list) else [run]
    if not runs:
        raise ValueError("run_entry: no run")
    per_series: dict[tuple[str, str], list[list[results.ClientResult]]] = {}
    grown: dict[tuple[str, str], list[float]] = {}  # each cell's memory per order, where read
    for one in runs:
        cells: dict[tuple[str, str], list[results.ClientResult]] = {}
        for cell in one.cells:
            if cell.ok and cell.result is not None:
                cells.setdefault((cell.scenario, cell.client), []).append(cell.result)
                if cell.memory_bytes_per_order is not None:
                    grown.setdefault((cell.scenario, cell.client), []).append(cell.memory_bytes_per_order)
        for key, res in cells.items():
            per_series.setdefault(key, []).append(res)
    out = [
        _series_entry(scenario, client, rounds, stats) for (scenario, client), rounds in per_series.items()
    ]
    for entry in out:  # the server's memory per order, the mean over its cells (absent: never read)
        values = grown.get((entry["scenario"], entry["client"]))
        if values:
            entry["memory_bytes_per_order"] = round(float(np.mean(values)), 2)
    first, last = runs[0], runs[-1]
    git = last.git or {}
    sha = git.get("commit")
    return {
        "run_id": first.run_id,
        "date": first.started_at,
        "commit": sha,
        "branch": git.get("branch"),
        "message": (git.get("message") or "").splitlines()[0] if git.get("message") else "",
        "author": git.get("author"),
        "url": _commit_url(sha),
        "job_url": _job_url(),
        "runner": runner_id(last.fingerprint),
        "dirty": any(bool((r.git or {}).get("dirty")) for r in runs),
        "rounds": len(runs),
        "results": out,
        "verdict": verdict.to_json() if verdict else None,
    }


def _series_entry(scenario: str, client: str, rounds: list[list[results.ClientResult]], stats) -> SeriesEntry:
    """The pooled numbers of every repeat of every round (series.py), and the run-level
    spread of the rounds (one round = one run's repeats of this series, merged)."""
    pooled = Series.of_results(scenario, client, [r for res in rounds for r in res])
    entry: dict[str, object] = {  # its percentile keys are the metrics' names
        "scenario": scenario,
        "client": client,
        "orders": sum(r.orders for res in rounds for r in res),
        "ok": pooled.samples,
        "errors": pooled.errors,
        "rounds": len(rounds),
    }
    counts = pooled.pooled_counts()
    if counts is not None:
        values_ns, merged = counts
        entry.update({m.name: round(pooled.quantile_us(m.quantile), 3) for m in metrics.STORE_PERCENTILES})
        entry["max_us"] = round(float(values_ns[np.flatnonzero(merged)[-1]]) / 1000.0, 3)
        per_round = [Series.of_results(scenario, client, res).merged_histogram() for res in rounds]
        encoded = [h.encode().decode() for h in per_round if h is not None]
        if len(encoded) >= 2:
            g = histograms.grid(encoded, [])
            rng = np.random.default_rng(len(encoded))
            entry["spread"] = {
                m.name: [
                    round(x / 1000.0, 3)
                    for x in stats.bootstrap_quantile(g.values_ns, g.base, m.quantile, rng=rng)
                ]
                for m in SPREAD_METRICS
            }
        entry["histogram"] = encode_counts(values_ns, merged)
    else:
        entry.update({m.name: None for m in (*metrics.STORE_PERCENTILES, metrics.MAX)}, histogram=None)
    entry["throughput_rps"] = round(pooled.throughput_rps() or 0.0, 1)
    return cast(SeriesEntry, entry)


def encode_counts(values_ns: np.ndarray, counts: np.ndarray) -> str:
    """A merged count row back into the clients' histogram encoding."""
    hist = HdrHistogram(histograms.LOWEST_NS, histograms.HIGHEST_NS, histograms.SIGNIFICANT_DIGITS)
    for v, c in zip(values_ns[counts > 0].tolist(), counts[counts > 0].tolist(), strict=True):
        hist.record_value(int(v), int(c))
    return hist.encode().decode()


def _commit_url(sha: str | None) -> str | None:
    server, repo = os.environ.get("GITHUB_SERVER_URL"), os.environ.get("GITHUB_REPOSITORY")
    return f"{server}/{repo}/commit/{sha}" if sha and server and repo else None


def _job_url() -> str | None:
    """The workflow run that measured this entry (in CI), for the dashboard's job link."""
    server, repo, run_id = (
        os.environ.get(k) for k in ("GITHUB_SERVER_URL", "GITHUB_REPOSITORY", "GITHUB_RUN_ID")
    )
    return f"{server}/{repo}/actions/runs/{run_id}" if server and repo and run_id else None
