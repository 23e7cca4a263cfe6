"""ABSENT: a key a JSON record does not have, unlike None, a key written as null. The typed
records (verdict.py, stored_verdict.py, bisect_record.py, profile_record.py) leave an ABSENT
field out of their JSON, so a file reads back as it was written; they read a record's keys
into their fields with known_fields and split_known."""

from __future__ import annotations

from dataclasses import fields
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


def known_fields(cls: type, d: dict[str, Any], tuples: tuple[str, ...] = ()) -> dict[str, Any]:
    """The keys of `d` that are fields of `cls` (a later version's extra key is dropped), with
    the intervals JSON keeps as lists back as tuples."""
    names = {f.name for f in fields(cls)}
    out = {k: v for k, v in d.items() if k in names}
    for k in tuples:
        if out.get(k) is not None:
            out[k] = tuple(out[k])
    return out


def split_known(cls: type, d: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the keys of `d` that are fields of `cls` but its `other`, the rest): a record that keeps
    the keys it does not know in `other` and writes them back."""
    known = known_fields(cls, d)
    known.pop("other", None)
    return known, {k: v for k, v in d.items() if k not in known}
