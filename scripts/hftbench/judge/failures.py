"""Failures as results: every order a side failed, and every round a side broke, counted and judged.

A failed order (a non-2xx answer, a timeout, a reset) and a broken round (the server died or
hung, the client could not finish, the server's count of orders disagrees with the client's)
are what users feel first. So they are never left out: each cell of each round counts, and the
series' failure row judges them (`judge`), before any latency is looked at:

- base failed an order or broke a round: the comparison is **invalid** (its numbers measure a
  broken base, or a broken host; never green, and never blamed on head);
- head broke a round, or failed orders that base did not: a **regression**, whose reason names
  the count and the kind ("orders failed: 37 of 640,000 on head (http_5xx 37)") or the
  server's last words;
- neither failed anything: no change.

No statistics: one failed order is a fact, not a sample. This is deliberately strict (asv
reads a failed benchmark as "got worse"); a host that times out an order once in a while shows
as invalid or as a regression, never as a quiet pass, and the reason says which orders and when.
Pure: counts in, a verdict out.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from ..answers import INVALID, NO_CHANGE, REGRESSION
from ..series import Repeat
from .designs import round_key


@dataclass(frozen=True)
class Failures:
    """One side's failures over its rounds of one series."""

    orders: int  # measured orders attempted (ok + failed), over every round
    failed: int  # measured orders that failed
    kinds: tuple[tuple[str, int], ...]  # (kind, count), largest first: http_5xx, timeout, …
    broken: tuple[str, ...]  # "round 03: <why>", one per round the side broke
    rounds: int  # rounds (repeats) of this side

    @property
    def rate(self) -> float:
        return self.failed / self.orders if self.orders else (1.0 if self.broken else 0.0)

    @property
    def any(self) -> bool:
        return bool(self.failed or self.broken)

    def kinds_text(self) -> str:
        return ", ".join(f"{k} {n:,}" for k, n in self.kinds)

    def text(self, side: str) -> str:
        """'37 of 640,000 orders on head (http_5xx 37); round 04: hft-server exited …'."""
        parts = []
        if self.failed:
            parts.append(f"{self.failed:,} of {self.orders:,} orders on {side} ({self.kinds_text()})")
        if self.broken:
            shown = self.broken[0] + (f"; and {len(self.broken) - 1} more" if len(self.broken) > 1 else "")
            parts.append(f"{side} broke {len(self.broken)} of {self.rounds} rounds: {shown}")
        return "; ".join(parts)


def count(repeats: Sequence[Repeat]) -> Failures:
    """A side's failures: each repeat's failed orders by kind, and each broken round."""
    kinds: Counter[str] = Counter()
    orders = failed = 0
    broken = []
    for r in repeats:
        orders += r.ok + r.errors
        failed += r.errors
        kinds.update(dict(r.failure_kinds))
        if r.broken:
            broken.append(f"{_round_name(r.run_id)}: {r.broken}")
    unnamed = failed - sum(kinds.values())
    if unnamed > 0:
        kinds["other"] += unnamed
    ordered = tuple(sorted(((k, n) for k, n in kinds.items() if n), key=lambda kv: (-kv[1], kv[0])))
    return Failures(orders, failed, ordered, tuple(broken), len(repeats))


@dataclass(frozen=True)
class Judged:
    verdict: str  # NO_CHANGE, REGRESSION or INVALID
    reason: str
    base: Failures
    head: Failures


def judge(base: Sequence[Repeat], head: Sequence[Repeat]) -> Judged:
    """The failure row of one series (module docstring)."""
    b, h = count(base), count(head)
    if not base or not head:
        missing = "base" if not base else "head"
        verdict = INVALID if missing == "base" else REGRESSION
        return Judged(
            verdict, f"no round of {missing} measured this series: it is missing on {missing}", b, h
        )
    if b.any:
        why = f"base failed: {b.text('base')}"
        if h.any:
            why += f"; head too: {h.text('head')}"
        return Judged(INVALID, f"{why}: the comparison is invalid", b, h)
    if h.any:
        return Judged(REGRESSION, f"orders failed: {h.text('head')}; none on base", b, h)
    return Judged(NO_CHANGE, f"no order failed: {b.orders:,} on base, {h.orders:,} on head", b, h)


def _round_name(run_id: str) -> str:
    key = round_key(run_id)
    return f"round {key}" if key else run_id.split("#")[0]
