"""What runs as one side of a comparison: a server build and the flags it is started with.

ab's base and head are two refs built in worktrees; bisect's good, candidate and bad are
commits; calibrate's are this checkout's build, bare and with an `--inject-*` knob. All of
them reach the measuring rig (rig.py) as a Served.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Served:
    """One side: its bin/ (hft-server, and the clients linked beside it), its hft-server
    flags, the tree its run folders' git info is read from, and the branch or name it stands
    for in those folders (None: the commit says it)."""

    bins: Path
    flags: tuple[str, ...] = ()
    root: Path | None = None
    label: str | None = None
