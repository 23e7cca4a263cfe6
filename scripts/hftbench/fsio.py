"""Atomic file writes: a reader (or a crash, or a full disk) never sees half a file."""

from __future__ import annotations

import errno
import os
import tempfile
from pathlib import Path

NO_SPACE = (errno.ENOSPC, errno.EDQUOT)


def write_atomic(path: Path, data: str | bytes) -> None:
    """Write a file so a reader never sees half of it (temp file in the same folder, fsync, rename).

    On failure the old file is untouched, the temp file is removed, and the OSError names
    `path` (its `filename`), so the message can say which file could not be written.
    """
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    except OSError as exc:
        exc.filename = exc.filename or str(path)
        raise
    try:
        with os.fdopen(fd, "wb" if isinstance(data, bytes) else "w") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, OSError):
            exc.filename = str(path)  # not the temp name: the user knows the file, not .x.abc123
        raise


def write_error(exc: OSError, where: Path | None = None) -> str:
    """One line for a failed write: the file, the cause and the fix."""
    target = exc.filename or where or "a file"
    folder = Path(target).parent if exc.filename else (where or Path("."))
    if exc.errno in NO_SPACE:
        fix = f"free space on its file system (`df -h {folder}`) or write to another one"
    elif exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        fix = f"make {folder} writable or write to another folder"
    else:
        fix = f"check {folder}"
    return f"cannot write {target}: {exc.strerror or exc}; {fix}"
