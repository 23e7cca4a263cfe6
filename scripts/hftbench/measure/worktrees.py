"""Commits exported into plain folders with their server built: what `ab` and `bisect` share.

Each commit is copied out of the harness's clone by sha (`git archive SHA | tar -x`) into
side_dir/worktree, a plain folder with no .git at all, and gets its own bin/hft-server. A
trusted commit (ab's base) builds in one shared cargo target dir, so a commit rebuilds only
what changed. Code under test (ab's head, bisect's commits) builds in the sandbox (sandbox.py)
with a scratch target dir of its own, seeded from the shared one: it can neither write the
shared dir (and so the next job's base) nor anything else of the harness, and its
bin/hft-server becomes a launcher that starts the built server in the sandbox too.

The folder is the head's to write, so the harness runs nothing there afterwards: a commit's
git data (sha, subject, author) is read from the clone by sha (fingerprint.commit_info), the
host's tuning from the harness's own checkout (fingerprint.host). A populated submodule or a
.git planted there by a build would otherwise make `git status` run its `core.fsmonitor`. As a
second fence, every git command of the harness goes through git_cmd (core.fsmonitor off, no
descent into submodules). The folders are removed on every way out (remove_worktrees).

A build has a time limit (ab's and bisect's --build-timeout, DEFAULT_BUILD_TIMEOUT_S): a
build.rs that never ends would hold the runner until the job's own limit. At the limit the
build is killed with every process it started (_run_build) and BuildTimedOut names it; ab
turns that into a verdict (the head's: a regression; base's: invalid).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path

from ..errors import UsageError
from . import procs, sandbox

# --locked: a build uses the commit's Cargo.lock as it is, or fails; never resolves anew.
DEFAULT_BUILD = (
    "cargo build --release --locked --quiet -p hft-server && "
    'install -D -m 755 "$CARGO_TARGET_DIR/release/hft-server" bin/hft-server'
)


# A clean build of the server with its dependencies takes minutes on a runner; 15 is far past
# any honest build and well inside a job's limit (bench.yml's pool legs: 90 minutes).
DEFAULT_BUILD_TIMEOUT_S = 900.0


def git_cmd(repo: Path, *args: str) -> list[str]:
    """The argv of `git -C repo ARGS` as the harness runs every git command: with
    core.fsmonitor off (a repository's config, or a submodule's, could name a program that git
    runs through the shell), and status / diff never descending into submodules."""
    args_ = list(args)
    if args_ and args_[0] in ("status", "diff"):
        args_.insert(1, "--ignore-submodules=all")
    return ["git", "-c", "core.fsmonitor=", "-C", str(repo), *args_]


def git_output(repo: Path, *args: str) -> str:
    """`git -C repo ARGS`'s stdout (git_cmd), or UsageError naming the command and git's message."""
    proc = subprocess.run(git_cmd(repo, *args), capture_output=True, text=True)
    if proc.returncode != 0:
        raise UsageError(f"git {' '.join(args)} in {repo} failed: {proc.stderr.strip()}")
    return proc.stdout.strip()


def resolve_commit(repo: Path, ref: str) -> str:
    """The commit a ref names, or UsageError naming it."""
    proc = subprocess.run(
        git_cmd(repo, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"),
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        raise UsageError(f"{ref!r} is not a commit in {repo}; pass a branch, tag or sha (git fetch it first)")
    return proc.stdout.strip()


def export_commit(repo: Path, sha: str, tree: Path) -> None:
    """`git archive SHA | tar -x` into `tree` (created; it must not exist): the commit's files,
    dated now, and nothing of git (no .git, submodules as empty folders), or UsageError."""
    if tree.exists() or tree.is_symlink():
        raise UsageError(f"exporting {sha[:10]}: {tree} exists already; remove it or pass another --out")
    tree.mkdir(parents=True)
    with tempfile.TemporaryFile() as errors:
        archive = subprocess.Popen(
            git_cmd(repo, "archive", "--format=tar", sha), stdout=subprocess.PIPE, stderr=errors
        )
        # --touch: every file dated now, not at its commit (git archive's mtime). cargo decides
        # what to rebuild by mtimes, and a target dir seeded from base's build (the head's
        # scratch) is newer than any commit's sources: the head's changed server would be
        # "fresh" and base's binary served as the head's.
        untar = subprocess.run(
            ["tar", "-x", "--touch", "--no-same-owner", "-C", str(tree)],
            stdin=archive.stdout,
            capture_output=True,
            text=True,
        )
        archive.stdout.close()
        code = archive.wait()
        errors.seek(0)
        err = errors.read().decode(errors="replace").strip()
    if code != 0 or untar.returncode != 0:
        why = err or untar.stderr.strip() or f"git archive exit {code}, tar exit {untar.returncode}"
        raise UsageError(f"exporting {sha[:10]} from {repo} into {tree} failed: {why}")


def build_server(
    repo: Path,
    sha: str,
    side_dir: Path,
    build_cmd: str,
    target_dir: Path,
    *,
    scratch: Path | None = None,
    timeout_s: float | None = None,
) -> float:
    """Export `sha` into side_dir/worktree (export_commit), run build_cmd there, copy its bin/hft-server
    into side_dir/bin. With `scratch` (sandbox.scratch_for) the build runs in the sandbox with
    scratch/target as its target dir, and side_dir/bin/hft-server is a launcher of the built
    server in the sandbox (the binary in side_dir/sandboxed/). Both ways the build sees the
    same short environment (sandbox.build_env). A build still running after `timeout_s`
    (None: no limit) is killed with everything it started, and BuildTimedOut raised
    (_run_build). Returns the build's wall time (excluded from the measurement)."""
    tree = side_dir / "worktree"
    export_commit(repo, sha, tree)
    if scratch is None:
        home = target_dir.parent / f"{target_dir.name}-home"
        home.mkdir(parents=True, exist_ok=True)
        cmd = ["bash", "-c", build_cmd]
        env = sandbox.build_env(home, target_dir)
    else:
        (scratch / "tmp").mkdir(exist_ok=True)
        env = sandbox.build_env(scratch / "home", scratch / "target", scratch / "tmp")
        _fetch_crates(tree, build_cmd, env)
        # Offline, in a network of its own: what it needs was fetched just now, from here.
        env["CARGO_NET_OFFLINE"] = "true"
        cargo_home, toolchain = sandbox.toolchain(env)
        cmd = sandbox.wrap(
            ["bash", "-c", build_cmd],
            writable=(tree, scratch),
            readonly=toolchain,
            hide=(side_dir.parent, *cargo_home),  # the output: base's side, the results
            env=env,
            cwd=tree,
            own_network=True,
        )
    log = side_dir / "build.log"
    started = time.perf_counter()
    code = _run_build(cmd, tree, env, log, sha, timeout_s)
    took = time.perf_counter() - started
    built = tree / "bin" / "hft-server"
    if code != 0 or not built.is_file():
        why = f"exit {code}" if code else "it left no bin/hft-server"
        hint = "; it built in a sandbox: only its tree and scratch are writable" if scratch else ""
        raise UsageError(f"building {sha[:10]} failed ({why}{hint}); see {log}")
    # A symlink would make this copy read whatever it names (a file of the runner) into the output.
    inside = [tree.resolve()] + ([scratch.resolve()] if scratch else [])
    if not any(built.resolve().is_relative_to(d) for d in inside):
        raise UsageError(f"building {sha[:10]}: bin/hft-server links outside its tree: {built.resolve()}")
    if scratch is None:
        (side_dir / "bin").mkdir(exist_ok=True)
        shutil.copy2(built, side_dir / "bin" / "hft-server")
    else:
        (side_dir / "sandboxed").mkdir(exist_ok=True)
        shutil.copy2(built.resolve(), side_dir / "sandboxed" / "hft-server")
        sandbox.server_launcher(
            side_dir / "sandboxed" / "hft-server", side_dir / "bin" / "hft-server", hide=(side_dir.parent,)
        )
    return took


