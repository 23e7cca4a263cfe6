"""A results folder as typed objects (docs/architecture.md, Contract 4). The gate reads runs here.

Folder layout, written by `hftbench run`:

    results/run_<UTC>_<hex>/              run_id = the folder name, e.g. run_20261122T030000Z_3fa2c1
      results.json                        the whole run (below); rewritten after every cell
      <scenario>/<client>.json            one client result (Contract 3), as the client wrote it
      <scenario>/<client>.hlog            its HdrHistogram interval log
      <scenario>/<client>.r<i>.json       the same with --repeat N > 1 (i = 1 … N)
      server.log, results.csv, report.md, plots/*.png

results.json (schema_version 1; fields are only ever added, never renamed or removed):

    {
      "schema_version": 1,
      "run_id": "run_20261122T030000Z_3fa2c1",
      "suite": "standard",                 suite name, or "adhoc" for --scenarios without a suite
      "started_at": "2026-11-22T03:00:00Z", "finished_at": "…" (null while running),
      "complete": true,                    false while running or when interrupted
      "fingerprint": {...},                host: cpu, cores, kernel, load, tuning (fingerprint.py)
      "git": {"commit", "branch", "dirty", "message", "author"},
      "tools": {"python": "3.11.2", "hftbench": "0.1.0", "cargo": "…", ...},
      "server": {"binary": "bin/hft-server", "version": "…", "flags": ["--workers", "2"]},
      "targets": {"p50_us": 500, "p99_us": 2000, "throughput_rps": 10000},
      "scenarios": {"small": {"orders": 100, "duration_s": null, "connections": 10,
                              "warmup": 10, "rate": null, "description": "…"}, ...},
      "repeats": 1,
      "skipped": [{"client": "go", "reason": "bin/client-go missing: run `make build-go`"}],
      "wall_s": 312.5,                     wall time of the whole run (null while running)
      "cells": [
        {"scenario": "small", "client": "rust", "repeat": 1,
         "status": "ok" | "failed",
         "reason": null | "exit 2: cannot connect …" | "timeout: no exit within 61 s (…)" | …,
         "result": {<the client's result JSON>} | null,
         "file": "small/rust.json" | null,  path of the result, relative to the run folder
         "wall_s": 1.234,                   wall time of the client process
         "exit_code": 0 | 1 | 2 | null,
         "server_orders": 110}              /stats total_orders after the cell (null if unknown)
      ]
    }

A cell is "ok" only when the client exited 0 or 1, its result validates against the schema
and the server counted every order the client says succeeded. The client "floor"
(bin/hft-floor, a raw TCP ping-pong) appears as an ordinary cell when present.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from . import metrics
from .fsio import write_atomic
from .results_shapes import Fingerprint, GitInfo, LinkStats, ScenarioRecord, ServerRecord

RESULTS_SCHEMA_VERSION = 1


@dataclass(frozen=True)
class Latency:
    """The `latency_us` object of a result; every field None when no order succeeded."""

    min_us: float | None
    mean_us: float | None
    stddev_us: float | None  # the seed's "jitter"
    p50_us: float | None
    p90_us: float | None
    p95_us: float | None
    p99_us: float | None
    p999_us: float | None
    p9999_us: float | None
    max_us: float | None

    @classmethod
    def from_dict(cls, d: dict[str, Any] | None) -> Latency:
        d = d or {}
        return cls(**{m.name: d.get(m.key) for m in metrics.LATENCY_US})

    def get(self, key: str) -> float | None:
        """Value by the JSON key ("p99") or the field name ("p99_us")."""
        return getattr(self, key if key.endswith("_us") else f"{key}_us")


@dataclass(frozen=True)
class ClientResult:
    """One client run (Contract 3). `raw` is the document exactly as the client wrote it."""

    raw: dict[str, Any]
    client: str
    client_version: str
    scenario: str
    mode: str  # "closed" | "open"
    target_rate_rps: float | None
    orders: int
    connections: int
    warmup: int
    started_at: str
    duration_s: float
    ok: int
    errors: int
    error_kinds: dict[str, int]
    throughput_rps: float
    latency: Latency
    uncorrected_latency: Latency | None  # open loop only
    histogram_data: str | None  # HdrHistogram V2 deflate base64, nanoseconds
    uncorrected_histogram_data: str | None
    seed: int | None = None
    send_lateness: Latency | None = None  # open loop: actual send - intended send (clients that write it)
    send_lateness_histogram_data: str | None = None
    interrupted: bool = False
    extra: dict[str, object] = field(default_factory=dict)  # the client's own keys: checked where read

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ClientResult:
        unc = d.get("uncorrected_latency_us")
        late = d.get("send_lateness_us")
        return cls(
            raw=d,
            client=d["client"],
            client_version=d.get("client_version", ""),
            scenario=d["scenario"],
            mode=d.get("mode", "closed"),
            target_rate_rps=d.get("target_rate_rps"),
            orders=int(d.get("orders", 0)),
            connections=int(d.get("connections", 1)),
            warmup=int(d.get("warmup", 0)),
            started_at=d.get("started_at", ""),
            duration_s=float(d.get("duration_s", 0.0)),
            ok=int(d.get("ok", 0)),
            errors=int(d.get("errors", 0)),
            error_kinds=dict(d.get("error_kinds", {})),
            throughput_rps=float(d.get("throughput_rps", 0.0)),
            latency=Latency.from_dict(d.get("latency_us")),
            uncorrected_latency=Latency.from_dict(unc) if unc is not None else None,
            histogram_data=(d.get("histogram") or {}).get("data"),
            uncorrected_histogram_data=(d.get("uncorrected_histogram") or {}).get("data"),
            seed=d.get("seed"),
            send_lateness=Latency.from_dict(late) if late is not None else None,
            send_lateness_histogram_data=(d.get("send_lateness_histogram") or {}).get("data"),
            interrupted=bool(d.get("interrupted", False)),
            extra=dict(d.get("extra", {})),
        )

    @property
    def samples(self) -> int:
        """Latency samples recorded = successful measured orders."""
        return self.ok

    def histogram(self, uncorrected: bool = False):
        """The decoded HdrHistogram (values in ns), or None when the result has none."""
        from hdrh.histogram import HdrHistogram

        data = self.uncorrected_histogram_data if uncorrected else self.histogram_data
        return HdrHistogram.decode(data) if data else None


@dataclass(frozen=True, kw_only=True)
class Cell:
    """One scenario × client × repeat of a run (built with keywords: ten fields read alike)."""

    scenario: str
    client: str
    status: str  # "ok" | "failed" | UNMEASURED (a duet's side whose partner's server broke)
    reason: str | None = None  # why it failed (None when ok)
    result: ClientResult | None = None  # None when the client wrote no valid result
    wall_s: float | None = None  # wall time of the client process
    repeat: int = 1  # 1 … repeats
    file: str | None = None  # result path relative to the run folder
    exit_code: int | None = None
    server_orders: int | None = None
    link: LinkStats | None = None  # network scenarios: hft-linkem's stats for this cell
    # The server process's own CPU seconds over the cell (warm-up included, like server_orders):
    # what one side of a duet cannot share with the other (judge: cpu_us_per_order).
    server_cpu_s: float | None = None
    # Where server_cpu_s was read: "cgroup" (the side's group: every process that was in it,
    # exited ones included; measure/cgroups.py) or "proc" (the server and its live descendants).
    server_cpu_from: str | None = None
    # The side's group's memory high-water mark so far (bytes), at the end of the cell.
    server_memory_peak_bytes: int | None = None
    # The server's anonymous resident memory (bytes) after the cell's reset and at its end, and
    # where both were read ("cgroup" or "proc"; measure/memory.py): memory per order is their
    # difference over server_orders (judge: memory_bytes_per_order). `server_memory_unread`:
    # why they are missing from a measured cell.
    server_memory_before_bytes: int | None = None
    server_memory_after_bytes: int | None = None
    server_memory_from: str | None = None
    server_memory_unread: str | None = None

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def memory_bytes_per_order(self) -> float | None:
        """Bytes of anonymous resident memory the server grew by over the cell, per order it
        handled (measure/memory.py); None without both readings or without orders."""
        before, after = self.server_memory_before_bytes, self.server_memory_after_bytes
        if before is None or after is None or not self.server_orders:
            return None
        return (after - before) / self.server_orders

    @classmethod
    def failure(cls, scenario: str, client: str, repeat: int, reason: str, **known: Any) -> Cell:
        """A failed cell: why, and what is known of it (result, wall_s, file, exit_code, ...)."""
        return cls(scenario=scenario, client=client, status="failed", reason=reason, repeat=repeat, **known)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Cell:
        res = d.get("result")
        return cls(
            scenario=d["scenario"],
            client=d["client"],
            status=d["status"],
            reason=d.get("reason"),
            result=ClientResult.from_dict(res) if res else None,
            wall_s=d.get("wall_s"),
            repeat=int(d.get("repeat", 1)),
            file=d.get("file"),
            exit_code=d.get("exit_code"),
            server_orders=d.get("server_orders"),
            link=d.get("link"),
            server_cpu_s=d.get("server_cpu_s"),
            server_cpu_from=d.get("server_cpu_from"),
            server_memory_peak_bytes=d.get("server_memory_peak_bytes"),
            server_memory_before_bytes=d.get("server_memory_before_bytes"),
            server_memory_after_bytes=d.get("server_memory_after_bytes"),
            server_memory_from=d.get("server_memory_from"),
            server_memory_unread=d.get("server_memory_unread"),
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "scenario": self.scenario,
            "client": self.client,
            "repeat": self.repeat,
            "status": self.status,
            "reason": self.reason,
            "result": self.result.raw if self.result else None,
            "file": self.file,
            "wall_s": self.wall_s,
            "exit_code": self.exit_code,
            "server_orders": self.server_orders,
            **({"link": self.link} if self.link is not None else {}),
            **({"server_cpu_s": self.server_cpu_s} if self.server_cpu_s is not None else {}),
            **({"server_cpu_from": self.server_cpu_from} if self.server_cpu_from is not None else {}),
            **(
                {"server_memory_peak_bytes": self.server_memory_peak_bytes}
                if self.server_memory_peak_bytes is not None
                else {}
            ),
            **{
                k: v
                for k, v in (
                    ("server_memory_before_bytes", self.server_memory_before_bytes),
                    ("server_memory_after_bytes", self.server_memory_after_bytes),
                    ("server_memory_from", self.server_memory_from),
                    ("server_memory_unread", self.server_memory_unread),
                )
                if v is not None
            },
        }


# A duet's cell that could not be measured because the *other* side's server was not serving
# (it died or did not start): counted against neither side (judge/failures.py); the broken
# side's own cell says why.
UNMEASURED = "unmeasured"


def orders_failed(result: ClientResult) -> str:
    """A cell's reason when its only fault is failed orders (the judge counts those by kind;
    any other reason means the round broke: judge/sides.py, broken_why)."""
    kinds = ", ".join(f"{k} {v}" for k, v in result.error_kinds.items() if v)
    return f"{result.errors:,} of {result.orders:,} orders failed ({kinds})"


def broken_why(cell: Cell) -> str | None:
    """Why a failed cell broke beyond its failed orders (the server died or hung, the client
    could not finish, the counts disagree); None for an ok cell or one whose only fault is
    failed orders, which the judge counts by kind instead (judge/failures.py)."""
    if cell.ok or cell.status == UNMEASURED:
        return None
    if cell.result is not None and cell.result.errors and cell.reason == orders_failed(cell.result):
        return None
    return cell.reason or "failed (no reason recorded)"


@dataclass
class Run:
    """A whole results folder: results.json as typed objects, plus where it lives."""

    path: Path
    run_id: str
    suite: str
    started_at: str
    finished_at: str | None
    complete: bool
    fingerprint: Fingerprint
    git: GitInfo
    tools: dict[str, str | None]  # tool -> the first line of its --version
    server: ServerRecord
    targets: dict[str, float]
    scenarios: dict[str, ScenarioRecord]  # scenario name -> parameters used in this run
    repeats: int
    cells: list[Cell]
    skipped: list[dict[str, str]] = field(default_factory=list)  # suite clients not found in bin/
    wall_s: float | None = None  # wall time of the whole `hftbench run`
    schema_version: int = RESULTS_SCHEMA_VERSION

    @property
    def duet_slot(self) -> str | None:
        """The slot this run's server took in a duet round ("a": the older process, "b"), or
        None outside a duet (measure/duet.py writes it; judge/clustered.py takes it out)."""
        slot = self.server.get("duet_slot")
        return slot if slot in ("a", "b") else None

    @classmethod
    def from_dict(cls, d: dict[str, Any], path: Path) -> Run:
        return cls(
            path=Path(path),
            run_id=d.get("run_id", Path(path).name),
            suite=d.get("suite", ""),
            started_at=d.get("started_at", ""),
            finished_at=d.get("finished_at"),
            complete=bool(d.get("complete", d.get("finished_at") is not None)),
            fingerprint=cast(Fingerprint, dict(d.get("fingerprint") or {})),
            git=cast(GitInfo, dict(d.get("git") or {})),
            tools=dict(d.get("tools") or {}),
            server=cast(ServerRecord, dict(d.get("server") or {})),
            targets=dict(d.get("targets") or {}),
            scenarios=cast(dict[str, ScenarioRecord], dict(d.get("scenarios") or {})),
            repeats=int(d.get("repeats", 1)),
            cells=[Cell.from_dict(c) for c in d.get("cells", [])],
            skipped=list(d.get("skipped") or []),
            wall_s=d.get("wall_s"),
            schema_version=int(d.get("schema_version", RESULTS_SCHEMA_VERSION)),
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema_version": self.schema_version,
            "run_id": self.run_id,
            "suite": self.suite,
            "started_at": self.started_at,
            "finished_at": self.finished_at,
            "complete": self.complete,
            "fingerprint": self.fingerprint,
            "git": self.git,
            "tools": self.tools,
            "server": self.server,
            "targets": self.targets,
            "scenarios": self.scenarios,
            "repeats": self.repeats,
            "skipped": self.skipped,
            "wall_s": self.wall_s,
            "cells": [c.to_dict() for c in self.cells],
        }

    def write(self) -> Path:
        """Write results.json atomically (a crash mid-write never leaves half a file)."""
        target = self.path / "results.json"
        write_atomic(target, json.dumps(self.to_dict(), indent=2) + "\n")
        return target

    def scenario_names(self) -> list[str]:
        """Scenarios in run order (first appearance)."""
        return _unique(c.scenario for c in self.cells) or list(self.scenarios)

    def client_names(self) -> list[str]:
        """Clients in first-appearance order."""
        return _unique(c.client for c in self.cells)

    def select(
        self, scenario: str | None = None, client: str | None = None, ok_only: bool = False
    ) -> list[Cell]:
        return [
            c
            for c in self.cells
            if (scenario is None or c.scenario == scenario)
            and (client is None or c.client == client)
            and (c.ok or not ok_only)
        ]

    @property
    def failed(self) -> list[Cell]:
        return [c for c in self.cells if not c.ok]


def _unique(items: Iterable[str]) -> list[str]:
    seen: dict[str, None] = {}
    for item in items:
        seen.setdefault(item, None)
    return list(seen)


def load_run(path: Path | str) -> Run:
    """A run folder (or its results.json). Raises FileNotFoundError / ValueError naming the file."""
    path = Path(path)
    if path.is_file():
        path = path.parent
    file = path / "results.json"
    if not file.is_file():
        raise FileNotFoundError(f"{file}: no results.json here; pass a folder written by `hftbench run`")
    try:
        doc = json.loads(file.read_text())
    except json.JSONDecodeError as exc:
        raise ValueError(f"{file}:{exc.lineno}: not valid JSON ({exc.msg})") from exc
    version = doc.get("schema_version")
    if version != RESULTS_SCHEMA_VERSION:
        raise ValueError(f"{file}: schema_version {version!r}, this hftbench reads {RESULTS_SCHEMA_VERSION}")
    return Run.from_dict(doc, path)


def list_runs(results_dir: Path | str) -> list[Path]:
    """Run folders under results_dir (those with a results.json), oldest first by name."""
    root = Path(results_dir)
    if not root.is_dir():
        return []
    return sorted(p for p in root.iterdir() if p.is_dir() and (p / "results.json").is_file())


def previous_run(
    run_path: Path | str, results_dir: Path | str | None = None, suite: str | None = None
) -> Path | None:
    """The newest complete run before `run_path` in the same folder (for the report's
    comparison), preferring one of the same `suite`; None when there is none."""
    run_path = Path(run_path).resolve()
    root = Path(results_dir) if results_dir else run_path.parent
    earlier = [p for p in list_runs(root) if p.resolve() != run_path and p.name < run_path.name]
    complete: list[tuple[Path, str]] = []
    for candidate in reversed(earlier):
        try:
            run = load_run(candidate)
        except (OSError, ValueError):
            continue
        if run.complete:
            complete.append((candidate, run.suite))
    same = [p for p, s in complete if suite is not None and s == suite]
    return (same or [p for p, _ in complete] or [None])[0]
