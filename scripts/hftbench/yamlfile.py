"""Reading the YAML files of bench-config: a missing file or a syntax error names the file
(and, where the reader keeps marks, the line and column) and the fix, in the error type of the
reader that asked. Plain Python and PyYAML only: pool.py runs on the hosted runner."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from .errors import UsageError


def read(path: Path, what: str, fix: str, error: type[Exception] = UsageError) -> Any:
    """The file's data; `what` names the file ("gates file"), `fix` says what to pass instead."""
    try:
        return yaml.safe_load(path.read_text())
    except FileNotFoundError:
        raise error(f"{path}: no such {what}; {fix}") from None
    except OSError as exc:
        raise error(f"{path}: cannot read the {what} ({exc.strerror}); {fix}") from exc
    except yaml.YAMLError as exc:
        raise error(f"{path}: not valid YAML ({exc}); fix the syntax") from exc


def compose(
    path: Path, what: str, fix: str, error: type[Exception] = UsageError
) -> tuple[str, yaml.Node | None]:
    """The file's text and node tree, whose marks let every later error name file:line:column."""
    try:
        text = path.read_text()
    except OSError as exc:
        raise error(f"{path}: cannot read the {what} ({exc.strerror}); {fix}") from exc
    try:
        return text, yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        loc = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark else str(path)
        raise error(f"{loc}: not valid YAML: {exc.problem or exc.context}") from exc


def where(path: Path, node: yaml.Node) -> str:
    """file:line:column of a node."""
    return f"{path}:{node.start_mark.line + 1}:{node.start_mark.column + 1}"
