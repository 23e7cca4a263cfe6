"""The verdict text's profile section (verdict.json's `profile`, measure/profile.py): the
differential flame graph and the top functions by added self time. Standard library only."""

from __future__ import annotations

from .. import mdsafe
from ..profile_record import ProfileRecord


def profile_markdown(doc: ProfileRecord | None, run_url: str | None = None) -> list[str]:
    if not doc:
        return []
    if doc.skipped:
        return ["### Where the time went", "", f"No profile: {mdsafe.text(doc.skipped)}", ""]
    where = f" in [the run's artifact]({run_url})" if run_url else ""
    out = [
        "### Where the time went",
        "",
        f"Differential flame graph (head against base, one uncounted round a side): "
        f"`{mdsafe.code(doc.svg)}`{where}. Top functions by added self time:",
        "",
        "| function | base self | head self | added |",
        "|---|---|---|---|",
    ]
    for r in doc.top:
        out.append(
            f"| `{mdsafe.code(r.function[:100])}` | {r.base_self_pct:.1f}% | "
            f"{r.head_self_pct:.1f}% | {r.added_self_pct:+.1f} pt |"
        )
    if not doc.top:
        out.append("| (no function gained self time) | | | |")
    return [*out, ""]
