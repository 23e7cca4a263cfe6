"""What `hftbench combine` believes of a leg: only what a base-controlled source says, and the
leg's data only where it agrees with it (pure checks; combine.py applies them).

A leg's artifact is written on a runner where the pull request's code ran, so every byte of
it is the PR's to forge: its verdict.json (`guarded`, `looks`, `design`, commits, run ids) and
its run folders alike. The pool's verdict therefore takes
- the calibration (what a runner guards, and its weights) from the record the leg uploaded
  only when its sha256 is the one the base's pool.yaml gives that runner
  (`calibration_sha256`); a runner without one judges by the base's gates.yaml `series`, and a
  leg that brings a record anyway is refused (the pool's file is out of date, or it is forged);
- the looks (alpha / looks) and the bounds of the rounds from the pool's `rounds`;
- the design from the base's scenarios.yaml (a duet where every cell measured allows one);
- the commits from the pull-request event (`--base-sha`, `--head-sha`, given by bench.yml
  from github.event.pull_request.*.sha), never from the leg;
and refuses a leg whose data disagree with those, or with themselves: the runner name its
verdict carries (written by the base's pr-bench from the matrix) against the artifact's,
every run's commit and suite, run ids (a plain name, its folder's, unique within and across
the legs: a leg's folder copied under another name repeats them), every round holding every
cell the leg measured in any round, and each cell's counts, failed cells' too (measured orders = ok +
errors, at most the scenario's and, for a closed-loop cell that ran whole, exactly them; the
histogram holds every ok order). The failures themselves combine recounts from the run
folders (judge/failures.py via sides.side_from_runs), never from a leg's verdict.

What this cannot see: a leg whose PR code wrote internally consistent histograms for the right
commits. Only keeping the PR's processes away from the artifact folder stops that (the
sandbox of issue 36 part 1); docs/adopting.md says so.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..config import Config
from ..design_names import DUET, PAIRED_ROUNDS
from ..errors import UsageError
from ..histograms import decode
from ..measure import duet
from ..pool import RunnerConfig
from ..results import Run
from .pooled import record_mdes
from .rounds import AB_ROUNDS, Rounds

RUN_ID = re.compile(r"^run_[0-9A-Za-z_-]{1,80}$")
CALIBRATION = "calibration.json"  # the runner's record, copied by its leg beside verdict.json
MIN_ROUNDS = 2  # an interrupted leg adds its rounds from two a side (combine's module doc)


class Refused(Exception):
    """A leg combine does not believe: the message names the leg, the field and the fix."""


@dataclass(frozen=True)
class Expect:
    """What combine knows without the legs: the base's files and the event."""

    suite: str
    rounds: Rounds  # the pool's: looks, and the bounds of rounds a side
    cfg: Config  # the base's scenarios.yaml: the suite's cells and the design they allow
    base_sha: str | None = None  # the event's; None: not checked (a push's legs have their own baselines)
    head_sha: str | None = None


@dataclass(frozen=True)
class Trusted:
    """A vetted leg's figures, from base-controlled sources (module doc)."""

    guards: dict[str, str | None] | None  # "series metric" -> None (guarded) or why not; None: gates.yaml
    mdes: dict[str, float]  # the record's A/A MDEs: the pool's weights ({}: equal)
    digest: str | None  # sha256 of the record the pool names
    design: str


def pool_rounds(path: Path, given: dict[str, int] | None) -> Rounds:
    """The pool's `rounds` over ab's defaults (pool.py keeps the mapping as written)."""
    r = replace(AB_ROUNDS, **(given or {}))
    if not r.repeats <= r.max_repeats:
        raise UsageError(
            f"{path}: `rounds` gives repeats {r.repeats} > max_repeats {r.max_repeats} "
            "(ab's default fills what it omits); set both"
        )
    return r


def artifact_problems(legs_dir: Path, prefix: str, names: list[str]) -> list[str]:
    """Every folder in `legs_dir` must be a runner's artifact, `<prefix><runner>`, for a runner
    of the pool that takes the suite; anything else was uploaded by someone the pool did not
    assign (a leg's PR code holding the upload token), and fails the check."""
    if not legs_dir.is_dir():
        return []
    wanted = {f"{prefix}{n}" for n in names}
    return [
        f"unexpected artifact {p.name!r}: the pool (pool.yaml) assigns no runner of this suite that "
        f"name (its artifacts: {', '.join(sorted(wanted))}); a leg uploaded under a name not its own"
        for p in sorted(legs_dir.iterdir())
        if p.name not in wanted
    ]