class BuildTimedOut(UsageError):
    """A build still running at its time limit: killed, with every process it started."""

    def __init__(self, sha: str, limit_s: float, log: Path) -> None:
        self.sha, self.limit_s, self.log = sha, limit_s, log
        super().__init__(
            f"building {sha[:10]} did not finish in {limit_s:g} s: it was killed with every process it "
            f"started; see {log}. A build that needs longer: pass a larger --build-timeout"
        )


def _run_build(
    cmd: list[str], tree: Path, env: dict[str, str], log: Path, sha: str, timeout_s: float | None
) -> int:
    """Run the build with its output (stdout and stderr, in order) in `log`; its exit status.
    It runs in a session and process group of its own, so at `timeout_s`, or when this process
    is interrupted, the whole group is killed: a sandboxed build is bwrap, whose pid namespace
    dies with it (--die-with-parent), taking every process the build started, double forks
    included; an unsandboxed one (a trusted base) loses its process group. The output goes to
    a file, not a pipe, so a process that kept it open cannot make this wait."""
    with log.open("wb") as out:
        proc = subprocess.Popen(
            cmd,
            cwd=tree,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            return proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            procs.end_session(proc)
            raise BuildTimedOut(sha, timeout_s or 0.0, log) from None
        except BaseException:  # Ctrl-C, a cancelled job's SIGTERM: the build goes too
            procs.end_session(proc)
            raise


def _fetch_crates(tree: Path, build_cmd: str, env: dict[str, str]) -> None:
    """The crates a sandboxed cargo build needs, fetched first by the harness: in the sandbox
    the cargo home is read-only. `cargo fetch` runs no code of the commit, and from this
    process's folder it reads this checkout's .cargo/config.toml, not the commit's."""
    if "cargo" not in build_cmd or not (tree / "Cargo.lock").is_file() or not shutil.which("cargo"):
        return
    fetch_env = {**env, "HOME": os.environ.get("HOME", env["HOME"])}
    proc = subprocess.run(
        ["cargo", "fetch", "--locked", "--manifest-path", str(tree / "Cargo.toml")],
        env=fetch_env,
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["no message"])[-1]
        raise UsageError(f"cargo fetch --locked for {tree} failed ({last}): is its Cargo.lock up to date?")


def remove_worktrees(repo: Path, trees: Iterable[Path]) -> list[Path]:
    """Remove these exported trees (those that exist) whatever a build left in them (a
    `chmod 555` folder, a read-only file): each made writable first, then removed, then
    checked gone. Returns the ones that survive, each also named in a warning on stderr.
    `repo`'s record of worktrees is pruned (ab and bisect made git worktrees before)."""
    left = []
    for tree in trees:
        if tree.is_symlink():
            tree.unlink()
        elif tree.exists():
            # chmod ignores the symlinks it meets inside: a link to a file of the runner stays a link.
            subprocess.run(["chmod", "-R", "u+rwX", "--", str(tree)], capture_output=True)
            shutil.rmtree(tree, ignore_errors=True)
        if tree.exists() or tree.is_symlink():
            left.append(tree)
            fix = f"chmod -R u+rwX {tree} && rm -rf {tree}"
            say = f"hftbench: warning: could not remove {tree} (what its build left there); by hand: {fix}"
            print(say, file=sys.stderr, flush=True)
    subprocess.run(git_cmd(repo, "worktree", "prune"), capture_output=True)
    return left
