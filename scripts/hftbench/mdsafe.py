"""Outside text made inert where GitHub renders it: issue titles, issue and comment bodies.

Scenario, client, suite and reason strings, branch names and commit subjects come from the
runner's verdict.json, which pull-request code can shape: rendered raw, they could mention
users (`@org/team`), link issues (`#123`), break a table (`|`), open code spans (`` ` ``),
inject HTML (`<img src=…>`) or start a new line (a heading, a fake marker). Each context has
its function: `text` for markdown prose and table cells, `code` for inside a code span,
`title` for an issue title (plain text), `sha` for a commit id. Standard library only, like
verdict_text.py.
"""

from __future__ import annotations

import re

_CONTROL = re.compile(r"[\x00-\x1f\x7f\u2028\u2029]+")  # newlines and other breaks: one space
_MD_PUNCT = re.compile(r"([\\`*_\[\]|~])")  # what could start emphasis, a link, code, a cell
_REF = re.compile(r"#(?=\w)")  # #123, owner/repo#123: an auto-link and a cross-reference
ZWSP = "\u200b"


def _flat(value: object) -> str:
    return _CONTROL.sub(" ", str(value))


def _no_refs(s: str) -> str:
    return _REF.sub("#" + ZWSP, s.replace("@", "@" + ZWSP))


def text(value: object) -> str:
    """Markdown prose or a table cell: shows the characters as written, renders nothing."""
    s = _flat(value).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _no_refs(_MD_PUNCT.sub(r"\\\1", s))


def code(value: object) -> str:
    """Inside a code span (`…`): no backtick to close it, no line break, no cell break. Code
    renders no mention, link or tag; `@`, `#123` and `<>` are made inert all the same, in case a renderer
    (an e-mail notification, a plain-text view) shows the span as text."""
    s = _flat(value).replace("`", "'").replace("|", "\\|").replace("<", "‹").replace(">", "›")
    return _no_refs(s)


def title(value: object) -> str:
    """An issue title: one line of plain text, no mention, no issue link, no code span or tag."""
    s = _flat(value).replace("`", "'").replace("<", "‹").replace(">", "›")
    return _no_refs(" ".join(s.split()))


def sha(value: object, length: int = 10) -> str:
    """A commit id as shown: its hex digits only (a verdict's sha is the runner's data)."""
    return re.sub(r"[^0-9a-fA-F]", "", str(value or ""))[:length]
