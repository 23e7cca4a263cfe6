"""upload / download of named artifacts for the act stand-ins (see README.md).

    artifacts.py upload NAME PATHS IF_NO_FILES_FOUND     PATHS: newline-separated
    artifacts.py download NAME DEST
    artifacts.py download-pattern GLOB DEST   every artifact matching GLOB into DEST/<name>/,
                                              as v4 does without merge-multiple; none: DEST empty
The store is $ACT_ARTIFACTS/NAME/.
"""

from __future__ import annotations

import fnmatch
import glob
import os
import shutil
import sys
from pathlib import Path


def upload(name: str, paths: str, if_none: str) -> int:
    # Each line a path or a glob (v4 accepts both); what matches nothing is left out.
    found = [Path(m) for p in paths.splitlines() if p.strip() for m in sorted(glob.glob(p.strip()))]
    store = Path(os.environ["ACT_ARTIFACTS"]) / name
    if not found:
        message = f"upload-artifact: no files for artifact {name} ({paths.strip()!r})"
        print(message, file=sys.stderr)
        return 1 if if_none == "error" else 0
    root = Path(os.path.commonpath([p if p.is_dir() and len(found) == 1 else p.parent for p in found]))
    shutil.rmtree(store, ignore_errors=True)
    for path in found:
        target = store / path.relative_to(root) if path != root else store
        if path.is_dir():
            shutil.copytree(path, target, symlinks=True, dirs_exist_ok=True)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, target)
    print(f"upload-artifact: {name} <- {', '.join(map(str, found))}")
    return 0


def download(name: str, dest: str) -> int:
    store = Path(os.environ["ACT_ARTIFACTS"]) / name
    if not store.is_dir():
        print(
            f"download-artifact: Unable to download artifact(s): Artifact not found for name: {name}",
            file=sys.stderr,
        )
        return 1
    shutil.copytree(store, dest, symlinks=True, dirs_exist_ok=True)
    print(f"download-artifact: {name} -> {dest}")
    return 0


def download_pattern(pattern: str, dest: str) -> int:
    found = sorted(
        p.name for p in Path(os.environ["ACT_ARTIFACTS"]).iterdir() if fnmatch.fnmatch(p.name, pattern)
    )
    Path(dest).mkdir(parents=True, exist_ok=True)
    for name in found:
        download(name, str(Path(dest) / name))
    print(f"download-artifact: {len(found)} artifacts match {pattern}")
    return 0


if __name__ == "__main__":
    cmd, *args = sys.argv[1:]
    commands = {"upload": upload, "download": download, "download-pattern": download_pattern}
    sys.exit(commands[cmd](*args))
