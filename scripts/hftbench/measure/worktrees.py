"""Commits checked out into git worktrees with their server built: what `ab` and `bisect` share.

Each commit gets a detached worktree and its own bin/hft-server. A trusted commit (ab's base)
builds in one shared cargo target dir, so a commit rebuilds only what changed. Code under
test (ab's head, bisect's commits) builds in the sandbox (sandbox.py) with a scratch target
dir of its own, seeded from the shared one: it can neither write the shared dir (and so the
next job's base) nor anything else of the harness, and its bin/hft-server becomes a launcher
that starts the built server in the sandbox too. The worktrees are removed on every way out.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Iterable
from pathlib import Path

from ..errors import UsageError
from . import sandbox

# --locked: a build uses the commit's Cargo.lock as it is, or fails; never resolves anew.
DEFAULT_BUILD = (
    "cargo build --release --locked --quiet -p hft-server && "
    'install -D -m 755 "$CARGO_TARGET_DIR/release/hft-server" bin/hft-server'
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


def build_server(
    repo: Path,
    sha: str,
    side_dir: Path,
    build_cmd: str,
    target_dir: Path,
    *,
    scratch: Path | None = None,
) -> float:
    """Check `sha` out into side_dir/worktree, run build_cmd there, copy its bin/hft-server
    into side_dir/bin. With `scratch` (sandbox.scratch_for) the build runs in the sandbox with
    scratch/target as its target dir, and side_dir/bin/hft-server is a launcher of the built
    server in the sandbox (the binary in side_dir/sandboxed/). Both ways the build sees the
    same short environment (sandbox.build_env). Returns the build's wall time (excluded from
    the measurement)."""
    tree = side_dir / "worktree"
    git_output(repo, "worktree", "add", "--detach", "--force", str(tree), sha)
    if scratch is None:
        home = target_dir.parent / f"{target_dir.name}-home"
        home.mkdir(parents=True, exist_ok=True)
        cmd = ["bash", "-c", build_cmd]
        env = sandbox.build_env(home, target_dir)
    else:
        (scratch / "tmp").mkdir(exist_ok=True)
        env = sandbox.build_env(scratch / "home", scratch / "target", scratch / "tmp")
        _fetch_crates(tree, build_cmd, env)
        # The worktree's .git file stays read-only: pointed elsewhere (a config with
        # core.fsmonitor), the harness's own git commands in the worktree would run its code.
        cmd = sandbox.wrap(["bash", "-c", build_cmd], writable=(tree, scratch), readonly=(tree / ".git",),
                           env=env, cwd=tree)  # fmt: skip
    started = time.perf_counter()
    proc = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    took = time.perf_counter() - started
    log = side_dir / "build.log"
    log.write_text(proc.stdout + proc.stderr)
    built = tree / "bin" / "hft-server"
    if proc.returncode != 0 or not built.is_file():
        why = f"exit {proc.returncode}" if proc.returncode else "it left no bin/hft-server"
        hint = "; it built in a sandbox: only its worktree and scratch are writable" if scratch else ""
        raise UsageError(f"building {sha[:10]} failed ({why}{hint}); see {log}")
    # A symlink would make this copy read whatever it names (a file of the runner) into the output.
    inside = [tree.resolve()] + ([scratch.resolve()] if scratch else [])
    if not any(built.resolve().is_relative_to(d) for d in inside):
        raise UsageError(f"building {sha[:10]}: bin/hft-server links outside its worktree: {built.resolve()}")
    if scratch is None:
        (side_dir / "bin").mkdir(exist_ok=True)
        shutil.copy2(built, side_dir / "bin" / "hft-server")
    else:
        (side_dir / "sandboxed").mkdir(exist_ok=True)
        shutil.copy2(built.resolve(), side_dir / "sandboxed" / "hft-server")
        sandbox.server_launcher(side_dir / "sandboxed" / "hft-server", side_dir / "bin" / "hft-server")
    return took


def _fetch_crates(tree: Path, build_cmd: str, env: dict[str, str]) -> None:
    """The crates a sandboxed cargo build needs, fetched first by the harness: in the sandbox
    the cargo home is read-only. `cargo fetch` runs no code of the commit, and from this
    process's folder it reads this checkout's .cargo/config.toml, not the commit's."""
    if "cargo" not in build_cmd or not (tree / "Cargo.lock").is_file() or not shutil.which("cargo"):
        return
    fetch_env = {**env, "HOME": os.environ.get("HOME", env["HOME"])}
    proc = subprocess.run(["cargo", "fetch", "--locked", "--manifest-path", str(tree / "Cargo.toml")],
                          env=fetch_env, capture_output=True, text=True)  # fmt: skip
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["no message"])[-1]
        raise UsageError(f"cargo fetch --locked for {tree} failed ({last}): is its Cargo.lock up to date?")


def remove_worktrees(repo: Path, trees: Iterable[Path]) -> None:
    """Remove these worktrees (those that exist) and prune git's record of them."""
    for tree in trees:
        if tree.exists():
            subprocess.run(
                ["git", "-C", str(repo), "worktree", "remove", "--force", str(tree)], capture_output=True
            )
    subprocess.run(["git", "-C", str(repo), "worktree", "prune"], capture_output=True)
