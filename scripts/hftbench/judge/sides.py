"""One side of a comparison (base or head): repeats of each series, from wherever they live.

A side is read from
- a run folder (results.json): each ok cell is one repeat (`hftbench run --repeat N`),
- a folder of run folders (e.g. results/ or ab's side folder): every run's ok cells,
- a history store (index.json): the last runs of the same suite, branch and runner
  (store/history.baseline_runs), each run one repeat.

Which of these a path is, and reading the store, is store/baseline.py's (load_side): the judge
builds sides from runs or from the entries handed to it, and never reads the store itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TypedDict

from .. import results
from ..errors import UsageError
from ..measure.lateness import fell_behind
from ..measure.procs import log_tail
from ..results_shapes import Fingerprint
from ..series import Repeat
from ..store_shapes import RunEntry

SeriesKey = tuple[str, str]  # (scenario, client)


class SideMeta(TypedDict, total=False):
    """Where a side's runs came from: its last run's (a store's runs name no suite)."""

    suite: str
    commit: str | None
    branch: str | None
    runner: str | None
    fingerprint: Fingerprint


@dataclass
class Side:
    label: str  # what the user passed, for the summary
    runs: list[str] = field(default_factory=list)  # run ids, in order
    series: dict[SeriesKey, list[Repeat]] = field(default_factory=dict)
    meta: SideMeta = field(default_factory=lambda: SideMeta())

    def add(self, key: SeriesKey, repeat: Repeat) -> None:
        self.series.setdefault(key, []).append(repeat)


def is_store(path: Path) -> bool:
    return (path / "index.json").is_file()


def side_from_runs(label: str, runs: list[results.Run]) -> Side:
    """A side from loaded run folders: every cell one repeat, failed cells included. A failure
    is data: a cell's failed orders are its repeat's `errors` by kind, and a cell that broke
    (the server died or hung, the client could not finish) is a repeat with `broken` set
    and, without a valid result, no histogram (judge/failures.py judges them; the latency
    tests use the repeats that ran whole)."""
    from ..measure.fingerprint import runner_id

    side = Side(label)
    for run in runs:
        side.runs.append(run.run_id)
        for cell in run.cells:
            rid = run.run_id if run.repeats <= 1 else f"{run.run_id}#r{cell.repeat}"
            side.add((cell.scenario, cell.client), _repeat(run, cell, rid))
    if runs:
        last = runs[-1]
        side.meta = {
            "suite": last.suite,
            "commit": last.git.get("commit"),
            "branch": last.git.get("branch"),
            "runner": runner_id(last.fingerprint),
            "fingerprint": last.fingerprint,
        }
    return side


def _repeat(run: results.Run, cell: results.Cell, rid: str) -> Repeat:
    if cell.status == results.UNMEASURED:  # the partner's server broke: nothing of its own
        return Repeat(rid, None, 0, 0, 0.0)
    broken = results.broken_why(cell)
    if broken and "hft-server" in broken:  # the server died: its last words come with it
        words = log_tail(run.path / "server.log", lines=1)[-240:]
        broken = f"{broken}; its last words: {words}" if words else broken
    r = cell.result
    if r is None:
        return Repeat(rid, None, 0, 0, 0.0, broken=broken or "no result")
    hlog = (run.path / cell.file).with_suffix(".hlog") if cell.file else None
    repeat = Repeat.of_result(r, rid, str(hlog) if hlog is not None and hlog.is_file() else None)
    repeat = replace(
        repeat, failure_kinds=tuple((k, int(n)) for k, n in r.error_kinds.items() if n), broken=broken
    )
    late = r.send_lateness.p99_us if r.send_lateness is not None else None
    if late is not None and r.target_rate_rps and fell_behind(late, r.target_rate_rps, r.connections):
        repeat = replace(repeat, behind_p99_us=late)
    if cell.server_cpu_s is not None and cell.server_orders:
        repeat = replace(repeat, cpu_us_per_order=1e6 * cell.server_cpu_s / cell.server_orders)
    grown = cell.memory_bytes_per_order
    if grown is not None:
        repeat = replace(repeat, memory_bytes_per_order=grown)
    elif cell.server_memory_unread:
        repeat = replace(repeat, memory_unread=cell.server_memory_unread)
    if run.duet_slot:
        repeat = replace(repeat, slot=run.duet_slot)
    return repeat


def whole(repeats: list[Repeat]) -> list[Repeat]:
    """The repeats that ran whole and recorded latencies: what the latency, throughput and CPU
    tests compare (a round that broke is judged by its failure row instead)."""
    return [r for r in repeats if r.broken is None and r.histogram and r.ok > 0]


def side_from_store_runs(label: str, store_runs: list[RunEntry]) -> Side:
    """A side from history-store run entries (docs/history-store.md)."""
    side = Side(label)
    for entry in store_runs:
        side.runs.append(entry["run_id"])
        for res in entry.get("results", []):
            side.add(
                (res["scenario"], res["client"]),
                Repeat.of_rate(
                    entry["run_id"],
                    res.get("histogram"),
                    int(res.get("ok", 0)),
                    int(res.get("errors", 0)),
                    float(res.get("throughput_rps") or 0.0),
                ),
            )
    if store_runs:
        last = store_runs[-1]
        side.meta = {"commit": last.get("commit"), "branch": last.get("branch"), "runner": last.get("runner")}
    return side


def load_runs(path: Path) -> list[results.Run]:
    """A run folder, or every run folder directly inside `path`; errors name the path."""
    try:
        if (path / "results.json").is_file():
            return [results.load_run(path)]
        found = results.list_runs(path)
        if found:
            return [results.load_run(p) for p in found]
    except (OSError, ValueError) as exc:
        raise UsageError(str(exc)) from exc
    raise UsageError(
        f"{path}: neither a run folder (results.json), a folder of run folders, nor a history "
        "store (index.json); pass what `hftbench run` or `hftbench history add` wrote"
    )