def trust(
    name: str,
    folder: Path,
    doc: dict[str, Any],
    runs: dict[str, list[Run]],
    runner: RunnerConfig,
    ex: Expect,
) -> Trusted:
    """The leg's trusted figures, or Refused naming the leg and the field."""

    def refuse(field: str, what: str) -> Refused:
        return Refused(f"leg {name}: {field}: {what}")

    if doc.get("pool_leg") != name:
        said = doc.get("pool_leg")
        raise refuse(
            "verdict.json pool_leg",
            f"{said!r}, but its artifact is runner {name}'s (bench.yml's "
            "pr-bench writes the matrix's name there): another leg's verdict",
        )
    if doc.get("suite") != ex.suite:
        raise refuse("verdict.json suite", f"{doc.get('suite')!r}, the pool's legs ran {ex.suite!r}")
    _commits(doc, runs, ex, refuse)
    _rounds(doc, runs, ex.rounds, refuse)
    _cells(runs, ex, runner, refuse)
    design = _design(doc, runs, ex.cfg, refuse)
    guards, mdes, digest = _calibration(folder, runner, refuse)
    return Trusted(guards, mdes, digest, design)


def _commits(doc, runs, ex: Expect, refuse) -> None:
    for side, want in (("base", ex.base_sha), ("head", ex.head_sha)):
        said = (doc.get(side) or {}).get("commit")
        if want and said != want:
            raise refuse(
                f"verdict.json {side}.commit",
                f"{str(said)[:12]}, the pull request's {side} is "
                f"{want[:12]} (the event's): it measured other commits",
            )
        for run in runs[side]:
            if run.git.get("commit") != said:
                raise refuse(
                    f"{side} run {run.run_id} results.json git.commit",
                    f"{str(run.git.get('commit'))[:12]}, its side is {str(said)[:12]}: "
                    "another commit's results",
                )
            if run.suite != ex.suite:
                raise refuse(
                    f"{side} run {run.run_id} results.json suite", f"{run.suite!r}, not {ex.suite!r}"
                )


def _rounds(doc, runs, rounds: Rounds, refuse) -> None:
    """looks as the pool's rounds give them; rounds a side within the pool's bounds (a complete
    leg from `repeats`, an interrupted one from MIN_ROUNDS) and equal to the runs listed."""
    if doc.get("looks") != rounds.looks:
        span = f"{rounds.repeats} to {rounds.max_repeats} by {rounds.step}"
        said = doc.get("looks")
        raise refuse(
            "verdict.json looks",
            f"{said!r}, the pool's rounds (pool.yaml `rounds`: {span}) give {rounds.looks}",
        )
    n = (doc.get("ab") or {}).get("rounds_per_side")
    low = MIN_ROUNDS if doc.get("partial") else rounds.repeats
    if not isinstance(n, int) or not low <= n <= rounds.max_repeats:
        raise refuse(
            "verdict.json ab.rounds_per_side", f"{n!r}, outside the pool's {low}..{rounds.max_repeats}"
        )
    for side in ("base", "head"):
        if len(runs[side]) != n:
            raise refuse(f"verdict.json {side}.run_ids", f"{len(runs[side])} runs for {n} rounds a side")


def run_ids(name: str, doc: dict[str, Any]) -> dict[str, list[str]]:
    """side -> the run ids the leg lists, each a plain run folder name and listed once (a path
    there could reach another leg's folder); Refused otherwise."""
    out, seen = {}, set()
    for side in ("base", "head"):
        ids = (doc.get(side) or {}).get("run_ids")
        if not isinstance(ids, list) or not ids:
            raise Refused(f"leg {name}: verdict.json {side}.run_ids: none listed ({ids!r})")
        for rid in ids:
            if not isinstance(rid, str) or not RUN_ID.match(rid):
                raise Refused(f"leg {name}: verdict.json {side}.run_ids: {rid!r} is not a run folder name")
            if rid in seen:
                raise Refused(f"leg {name}: verdict.json {side}.run_ids: {rid} is listed twice")
            seen.add(rid)
        out[side] = ids
    return out


