"""`hftbench stage-artifact SRC DEST`: the files of a leg's output folder that its artifact
uploads, copied into DEST, a staging folder bench.yml's upload-artifact step then uploads.

A leg's folder holds more than its results: the exported trees the head's build wrote (a
`chmod 555` folder survives their removal), each side's bin/, the build's scratch. And
upload-artifact follows symbolic links, so a link the pull request's code left there would put
any file the runner can read into a public artifact. So the artifact is an explicit list, made
here without following a link: only regular files, whose real path is inside SRC, with one
link (a second name elsewhere could be any file), named as results, verdicts, summaries, logs
and profiles are (KEPT), outside the folders no artifact takes (SKIPPED_DIRS), and the server
base served (BASE_SERVER). Every link and
every file that is not kept for any other reason than its name is named on stderr.
"""

from __future__ import annotations

import os
import shutil
import stat
import sys
from pathlib import Path

from ..errors import UsageError
from .base import Command

# What a leg's artifact is made of: results.json and the clients' JSON, .hlog histograms,
# verdict.json, summary.md and report.md, build / server / client logs, profiles, plots.
KEPT = (".json", ".hlog", ".log", ".md", ".csv", ".svg", ".folded", ".png", ".txt")
# Never in an artifact: the exported trees (the head's code and whatever its build left), each
# side's built bin/, the sandboxed build's scratch, a fetched history store.
SKIPPED_DIRS = {"worktree", "bin", "scratch", "store", ".git", "target"}
# Besides: the server base served, which the harness built from base's code (what a look at a
# verdict asks first); never the head's, whose build is the pull request's code.
BASE_SERVER = ("ab/base/bin/hft-server", "ab/base/sandboxed/hft-server")


def stage(src: Path, dest: Path, say=print) -> list[Path]:
    """Copy the artifact's files of `src` into `dest` (same layout); the files copied, relative
    to `src`. Links, other kinds of file and files with a second name are left out, each said."""
    real_src = src.resolve()
    copied = []
    for rel in BASE_SERVER:
        path = src / rel
        if (
            path.parent.is_dir()
            and not path.parent.is_symlink()
            and path.exists()
            and not _why_not(path, real_src)
        ):
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            _copy_regular(path, dest / rel)
            copied.append(Path(rel))
    for folder, dirs, files in os.walk(src, followlinks=False):
        here = Path(folder)
        for d in list(dirs):
            path = here / d
            if path.is_symlink():
                say(f"left out {path}: a symbolic link (never followed)")
                dirs.remove(d)
            elif d in SKIPPED_DIRS:
                dirs.remove(d)
        for name in sorted(files):
            path = here / name
            why = _why_not(path, real_src)
            if why:
                say(f"left out {path}: {why}")
                continue
            if path.suffix not in KEPT:
                continue
            rel = path.relative_to(src)
            target = dest / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            _copy_regular(path, target)
            copied.append(rel)
    return copied


def _why_not(path: Path, real_src: Path) -> str | None:
    """Why `path` is no file of the artifact, or None."""
    st = path.lstat()
    if stat.S_ISLNK(st.st_mode):
        return "a symbolic link (never followed)"
    if not stat.S_ISREG(st.st_mode):
        return "not a regular file"
    if not path.resolve().is_relative_to(real_src):
        return f"its real path {path.resolve()} is outside {real_src}"
    if st.st_nlink > 1:
        return f"a file with {st.st_nlink} names (a hard link may be a file from anywhere)"
    return None


def _copy_regular(path: Path, target: Path) -> None:
    """Copy one regular file, opened without following a link (it may have been swapped for one
    since it was looked at)."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    with os.fdopen(fd, "rb") as f, open(target, "wb") as out:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            raise UsageError(f"{path} changed into something that is not a regular file while staging")
        shutil.copyfileobj(f, out)


class StageArtifactCommand(Command):
    name = "stage-artifact"
    help = (
        "CI: copy a leg's results, verdicts, summaries and logs into a folder to upload, links never followed"
    )

    @classmethod
    def add_arguments(cls, p) -> None:
        p.add_argument("src", type=Path, help="the leg's output folder (OUT)")
        p.add_argument("dest", type=Path, help="the staging folder to create (upload-artifact's path)")

    def run(self) -> int:
        src, dest = self.args.src, self.args.dest
        if not src.is_dir() or src.is_symlink():
            self.say(f"{src}: no such folder (the leg wrote nothing): nothing staged")
            dest.mkdir(parents=True, exist_ok=True)
            return 0
        if dest.exists() and any(dest.iterdir()):
            raise UsageError(f"{dest} is not empty: stage into a new folder")
        dest.mkdir(parents=True, exist_ok=True)
        copied = stage(src, dest, say=lambda m: print(f"hftbench stage-artifact: {m}", file=sys.stderr))
        self.say(f"{len(copied)} files of {src} staged in {dest}")
        return 0
