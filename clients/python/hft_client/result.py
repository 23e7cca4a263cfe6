"""The result document (docs/architecture.md Contract 3, bench-config/schema/result.schema.json)
and the .hlog beside it: pure functions of the config, the run outcome and the merged
histograms (summarised by stats.py), plus the two writers."""

import io
import json
import os
import platform
import time
from importlib import metadata

from hdrh.histogram import HdrHistogram
from hdrh.log import HistogramLogWriter

from . import __version__
from .args import Config
from .stats import latency_us, new_histogram

SCHEMA_VERSION = 1


def histogram_field(hist: HdrHistogram) -> dict:
    return {"format": "hdr-v2-deflate-base64", "unit": "ns", "data": hist.encode().decode("ascii")}


def rfc3339_utc(wall_ns: int) -> str:
    """ "YYYY-MM-DDTHH:MM:SS.ffffffZ" of a wall-clock time in ns since the epoch."""
    second, micros = divmod(wall_ns // 1000, 1_000_000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second)) + f".{micros:06d}Z"


def library_versions() -> dict:
    def version(name: str) -> str | None:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            return None

    return {
        "python": platform.python_version(),
        "aiohttp": version("aiohttp"),
        "uvloop": version("uvloop"),
        "hdrhistogram": version("hdrhistogram"),
    }


def build_result(
    cfg: Config,
    *,
    started_wall_ns: int,
    duration_s: float,
    ok: int,
    error_kinds: dict,
    latency: HdrHistogram,
    uncorrected: HdrHistogram | None,
    pacing: HdrHistogram | None,
    interrupted: bool,
    extra: dict,
    lateness: HdrHistogram | None = None,
) -> dict:
    """The result document; ``uncorrected``, ``pacing`` and ``lateness`` are None in closed
    loop (an open-loop ``lateness`` of None is written as an empty histogram)."""
    errors = sum(error_kinds.values())
    doc = {
        "schema_version": SCHEMA_VERSION,
        "client": "python",
        "client_version": __version__,
        "scenario": cfg.scenario,
        "mode": "closed" if cfg.rate is None else "open",
        "target_rate_rps": cfg.rate,
        "orders": ok + errors,
        "connections": cfg.connections,
        "warmup": cfg.warmup,
        "seed": cfg.seed,
        "started_at": rfc3339_utc(started_wall_ns),
        "duration_s": round(duration_s, 6),
        "ok": ok,
        "errors": errors,
        "error_kinds": dict(error_kinds),
        "throughput_rps": round(ok / duration_s, 3) if duration_s > 0 else 0.0,
        "latency_us": latency_us(latency),
        "histogram": histogram_field(latency),
        "extra": dict(extra),
    }
    if uncorrected is not None:
        doc["uncorrected_latency_us"] = latency_us(uncorrected)
        doc["uncorrected_histogram"] = histogram_field(uncorrected)
    if cfg.rate is not None:
        # Send lateness: actual send - intended send of every measured order (Contract 3).
        late = lateness if lateness is not None else new_histogram()
        doc["send_lateness_us"] = latency_us(late)
        doc["send_lateness_histogram"] = histogram_field(late)
    if pacing is not None:
        # How late the sends were against their intended times, counting only orders
        # whose connection was free before the due time (a busy one is late by design).
        doc["extra"]["pacing_error_us"] = {
            "count": pacing.get_total_count(),
            **{k: v for k, v in latency_us(pacing).items() if k in ("p50", "p90", "p99", "max")},
        }
    doc["interrupted"] = interrupted
    return doc


def exit_status(doc: dict) -> int:
    """0 when every measured order got HTTP 200, else 1 (clients/README.md, "Exit status")."""
    return 0 if doc["errors"] == 0 else 1


def hlog_path(output: str) -> str:
    """The .hlog beside the result: ``.json`` replaced by ``.hlog`` (appended otherwise)."""
    return (output[: -len(".json")] if output.endswith(".json") else output) + ".hlog"


def hlog_text(
    started_wall_ns: int, duration_s: float, latency: HdrHistogram, uncorrected: HdrHistogram | None
) -> str:
    """The HdrHistogram interval log: header, legend, one interval covering the measured
    phase, and in open loop a second one tagged ``uncorrected``. Timestamps are relative
    to BaseTime = StartTime = the start of the measured phase."""
    out = io.StringIO()
    writer = HistogramLogWriter(out)
    # StartTime and BaseTime must be the same number: readers skip an interval whose start
    # (BaseTime + 0) lies before StartTime. Whole milliseconds print identically in both.
    start_ms = started_wall_ns // 1_000_000
    start_s = start_ms / 1000
    writer.output_comment(f"[Logged with hft-bench client-python {__version__}]")
    writer.output_log_format_version()
    # hdrh's output_start_time is broken (datetime.iso_format); write the standard line here.
    writer.output_comment(f"[StartTime: {start_s:f} (seconds since epoch), {rfc3339_utc(started_wall_ns)}]")
    writer.output_base_time(start_ms)
    writer.output_legend()
    # hdrh treats a 0 start or end as "use the histogram's own stamps", so the interval
    # starts at 1 ns (printed as 0.000000) and lasts at least 1 us.
    length = max(duration_s, 1e-6)
    writer.output_interval_histogram(latency, 1e-9, length)
    if uncorrected is not None:
        out.write("Tag=uncorrected,")  # hdrh's writer has no tag parameter; the reader parses it
        writer.output_interval_histogram(uncorrected, 1e-9, length)
    return out.getvalue()


def _write_atomic(path: str, text: str) -> None:
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def write_outputs(doc: dict, output: str | None, hlog: str | None) -> None:
    """The result JSON to ``output`` (stdout when None), then the .hlog beside it."""
    text = json.dumps(doc, indent=2) + "\n"
    if output is None:
        print(text, end="", flush=True)
        return
    _write_atomic(output, text)
    if hlog is not None:
        _write_atomic(hlog_path(output), hlog)
