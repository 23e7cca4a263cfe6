"""Memory per order in `hftbench ab` folders, offline: per series, each side's bytes per order
over the rounds and the spread of the rounds' differences head − base, which the gate's
memory row tests (scripts/hftbench/judge/memory.py); with the readings' grain (a page over
the fewest orders a cell of the series answered) and the rounds whose memory was not read.

For the A/A spread: `failure-heads.py OUT N aa`, then this on OUT/aa-*; for the leak kind the
same on OUT/leak-* (each folder one session; the rounds of all the folders given are pooled
per series, and each session's own mean is listed too).

    .venv/bin/python scripts/experiments/memory-spread.py AB_OUT [AB_OUT ...]
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from hftbench import results  # noqa: E402
from hftbench.judge import memory  # noqa: E402
from hftbench.judge.designs import round_key  # noqa: E402


def rounds(folder: Path) -> dict[str, list[tuple[float | None, float | None, int, str | None]]]:
    """series -> per round: (base B/order, head B/order, fewest orders of the two cells, why unread)."""
    sides = {
        side: {round_key(r.run_id): r for r in map(results.load_run, results.list_runs(folder / side))}
        for side in ("base", "head")
    }
    out: dict[str, list] = {}
    for key, base in sorted(sides["base"].items()):
        head = sides["head"].get(key)
        if head is None:
            continue
        cells = {(c.scenario, c.client): c for c in head.cells}
        for b in base.cells:
            h = cells.get((b.scenario, b.client))
            if h is None or not (b.ok and h.ok):
                continue
            why = b.server_memory_unread or h.server_memory_unread
            orders = min(b.server_orders or 0, h.server_orders or 0)
            out.setdefault(f"{b.scenario}/{b.client}", []).append(
                (b.memory_bytes_per_order, h.memory_bytes_per_order, orders, why)
            )
    return out


def main(folders: list[Path]) -> int:
    if not folders:
        print(__doc__, file=sys.stderr)
        return 2
    pooled: dict[str, list] = {}
    for folder in folders:
        for series, rows in rounds(folder).items():
            read = [(b, h) for b, h, _, _ in rows if b is not None and h is not None]
            d = [h - b for b, h in read]
            mean = f"{np.mean(d):+.2f}" if d else "–"
            said = f"{len(read)} of {len(rows)} rounds read, mean difference {mean} B/order"
            print(f"{folder.name}  {series}: {said}")
            pooled.setdefault(series, []).extend(rows)
    print()
    for series, rows in pooled.items():
        read = [(b, h) for b, h, _, _ in rows if b is not None and h is not None]
        unread = sorted({why for *_, why in rows if why})
        if not read:
            why = unread[0] if unread else "no memory fields: runs from before them"
            print(f"{series}: no round read ({why})")
            continue
        b, h = (np.array(x, dtype=float) for x in zip(*read, strict=True))
        d = h - b
        grain = memory.resolution(min(o for *_, o, _ in rows if o))
        sd = float(np.std(d, ddof=1)) if len(d) > 1 else float("nan")
        print(
            f"{series}: {len(d)} rounds; base {np.mean(b):.2f} B/order (sd {np.std(b, ddof=1):.2f}), "
            f"head {np.mean(h):.2f} (sd {np.std(h, ddof=1):.2f}); head - base mean {np.mean(d):+.2f}, "
            f"round sd {sd:.2f}, min {d.min():+.2f}, max {d.max():+.2f}; grain {grain:.3f} B/order"
            + (f"; unread: {len(rows) - len(read)} ({unread[0]})" if unread else "")
        )
    return 0


if __name__ == "__main__":
    sys.exit(main([Path(a) for a in sys.argv[1:]]))
