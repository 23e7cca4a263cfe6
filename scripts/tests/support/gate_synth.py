"""Synthetic runs for the gate's tests: HDR histograms and run folders with known effects."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from hdrh.histogram import HdrHistogram


def encode_ns(samples_ns: np.ndarray) -> str:
    """Record nanosecond samples into the clients' histogram layout; base64 V2 (HISTF…).

    The counts are filled at once with numpy at the indices hdrh's record_value computes (3
    significant digits from 1 ns: 2048 sub-buckets, a bucket's width doubling with each power of
    two above them), and total, min and max set as it would set them: the same bytes as a
    record_value per sample (test_gate_synth.py), without 2,000 pure-Python calls per run that
    were a third of the synthetic gate tests' CPU."""
    hist = HdrHistogram(1, 60_000_000_000, 3)
    ns = np.maximum(1, np.round(samples_ns)).astype(np.int64)
    bucket = np.maximum(0, np.frexp((ns | 2047).astype(np.float64))[1] - 11)
    index = ((bucket + 1) << 10) + (ns >> bucket) - 1024
    kept = index < hist.counts_len  # record_value refuses a value past the highest trackable
    if kept.any():
        lowered = (ns[kept] >> bucket[kept]) << bucket[kept]  # the bucket's smallest value
        counts = np.ctypeslib.as_array(hist.counts)
        counts += np.bincount(index[kept], minlength=hist.counts_len).astype(counts.dtype)
        hist.total_count = int(kept.sum())
        hist.min_value = int(lowered.min())
        hist.max_value = int(lowered.max())
    return hist.encode().decode()


def latency_run(
    rng: np.random.Generator,
    n: int,
    *,
    median_us=100.0,
    tail_scale=1.0,
    body_scale=1.0,
    slow_fraction=0.0,
    slow_us=0.0,
    run_noise=0.03,
) -> np.ndarray:
    """n latencies (ns): a lognormal body, a tail scaled by `tail_scale` above the median,
    a slow mode of `slow_fraction` at about `slow_us`; each run gets a common jitter."""
    jitter = np.exp(rng.normal(0, run_noise))
    x = rng.lognormal(np.log(median_us), 0.35, size=n) * jitter
    med = median_us * jitter
    x = np.where(x > med, med * body_scale + (x - med) * tail_scale, x * body_scale)
    if slow_fraction:
        k = int(n * slow_fraction)
        x[:k] = rng.normal(slow_us, slow_us * 0.05, size=k)
    return x * 1000.0


def result_doc(scenario: str, client: str, samples_ns: np.ndarray, errors: int = 0) -> dict:
    """A client result (Contract 3) for the given latencies; only what the gate reads is exact."""
    n = len(samples_ns)
    dur = float(samples_ns.sum() / 1e9 / 10) or 1.0
    q = {
        k: float(np.percentile(samples_ns, p) / 1000)
        for k, p in (("p50", 50), ("p90", 90), ("p95", 95), ("p99", 99), ("p999", 99.9), ("p9999", 99.99))
    }
    return {
        "schema_version": 1,
        "client": client,
        "client_version": "test",
        "scenario": scenario,
        "mode": "closed",
        "target_rate_rps": None,
        "orders": n + errors,
        "connections": 10,
        "warmup": 0,
        "started_at": "2026-11-22T03:00:00Z",
        "duration_s": dur,
        "ok": n,
        "errors": errors,
        "error_kinds": {"connect": 0, "timeout": errors, "http_4xx": 0, "http_5xx": 0, "other": 0},
        "throughput_rps": n / dur,
        "latency_us": {
            "min": float(samples_ns.min() / 1000),
            "mean": float(samples_ns.mean() / 1000),
            "stddev": float(samples_ns.std() / 1000),
            **q,
            "max": float(samples_ns.max() / 1000),
        },
        "histogram": {"format": "hdr-v2-deflate-base64", "unit": "ns", "data": encode_ns(samples_ns)},
        "extra": {},
    }


def write_run(
    folder: Path,
    run_id: str,
    cells: dict[tuple[str, str], list[dict]],
    *,
    suite="pr",
    commit="a" * 40,
    branch="main",
    date="2026-11-22T03:00:00Z",
    fingerprint=None,
) -> Path:
    """A run folder as `hftbench run` writes it (results.json with cells, one per repeat)."""
    path = folder / run_id
    path.mkdir(parents=True)
    repeats = max(len(v) for v in cells.values())
    doc_cells = []
    for (scenario, client), docs in cells.items():
        for i, doc in enumerate(docs, 1):
            name = f"{client}.json" if repeats == 1 else f"{client}.r{i}.json"
            (path / scenario).mkdir(exist_ok=True)
            (path / scenario / name).write_text(json.dumps(doc))
            doc_cells.append(
                {
                    "scenario": scenario,
                    "client": client,
                    "repeat": i,
                    "status": "ok",
                    "reason": None,
                    "result": doc,
                    "file": f"{scenario}/{name}",
                    "wall_s": 1.0,
                    "exit_code": 0,
                    "server_orders": doc["ok"],
                }
            )
    fp = fingerprint or {
        "cpu_model": "Test CPU",
        "cores": 2,
        "kernel": "6.1.0-test",
        "governor": "unavailable",
        "isolated_cpus": "none",
        "smt": "notsupported",
    }
    results = {
        "schema_version": 1,
        "run_id": run_id,
        "suite": suite,
        "started_at": date,
        "finished_at": date,
        "complete": True,
        "fingerprint": fp,
        "git": {"commit": commit, "branch": branch, "dirty": False, "message": "test commit", "author": "T"},
        "tools": {},
        "server": {},
        "targets": {},
        "scenarios": {},
        "repeats": repeats,
        "cells": doc_cells,
    }
    (path / "results.json").write_text(json.dumps(results))
    return path
