"""A verdict reduced to the history store's copy (docs/history-store.md): its gated rows as
numbers, and what the dashboard shows of it (headline, column labels, one row of cells per
series × metric) rendered here by verdict_text.py, so the page formats none of it. The store
(store/entry.py) keeps the StoredVerdict it is given and renders nothing; `history add` and
`publish` call this before they add a run.
"""

from __future__ import annotations

import math

from .. import mdsafe
from ..absent import ABSENT
from ..stored_verdict import GatedRow, ShownRow, StoredVerdict
from ..verdict import Verdict
from . import verdict_cells, verdict_text


def stored_verdict(v: Verdict) -> StoredVerdict:
    """verdict.json (compare, ab, push-leg) reduced to the store's verdict object."""
    headline, columns, rows = shown_verdict(v)
    return StoredVerdict(
        status=v.status,
        base=v.base.commit or (v.base.run_ids or [None])[-1],
        partial=bool(v.partial),
        confidence=v.confidence,
        looks=v.looks,
        flags=list(v.flags),
        gated=[
            GatedRow(
                r.scenario,
                r.client,
                r.metric,
                _finite(r.ratio),
                [_finite(x) for x in r.ci] if r.ci is not None else None,
                _finite(r.mde),
                r.verdict,
            )
            for r in v.gated_results()
        ],
        bisect=v.bisect.stored() if v.bisect else ABSENT,
        headline=headline,
        columns=columns,
        rows=rows,
    )


def _finite(x: float | None) -> float | None:
    """A number the dashboard's JSON.parse can read: inf and nan (an MDE that no number of
    runs would reach, an interval not computed) are stored as null."""
    return x if x is None or math.isfinite(x) else None


def shown_verdict(v: Verdict) -> tuple[str, dict[str, str], list[ShownRow]]:
    """The verdict as the dashboard shows it, rendered once by verdict_text: the headline, the
    table's column labels and one row per gated and reported series × metric (the markdown
    tables' rows, in their order), each cell's text keyed by verdict_cells.COLUMNS. Outside names
    are plain one-line text (mdsafe.title, as in an issue title): the page makes them text nodes."""
    rows = [*verdict_text.gated_rows(v), *verdict_text.reported_rows(v)]
    head = verdict_cells.table_head_cells(v.shown_confidence)

    def by_column(cells: list[str]) -> dict[str, str]:
        return dict(zip(verdict_cells.COLUMNS, cells, strict=True))

    esc = mdsafe.title
    shown = [
        ShownRow(
            r.scenario, r.client, r.metric, r.gated, r.verdict, by_column(verdict_cells.row_cells(r, esc))
        )
        for r in rows
    ]
    return verdict_text.headline(v, esc=esc), by_column(head), shown
