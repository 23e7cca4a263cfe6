"""The server's resources during a soak, sampled from /proc once a second.

`ProcSampler(pid, path)` is a context manager: a daemon thread reads the process's resident
memory (/proc/PID/status VmRSS), CPU time (/proc/PID/stat utime + stime) and established TCP
connections (its socket inodes from /proc/PID/fd matched against /proc/PID/net/tcp{,6}) every
`period_s`, and appends one CSV row per sample as it is taken (a crash keeps every row so
far). The parsers are pure functions of the file texts, tested on fixed texts.

CSV columns (`SAMPLE_FIELDS`): t_s (seconds since the sampler started, monotonic), unix_s
(the wall clock, to line samples up with the .hlog's intervals), rss_kib,
cpu_s (user + system, cumulative), cpu_pct (over the last period; 100 = one CPU busy),
connections (ESTABLISHED TCP sockets the process holds).
"""

from __future__ import annotations

import csv
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path

SAMPLE_FIELDS = ("t_s", "unix_s", "rss_kib", "cpu_s", "cpu_pct", "connections")
TCP_ESTABLISHED = "01"  # the `st` column of /proc/net/tcp (include/net/tcp_states.h)


@dataclass(frozen=True)
class Sample:
    t_s: float
    unix_s: float
    rss_kib: int
    cpu_s: float
    cpu_pct: float | None  # None for the first sample (no period yet)
    connections: int

    def row(self) -> list[str]:
        pct = "" if self.cpu_pct is None else f"{self.cpu_pct:.1f}"
        return [
            f"{self.t_s:.3f}",
            f"{self.unix_s:.3f}",
            str(self.rss_kib),
            f"{self.cpu_s:.3f}",
            pct,
            str(self.connections),
        ]


def rss_kib(status_text: str) -> int:
    """VmRSS of /proc/PID/status, in KiB."""
    for line in status_text.splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise ValueError("no VmRSS line in /proc/PID/status (a kernel thread or a zombie)")


def rss_anon_kib(status_text: str) -> int:
    """RssAnon of /proc/PID/status (the anonymous part of VmRSS: the heap, stacks), in KiB."""
    for line in status_text.splitlines():
        if line.startswith("RssAnon:"):
            return int(line.split()[1])
    raise ValueError("no RssAnon line in /proc/PID/status (a kernel before 4.5, a kernel thread or a zombie)")


def cpu_ticks(stat_text: str) -> int:
    """utime + stime of /proc/PID/stat, in clock ticks. The command name (field 2) may hold
    spaces and parentheses, so the fields are counted after its last ')'."""
    rest = stat_text[stat_text.rindex(")") + 2 :].split()
    return int(rest[11]) + int(rest[12])  # fields 14 and 15; rest[0] is field 3 (state)


def cpu_seconds(pid: int) -> float | None:
    """The CPU time a process has used so far (every thread, exited ones included), in
    seconds; None when it cannot be read (the process is gone, or /proc hides it).

    utime + stime of /proc/PID/stat count exited threads but only in clock ticks (10 ms); the
    run times of /proc/PID/task/*/schedstat are nanoseconds but only of the live threads. The
    server's workers live as long as it does, so the nanoseconds are taken while the two agree
    within two ticks, and the ticks when they do not (threads came and went)."""
    try:
        ticks = cpu_ticks(_read(f"/proc/{pid}/stat")) / float(os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError):
        return None
    try:
        tasks = Path(f"/proc/{pid}/task")
        ns = sum(int(_read(str(t / "schedstat")).split()[0]) for t in tasks.iterdir())
    except (OSError, ValueError, IndexError):
        return ticks
    precise = ns / 1e9
    return precise if abs(precise - ticks) <= 2.0 / float(os.sysconf("SC_CLK_TCK")) else ticks


def socket_inodes(fd_targets: list[str]) -> set[str]:
    """Inodes of the `socket:[N]` links among a process's fd targets."""
    return {t[8:-1] for t in fd_targets if t.startswith("socket:[") and t.endswith("]")}


def established(tcp_text: str, inodes: set[str]) -> int:
    """ESTABLISHED rows of a /proc/PID/net/tcp{,6} text whose socket is one of `inodes`."""
    count = 0
    for line in tcp_text.splitlines()[1:]:
        cols = line.split()
        if len(cols) > 9 and cols[3] == TCP_ESTABLISHED and cols[9] in inodes:
            count += 1
    return count


def _read(path: str) -> str:
    with open(path) as f:
        return f.read()


def read_sample(pid: int, t_s: float, previous: Sample | None, ticks_per_s: float) -> Sample:
    """One sample of process `pid`; raises OSError when it is gone."""
    proc = f"/proc/{pid}"
    rss = rss_kib(_read(f"{proc}/status"))
    cpu_s = cpu_ticks(_read(f"{proc}/stat")) / ticks_per_s
    targets = []
    for fd in os.listdir(f"{proc}/fd"):
        try:
            targets.append(os.readlink(f"{proc}/fd/{fd}"))
        except OSError:  # closed between listdir and readlink
            continue
    inodes = socket_inodes(targets)
    conns = 0
    for table in ("tcp", "tcp6"):
        try:
            conns += established(_read(f"{proc}/net/{table}"), inodes)
        except FileNotFoundError:  # no IPv6 in this kernel
            continue
    pct = None
    if previous is not None and t_s > previous.t_s:
        pct = 100.0 * (cpu_s - previous.cpu_s) / (t_s - previous.t_s)
    return Sample(t_s, time.time(), rss, cpu_s, pct, conns)


class ProcSampler:
    """Sample `pid` every `period_s` into the CSV `path` until the context exits."""

    def __init__(self, pid: int, path: Path, period_s: float = 1.0) -> None:
        self.pid = pid
        self.path = Path(path)
        self.period_s = period_s
        self.samples: list[Sample] = []
        self.error: str | None = None  # why sampling stopped early (the process ended)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=f"proc-sampler-{pid}", daemon=True)
        self._ticks_per_s = float(os.sysconf("SC_CLK_TCK"))

    def __enter__(self) -> ProcSampler:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path, "w", newline="") as f:
            csv.writer(f).writerow(SAMPLE_FIELDS)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _loop(self) -> None:
        start = time.monotonic()
        tick = 0
        with open(self.path, "a", newline="") as f:
            writer = csv.writer(f)
            while True:
                previous = self.samples[-1] if self.samples else None
                try:
                    sample = read_sample(self.pid, time.monotonic() - start, previous, self._ticks_per_s)
                except (OSError, ValueError) as exc:
                    self.error = f"/proc/{self.pid}: {exc}"
                    return
                self.samples.append(sample)
                writer.writerow(sample.row())
                f.flush()
                tick += 1
                # On a fixed grid from the start, so a slow read does not shift later samples.
                if self._stop.wait(max(0.0, start + tick * self.period_s - time.monotonic())):
                    return


def read_csv(path: Path) -> list[Sample]:
    """The samples of a sampler's CSV (rows cut short by a crash are skipped)."""
    out = []
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            try:
                pct = float(row["cpu_pct"]) if row["cpu_pct"] else None
                out.append(
                    Sample(
                        float(row["t_s"]),
                        float(row["unix_s"]),
                        int(row["rss_kib"]),
                        float(row["cpu_s"]),
                        pct,
                        int(row["connections"]),
                    )
                )
            except (KeyError, TypeError, ValueError):
                continue
    return out
