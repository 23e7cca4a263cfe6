"""manifest.json: what a CI leg hands to publish, one history entry a line and its verdict.

A leg's output folder (push-leg, dispatch-leg) holds measured folders in more than one shape:
the pushed commit's rounds (ab's head/, or runs/rounds/ measured alone), a report run
(runs/run_*/). The leg names each entry, its kind and the verdict that belongs to it, so
publish reads that list instead of guessing from folder names. The manifest travels in the
leg's artifact, written where the measured code ran: every path is relative, stays inside the
leg's folder, and publish checks that again when it reads it (`read`).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path, PurePosixPath

from .errors import UsageError
from .fsio import write_atomic

NAME = "manifest.json"
ROUNDS = "rounds"  # one commit's rounds: one history entry with their spread
RUN = "run"  # one run folder: one history entry
KINDS = (ROUNDS, RUN)


@dataclass(frozen=True)
class Entry:
    """One history entry: a folder of the leg (a run folder, or one commit's rounds) and the
    verdict that belongs to it (None: not compared)."""

    folder: str  # relative to the leg's folder, e.g. "ab/head" or "runs/run_…"
    kind: str  # ROUNDS or RUN
    verdict: str | None = None  # relative to the leg's folder, e.g. "verdict.json"


@dataclass
class Manifest:
    entries: list[Entry] = field(default_factory=list)

    def add(self, folder: Path, kind: str, leg: Path, verdict: Path | None = None) -> None:
        """An entry for `folder` (inside `leg`), with its verdict."""
        rel = folder.relative_to(leg).as_posix()
        self.entries.append(Entry(rel, kind, verdict.relative_to(leg).as_posix() if verdict else None))

    def write(self, leg: Path) -> Path:
        path = leg / NAME
        write_atomic(path, json.dumps({"entries": [asdict(e) for e in self.entries]}, indent=2) + "\n")
        return path


def _inside(leg: Path, rel: object, what: str) -> Path:
    """`rel` as a path inside `leg`, or UsageError: the manifest is data from the leg's runner."""
    if not isinstance(rel, str) or not rel:
        raise UsageError(f"{leg / NAME}: {what} is {rel!r}, not a relative path")
    parts = PurePosixPath(rel).parts
    if PurePosixPath(rel).is_absolute() or ".." in parts:
        raise UsageError(
            f"{leg / NAME}: {what} {rel!r} leaves the leg's folder; an entry names a folder in it"
        )
    path = leg.joinpath(*parts)
    if not path.resolve().is_relative_to(leg.resolve()):
        raise UsageError(f"{leg / NAME}: {what} {rel!r} resolves outside the leg's folder (a link)")
    return path


def read(leg: Path) -> list[tuple[Path, str, Path | None]]:
    """The entries of `leg`'s manifest as (folder, kind, verdict) paths, each checked to lie
    inside `leg`; UsageError naming the file and the field where one does not."""
    path = leg / NAME
    try:
        doc = json.loads(path.read_text())
        entries = doc["entries"]
        if not isinstance(entries, list):
            raise TypeError("entries is not a list")
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise UsageError(f"{path}: not a leg's manifest ({exc}); the leg command writes it") from exc
    out = []
    for n, e in enumerate(entries):
        if not isinstance(e, dict) or e.get("kind") not in KINDS:
            raise UsageError(f"{path}: entry {n} is not {{folder, kind ({' or '.join(KINDS)}), verdict}}")
        folder = _inside(leg, e.get("folder"), f"entry {n} folder")
        verdict = e.get("verdict")
        out.append(
            (folder, e["kind"], None if verdict is None else _inside(leg, verdict, f"entry {n} verdict"))
        )
    return out
