"""plots/*.png from a run (matplotlib, Agg backend: no display needed).

- percentiles_<scenario>.png: latency by percentile, one line per client, from the HDR
  histograms, x on the usual "1 / (1 − p)" log scale (50 %, 90 %, 99 %, 99.9 % …), y log.
  A line stops where the samples stop supporting the percentile (display rule, samples.py).
- clients.png: P50 and P99 per client, one panel per scenario (log scale).
- throughput.png: orders/s per client and scenario.
"""

from __future__ import annotations

import io
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.ticker import FixedLocator, FuncFormatter, LogLocator, NullFormatter, NullLocator  # noqa: E402

from .. import metrics, samples
from ..config import FLOOR
from ..fsio import write_atomic
from ..results import Run
from .rows import Row, rows_of

TICKS = [50.0, 90.0, 99.0, 99.9, 99.99, 99.999]


def _log_y(ax) -> None:
    """Log y axis labelled 1, 2, 5, 10, 20, 50 … (1, 10, 100 … past three decades) in plain
    numbers, no 10^x notation. Call after plotting: it reads the data range."""
    low, high = ax.get_ylim()
    wide = low > 0 and high / low > 1e3
    ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0,) if wide else (1.0, 2.0, 5.0)))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}" if v >= 1 else f"{v:g}"))
    ax.yaxis.set_minor_formatter(NullFormatter())


def _x(pct: np.ndarray | float) -> np.ndarray | float:
    return 1.0 / (1.0 - np.asarray(pct) / 100.0)


def _percentile_curve(row: Row) -> tuple[np.ndarray, np.ndarray] | None:
    merged = row.series.merged_histogram() if row.series is not None else None  # as the table's numbers
    if merged is None:
        return None
    n = merged.get_total_count()
    # Percentiles with at least DISPLAY_MIN_BEYOND samples beyond them.
    top = 100.0 * (1.0 - samples.DISPLAY_MIN_BEYOND / n) if n > samples.DISPLAY_MIN_BEYOND else 0.0
    if top <= 0:
        return None
    pcts = 100.0 - np.logspace(np.log10(100.0), np.log10(100.0 - top), 120)
    pcts = np.clip(pcts, 0.0, top)
    # One pass over the counts for all percentiles (get_value_at_percentile walks them per call).
    by_pct = merged.get_percentile_to_value_dict([float(p) for p in pcts])
    values = np.array([by_pct[float(p)] / 1000.0 for p in pcts])
    return pcts, values


def plot_percentiles(scenario: str, rows: list[Row], path: Path, floor: Row | None = None) -> Path | None:
    fig, ax = plt.subplots(figsize=(10.5, 5.5), dpi=110)
    drawn, top = 0, 0.0
    for row in rows:
        curve = _percentile_curve(row)
        if curve is None:
            continue
        pcts, values = curve
        ax.plot(_x(pcts), values, label=f"{row.client} (n={row.samples:,})", linewidth=1.6)
        drawn, top = drawn + 1, max(top, float(pcts[-1]))
    floor_curve = _percentile_curve(floor) if floor is not None and drawn else None
    if floor_curve is not None:
        pcts, values = floor_curve
        keep = pcts <= top  # only as far as the scenario's own data reaches
        pcts, values = pcts[keep], values[keep]
        ax.plot(_x(pcts), values, "--", color="gray", linewidth=1.2, label="floor: loopback TCP ping-pong")
    if not drawn:
        plt.close(fig)
        return None
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.xaxis.set_major_locator(FixedLocator([_x(t) for t in TICKS]))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{100 * (1 - 1 / v):g}%"))
    _log_y(ax)
    ax.set_xlim(left=1.0)
    ax.set_xlabel("percentile")
    ax.set_ylabel("latency (µs, log scale)")
    ax.set_title(f"Latency by percentile: {scenario}")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=9)
    fig.tight_layout()
    _save(fig, path)
    return path


def _has_a_bar(row: Row) -> bool:
    return row.has_numbers and any(row.percentile(m.key) for m in (metrics.P50, metrics.P99))


