"""Progress of a run: a tqdm bar with ETA on a terminal, plain lines otherwise."""

from __future__ import annotations

import os
import sys

from ..metrics import fmt_us
from ..results import Cell


def interactive() -> bool:
    """A person watches stderr: a terminal, and not under CI."""
    return sys.stderr.isatty() and os.environ.get("CI", "").lower() not in ("true", "1")


def step_bar(total: int, quiet: bool, desc: str):
    """A bar over steps (bisect's) on a terminal; None otherwise (plain lines then: `note`)."""
    if quiet or not interactive():
        return None
    from tqdm import tqdm

    return tqdm(total=total, unit="step", desc=desc, file=sys.stderr, dynamic_ncols=True)


def note(bar, text: str) -> None:
    """A line above a step_bar, or on stderr when there is none."""
    if bar is not None:
        bar.write(text, file=sys.stderr)
    else:
        print(text, file=sys.stderr, flush=True)


class Progress:
    """tqdm bar with ETA on a terminal; one plain line per cell with --quiet, under CI or in a pipe.

    The bar counts orders (warm-up included), not cells: cells differ 200-fold in size, so
    an ETA from cells done would be meaningless."""

    def __init__(self, weights: list[float], quiet: bool) -> None:
        self.bar = None
        self.done = 0
        self.total = len(weights)
        self.weights = list(weights)
        if interactive() and not quiet:
            from tqdm import tqdm

            self.bar = tqdm(
                total=round(sum(weights)), unit="order", unit_scale=True, dynamic_ncols=True, file=sys.stderr
            )

    def start(self, scenario: str, client: str, repeat: int) -> None:
        if self.bar is not None:
            self.bar.set_description(f"{scenario}/{client}" + (f" r{repeat}" if repeat > 1 else ""))

    def finish(self, cell: Cell) -> None:
        self.done += 1
        line = _cell_line(cell)
        if self.bar is not None:
            if not cell.ok:
                self.bar.write(line, file=sys.stderr)
            self.bar.update(round(self.weights[self.done - 1]))
        else:
            print(f"[{self.done}/{self.total}] {line}", file=sys.stderr, flush=True)

    def note(self, text: str) -> None:
        (self.bar.write if self.bar is not None else print)(text, file=sys.stderr)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _cell_line(cell: Cell) -> str:
    name = f"{cell.scenario}/{cell.client}" + (f" r{cell.repeat}" if cell.repeat > 1 else "")
    wall = f"{cell.wall_s:.1f} s" if cell.wall_s is not None else "-"
    if not cell.ok:
        return f"❌ {name} ({wall}): {cell.reason}"
    r = cell.result
    assert r is not None
    lat = r.latency
    rate = f"{r.throughput_rps:,.0f} orders/s"
    return f"✅ {name} ({wall}): {rate}, P50 {fmt_us(lat.p50_us)}, max {fmt_us(lat.max_us)}"
