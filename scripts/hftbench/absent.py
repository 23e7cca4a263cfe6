"""ABSENT: a key a JSON record does not have, unlike None, a key written as null. The typed
records (verdict.py, stored_verdict.py, bisect_record.py, profile_record.py) leave an ABSENT
field out of their JSON, so a file reads back as it was written."""

from __future__ import annotations

from typing import Any


class _Absent:
    """A key this verdict does not have (unlike None: a key written as null)."""

    _one: _Absent | None = None

    def __new__(cls) -> _Absent:
        if cls._one is None:
            cls._one = super().__new__(cls)
        return cls._one

    def __bool__(self) -> bool:
        return False

    def __repr__(self) -> str:
        return "ABSENT"


ABSENT: Any = _Absent()