def plot_clients(by_scenario: dict[str, list[Row]], path: Path) -> Path | None:
    # A scenario whose every percentile is n/a (a few orders got through before its server was
    # killed) draws no bar, and a log axis with no value made matplotlib raise, losing report.md.
    scenarios = [s for s, rows in by_scenario.items() if s != FLOOR and any(_has_a_bar(r) for r in rows)]
    if not scenarios:
        return None
    fig, axes = plt.subplots(
        len(scenarios), 1, figsize=(9, 2.6 * len(scenarios) + 0.6), dpi=110, squeeze=False
    )
    for ax, scenario in zip(axes[:, 0], scenarios, strict=True):
        rows = [r for r in by_scenario[scenario] if r.has_numbers]
        x = np.arange(len(rows))
        for offset, key, label in (
            (-0.2, metrics.P50.key, metrics.P50.label),
            (0.2, metrics.P99.key, metrics.P99.label),
        ):
            vals = [r.percentile(key) or np.nan for r in rows]
            bars = ax.bar(x + offset, vals, width=0.38, label=label)
            for bar, row in zip(bars, rows, strict=True):
                if row.percentile(key) is None:
                    ax.annotate(
                        "n/a",
                        (bar.get_x() + bar.get_width() / 2, 0.03),
                        xycoords=("data", "axes fraction"),
                        ha="center",
                        fontsize=8,
                    )
        ax.set_xticks(x, [r.client for r in rows])
        ax.set_yscale("log")
        _log_y(ax)
        ax.set_ylabel("µs")
        ax.set_title(scenario, fontsize=10, loc="left")
        ax.grid(True, axis="y", which="both", alpha=0.3)
    axes[0, 0].legend(fontsize=8)
    fig.suptitle("Client comparison: P50 and P99 latency (log scale; n/a = too few samples)")
    fig.tight_layout()
    _save(fig, path)
    return path


def plot_throughput(by_scenario: dict[str, list[Row]], path: Path) -> Path | None:
    scenarios = [s for s in by_scenario if s != FLOOR]  # the floor answers no orders: not comparable
    clients = list(dict.fromkeys(r.client for s in scenarios for r in by_scenario[s] if r.has_numbers))
    if not clients:
        return None
    fig, ax = plt.subplots(figsize=(10, 5), dpi=110)
    width = 0.8 / len(clients)
    x = np.arange(len(scenarios))
    for i, client in enumerate(clients):
        vals = []
        for s in scenarios:
            row = next((r for r in by_scenario[s] if r.client == client), None)
            vals.append(row.throughput_rps if row and row.throughput_rps else np.nan)
        ax.bar(x - 0.4 + width * (i + 0.5), vals, width=width, label=client)
    ax.set_xticks(x, scenarios)
    ax.set_ylabel("orders/s")
    ax.set_title("Throughput by scenario and client")
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=8, ncol=min(len(clients), 7), loc="upper center", bbox_to_anchor=(0.5, -0.07))
    fig.tight_layout()
    _save(fig, path)
    return path


def _save(fig, path: Path) -> None:
    """PNG into memory, then an atomic write: a full disk never leaves half a plot."""
    png = io.BytesIO()
    fig.savefig(png, format="png")
    plt.close(fig)
    write_atomic(path, png.getvalue())


def write_plots(run: Run, out_dir: Path | None = None) -> list[Path]:
    """Every plot of the run; returns the files written (a plot with no data is skipped)."""
    out_dir = out_dir or run.path / "plots"
    out_dir.mkdir(parents=True, exist_ok=True)
    by_scenario = rows_of(run)
    floor = next(iter(by_scenario.get(FLOOR, [])), None)
    written = [
        plot_percentiles(s, rows, out_dir / f"percentiles_{s}.png", None if s == FLOOR else floor)
        for s, rows in by_scenario.items()
    ]
    written.append(plot_clients(by_scenario, out_dir / "clients.png"))
    written.append(plot_throughput(by_scenario, out_dir / "throughput.png"))
    return [p for p in written if p is not None]