def _cells(runs, ex: Expect, runner, refuse) -> None:
    """Each run is the folder it sits in, measures only cells of the suite (and of the runner's
    split), and its counts add up."""
    suite = ex.cfg.suite(ex.suite)
    allowed = set(runner.get("scenarios") or suite.scenarios) & set(suite.scenarios)
    measured = {(c.scenario, c.client) for side_runs in runs.values() for run in side_runs for c in run.cells}
    for side, side_runs in runs.items():
        for run in side_runs:
            where = f"{side} run {run.path.name} results.json"
            if run.run_id != run.path.name:
                raise refuse(
                    f"{where} run_id", f"{run.run_id!r}: a results.json moved from another run folder"
                )
            # Every round holds every cell the leg measured in any round: a round's failed
            # cell left out of results.json would hide its failures from the count.
            missing = measured - {(cell.scenario, cell.client) for cell in run.cells}
            if missing:
                names = ", ".join(f"{sc}/{client}" for sc, client in sorted(missing))
                raise refuse(f"{where} cells", f"no cell of {names}: a cell left out of the round")
            for cell in run.cells:
                if cell.scenario not in allowed:
                    known = ", ".join(sorted(allowed))
                    raise refuse(
                        f"{where} cell {cell.scenario}/{cell.client}",
                        f"not a scenario of suite {ex.suite} on this runner ({known})",
                    )
                r = cell.result
                if r is None:
                    continue
                if r.ok + r.errors != r.orders or r.orders < 1:
                    raise refuse(
                        f"{where} cell {cell.scenario}/{cell.client} orders",
                        f"{r.orders} measured, but ok {r.ok} + errors {r.errors}",
                    )
                # At most the scenario's orders, not exactly, in open loop: an open-loop duet
                # sends each order to one side at random, so a side measures about half of
                # them. A closed-loop cell that ran whole measured every one: failed orders
                # dropped from its counts would leave it short.
                planned = (run.scenarios.get(cell.scenario) or {}).get("orders")
                if planned is not None and r.orders > planned:
                    raise refuse(
                        f"{where} cell {cell.scenario}/{cell.client} orders",
                        f"{r.orders}, more than the run's scenario sends ({planned})",
                    )
                if cell.ok and r.mode == "closed" and planned is not None and r.orders != planned:
                    what = f"{r.orders}, its closed-loop scenario sends {planned}: orders left out"
                    raise refuse(f"{where} cell {cell.scenario}/{cell.client} orders", what)
                count = decode(r.histogram_data).get_total_count() if r.histogram_data else 0
                if count != r.ok:
                    cell_name = f"{where} cell {cell.scenario}/{cell.client} histogram"
                    raise refuse(cell_name, f"holds {count} latencies for {r.ok} ok orders: not this cell's")


def _design(doc, runs, cfg: Config, refuse) -> str:
    """The design ab chooses for the cells the leg measured (commands/ab.choose_design, auto):
    a duet where every cell qualifies, else paired rounds."""
    cells = {(c.scenario, c.client) for side in runs.values() for run in side for c in run.cells}
    why = [w for sc, client in sorted(cells) if (w := duet.qualifies(cfg.scenario(sc), client))]
    want = PAIRED_ROUNDS if why else DUET
    said = (doc.get("ab") or {}).get("design") or (doc.get("design") or {}).get("name")
    if said != want:
        raise refuse("verdict.json design", f"{said!r}, the base's scenarios.yaml gives its cells {want!r}")
    return want


def _calibration(
    folder: Path, runner, refuse
) -> tuple[dict[str, str | None] | None, dict[str, float], str | None]:
    path = folder / CALIBRATION
    want = runner.get("calibration_sha256")
    got = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None
    if want is None:
        if got is not None:
            raise refuse(
                CALIBRATION,
                f"the leg uploaded a record (sha256 {got}), but pool.yaml gives "
                f"runner {runner['name']} no calibration_sha256: add that digest if it is the "
                "runner's record",
            )
        return None, {}, None
    if got is None:
        raise refuse(
            CALIBRATION,
            "missing: pool.yaml gives this runner a calibration_sha256, and the leg "
            "uploaded no record (is HFTBENCH_CALIBRATION set on the runner?)",
        )
    if got != want:
        raise refuse(
            CALIBRATION,
            f"sha256 {got}, pool.yaml's calibration_sha256 for runner {runner['name']} "
            f"is {want}: not the runner's record (re-calibrated? update pool.yaml)",
        )
    try:
        record = json.loads(path.read_text())
        rows = record["guards"]
        guards = {
            f"{r['series']} {r['metric']}": None if r.get("guarded") else r.get("why_not") or "not guarded"
            for r in rows
        }
    except (ValueError, KeyError, TypeError) as exc:
        raise refuse(CALIBRATION, f"not a calibration record ({exc})") from exc
    return guards, record_mdes(record), got
