"""Commits checked out into git worktrees with their server built: what `ab` and `bisect` share.

Each commit gets a detached worktree and its own bin/hft-server; one cargo target dir is
shared, so a commit rebuilds only what changed. The worktrees are removed on every way out.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Iterable
from pathlib import Path

from ..errors import UsageError

DEFAULT_BUILD = (
    'cargo build --release --quiet -p hft-server && install -D -m 755 "$CARGO_TARGET_DIR/release/hft-server" '
    "bin/hft-server"
)


def git_output(repo: Path, *args: str) -> str:
    """`git -C repo ARGS`'s stdout, or UsageError naming the command and git's message."""
    proc = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True)
    if proc.returncode != 0:
        raise UsageError(f"git {' '.join(args)} in {repo} failed: {proc.stderr.strip()}")
    return proc.stdout.strip()


def resolve_commit(repo: Path, ref: str) -> str:
    """The commit a ref names, or UsageError naming it."""
    proc = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"],
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        raise UsageError(f"{ref!r} is not a commit in {repo}; pass a branch, tag or sha (git fetch it first)")
    return proc.stdout.strip()


def build_server(repo: Path, sha: str, side_dir: Path, build_cmd: str, target_dir: Path) -> float:
    """Check `sha` out into side_dir/worktree, run build_cmd there, copy its bin/hft-server
    into side_dir/bin. Returns the build's wall time (excluded from the measurement)."""
    tree = side_dir / "worktree"
    git_output(repo, "worktree", "add", "--detach", "--force", str(tree), sha)
    env = {**os.environ, "CARGO_TARGET_DIR": str(target_dir)}
    started = time.perf_counter()
    proc = subprocess.run(["bash", "-c", build_cmd], cwd=tree, env=env, capture_output=True, text=True)
    took = time.perf_counter() - started
    log = side_dir / "build.log"
    log.write_text(proc.stdout + proc.stderr)
    built = tree / "bin" / "hft-server"
    if proc.returncode != 0 or not built.is_file():
        why = f"exit {proc.returncode}" if proc.returncode else "it left no bin/hft-server"
        raise UsageError(f"building {sha[:10]} failed ({why}); see {log}")
    (side_dir / "bin").mkdir(exist_ok=True)
    shutil.copy2(built, side_dir / "bin" / "hft-server")
    return took


def remove_worktrees(repo: Path, trees: Iterable[Path]) -> None:
    """Remove these worktrees (those that exist) and prune git's record of them."""
    for tree in trees:
        if tree.exists():
            subprocess.run(
                ["git", "-C", str(repo), "worktree", "remove", "--force", str(tree)], capture_output=True
            )
    subprocess.run(["git", "-C", str(repo), "worktree", "prune"], capture_output=True)
