"""What runs as one side of a comparison: a server build and the flags it is started with.

ab's base and head are two refs, each exported from the harness's clone and built in a folder
of its own; bisect's good, candidate and bad are commits; calibrate's are this checkout's
build, bare and with an `--inject-*` knob. All of them reach the measuring rig (rig.py) as a
Served.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .. import paths
from ..results_shapes import GitInfo
from . import fingerprint


@dataclass(frozen=True)
class Served:
    """One side: its bin/ (hft-server, and the clients linked beside it), its hft-server
    flags, where its run folders' git info comes from, and the branch or name it stands for
    in those folders (None: the commit says it)."""

    bins: Path
    flags: tuple[str, ...] = ()
    # The repository the git info is read from: the harness's clone holding `commit` (ab,
    # bisect), or with no commit the harness's own checkout as it is (run, calibrate; None:
    # paths.repo_root()). Never the folder a commit under test was built in: its code wrote it.
    repo: Path | None = None
    commit: str | None = None  # the commit built (read from `repo` by sha); None: `repo`'s checkout
    label: str | None = None

    def git_info(self) -> GitInfo:
        """The `git` object of this side's results.json (fingerprint.commit_info / git_info)."""
        if self.commit is not None:
            info = fingerprint.commit_info(self.repo or paths.repo_root(), self.commit, self.label)
        else:
            info = fingerprint.git_info(self.repo)
        return GitInfo(**{**info, **({"branch": self.label} if self.label else {})})
