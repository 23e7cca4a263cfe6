"""plots/soak_*.png for each soak cell (matplotlib, Agg backend, as plots.py):

- soak_<scenario>_<client>_latency.png: P50, P99, P99.9 per interval against time (log y); a
  percentile is drawn only where the interval has the samples for it (samples.py display rule);
  the first and the last tenth, which the drift test compares, are shaded.
- soak_<scenario>_<client>_server.png: the server's RSS (MiB), CPU (%) and established
  connections against time, one panel each, from its /proc samples.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from .. import metrics
from ..judge import drift
from .plots import _log_y
from .soak_report import SoakAnalysis

LINES = tuple((m.name, m.label) for m in metrics.SOAK_PERCENTILES)


def plot_latency(a: SoakAnalysis, path: Path) -> Path | None:
    rows = drift.interval_rows(a.intervals)
    if not rows:
        return None
    t = np.array([r.start_s + r.length_s / 2 for r in rows])
    fig, ax = plt.subplots(figsize=(10, 4.5), dpi=110)
    drawn = False
    for key, label in LINES:
        y = np.array([getattr(r, key) or np.nan for r in rows], dtype=float)
        if np.isfinite(y).any():
            ax.plot(t, y, marker=".", linewidth=1, label=label)
            drawn = True
    if not drawn:
        plt.close(fig)
        return None
    first, last = drift.tenths(a.intervals)
    t0 = a.intervals[0].start_s
    for part, name in ((first, "first tenth"), (last, "last tenth")):
        if part:
            ax.axvspan(part[0].start_s - t0, part[-1].start_s + part[-1].length_s - t0, alpha=0.1, label=name)
    ax.set_yscale("log")
    _log_y(ax)
    ax.set_xlabel("time in the soak (s)")
    ax.set_ylabel("latency (µs)")
    ax.set_title(f"{a.label}: latency per interval")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def plot_server(a: SoakAnalysis, path: Path) -> Path | None:
    if not a.samples:
        return None
    t0 = a.intervals[0].start_s
    t = np.array([s.unix_s - t0 for s in a.samples])
    panels = (
        ("RSS (MiB)", [s.rss_kib / 1024 for s in a.samples]),
        ("CPU (%)", [np.nan if s.cpu_pct is None else s.cpu_pct for s in a.samples]),
        ("connections", [s.connections for s in a.samples]),
    )
    fig, axes = plt.subplots(3, 1, figsize=(10, 7), dpi=110, sharex=True)
    for ax, (label, values) in zip(axes, panels, strict=True):
        ax.plot(t, values, linewidth=1)
        ax.set_ylabel(label)
        ax.grid(True, alpha=0.3)
    axes[0].set_title(f"{a.label}: the server, sampled from /proc every second")
    axes[-1].set_xlabel("time in the soak (s; negative: warm-up)")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def write_soak_plots(analyses: list[SoakAnalysis], out_dir: Path) -> dict[str, list[Path]]:
    """Both plots of every soak cell; slug -> the files written."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written = {}
    for a in analyses:
        files = [
            plot_latency(a, out_dir / f"soak_{a.slug}_latency.png"),
            plot_server(a, out_dir / f"soak_{a.slug}_server.png"),
        ]
        written[a.slug] = [p for p in files if p is not None]
    return written
