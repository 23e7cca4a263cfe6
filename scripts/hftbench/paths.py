"""Where the repository's parts are. Everything else takes explicit paths, so tests and the
gate's A/B runs (other worktrees, other bin/ folders) can point anywhere."""

from __future__ import annotations

import datetime as dt
import os
import secrets
from pathlib import Path

_PACKAGE_ROOT = Path(__file__).resolve().parents[2]  # scripts/hftbench/ -> the repository


def repo_root(start: Path | None = None) -> Path:
    """The repository holding bench-config/scenarios.yaml: $HFTBENCH_ROOT, else the nearest
    parent of `start` (default: the current directory), else the one this package lives in."""
    env = os.environ.get("HFTBENCH_ROOT")
    if env:
        return Path(env).resolve()
    here = (start or Path.cwd()).resolve()
    for candidate in (here, *here.parents):
        if (candidate / "bench-config" / "scenarios.yaml").is_file():
            return candidate
    return _PACKAGE_ROOT


def config_file(root: Path | None = None) -> Path:
    return (root or repo_root()) / "bench-config" / "scenarios.yaml"


def gates_file(root: Path | None = None) -> Path:
    """The gates the verdict judges by, from the same repository as scenarios.yaml."""
    return (root or repo_root()) / "bench-config" / "gates.yaml"


def pool_file(root: Path | None = None) -> Path:
    """The runners of the pool (pool.py), from the same repository as scenarios.yaml."""
    return (root or repo_root()) / "bench-config" / "pool.yaml"


def result_schema_file(root: Path | None = None) -> Path:
    return (root or repo_root()) / "bench-config" / "schema" / "result.schema.json"


def bin_dir(root: Path | None = None) -> Path:
    return (root or repo_root()) / "bin"


def results_dir(root: Path | None = None) -> Path:
    return (root or repo_root()) / "results"


def tuning_script(root: Path | None = None) -> Path:
    return (root or repo_root()) / "hft" / "scripts" / "setup_hft_system.sh"


def shown(path: str | Path) -> str:
    """A path as a report may show it: relative to the repository when inside it, else its name.

    Verdict texts are posted to pull requests; a runner's absolute temp paths mean nothing there.
    """
    p = Path(path)
    try:
        return str(p.resolve().relative_to(repo_root()))
    except (ValueError, OSError):
        return p.name


def utc_stamp() -> str:
    """Now in UTC to the second, as run folders begin: 20261122T030000Z."""
    return dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")


def utc_iso() -> str:
    """Now in UTC to the second, RFC 3339: a run's started_at and finished_at."""
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def fresh_dir(parent: Path, name: str) -> Path:
    """Create parent/<name>_<6 random hex digits>: a folder no other run has, here or on
    another runner. The folder name is the run_id the history store keys runs by, and two
    runs started in the same second (two jobs, two runners) must not replace each other;
    mkdir is the check, so a token already taken here is drawn again (no race)."""
    Path(parent).mkdir(parents=True, exist_ok=True)
    while True:
        path = Path(parent) / f"{name}_{secrets.token_hex(3)}"
        try:
            path.mkdir()
            return path
        except FileExistsError:
            continue


def run_dir(parent: Path, tag: str = "", number: int | None = None, *, stamp: str | None = None) -> Path:
    """A run's fresh folder, the one place its name is spelled: parent/run_<UTC>_<hex>, or
    parent/run_<UTC>_<tag><NN>_<hex> for round `number` (1-based) of a side or kind `tag`
    (ab's base01, bisect's cand03, calibrate's solo02, run --rounds' r04): the round NN is
    how a pair's members find each other (judge/designs.round_key, judge/hidden.py).
    `stamp`: one time for several folders (a duet's two sides)."""
    name = f"run_{stamp or utc_stamp()}"
    if number is not None:
        name += f"_{tag}{number:02d}"
    return fresh_dir(parent, name)


def round_dir(out: Path, side: str, number: int, *, stamp: str | None = None) -> Path:
    """Round `number`'s run of `side` in a comparison's folder: out/<side>/run_<UTC>_<side><NN>_<hex>
    (a duet's and paired rounds' alike)."""
    return run_dir(out / side, side, number, stamp=stamp)
