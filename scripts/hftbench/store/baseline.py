"""One side of a comparison from what a user names: run folders, or a history store's
baseline (the runs the store keeps for a suite, branch and runner). The store is read here,
above the judge, which only ever sees the Side this builds (judge/sides.py)."""

from __future__ import annotations

from pathlib import Path

from ..errors import UsageError
from ..judge.sides import Side, is_store, load_runs, side_from_runs, side_from_store_runs
from . import history


def load_side(
    path: Path | str,
    *,
    suite: str | None = None,
    branch: str | None = None,
    runner: str | None = None,
    last: int = 10,
) -> Side:
    """Load run folders, or a store's baseline (the filters apply to a store only)."""
    path = Path(path)
    if not path.exists():
        raise UsageError(f"{path}: no such folder; pass a run folder, a folder of runs or a history store")
    if is_store(path):
        if not suite:
            raise UsageError(f"{path}: a history store needs --suite (or a head run that names its suite)")
        try:
            entries = history.baseline_runs(path, suite=suite, branch=branch, runner=runner, last=last)
        except history.StoreError as exc:
            raise UsageError(str(exc)) from exc
        if not entries:
            why = history.why_no_baseline(path, suite=suite, branch=branch, runner=runner)
            raise UsageError(f"{path}: no baseline: {why}; add runs with `hftbench history add`")
        return side_from_store_runs(str(path), entries)
    return side_from_runs(str(path), load_runs(path))
