"""Cross-client throughput: one bin/hft-server, then wrk and every client at 50 connections,
closed loop, interleaved in rounds, and a markdown table of req/s, ratio to wrk, p50, p99
and the goal per client.

    .venv/bin/python clients/bench/throughput.py [--duration 5] [--rounds 1] [--clients c,rust]
                                                 [--layout shared|split]

Ratios are taken within one run, never against figures from another day: wrk runs before
every client and once more at the end (wrk, c1, wrk, c2, ..., wrk), and each client run is
divided by the mean of the two wrk runs around it, which cancels a drift of the machine's
speed over the run (a shared VM's host load moves over minutes). The table shows the
median of those paired ratios over the rounds, and their range; "met?" is ✅ when every
round reached the goal, ❌ when none did, "k of n" otherwise. A missing bin/client-X is
reported in the table (it does not stop the others).

--layout shared (the default) lets the server and the load tool share every CPU: on a
small machine a tool's ratio then follows its CPU cost per request, since every cycle it
spends is taken from the server. --layout split pins the server to the first half of the
CPUs and each load tool to the other half, as on the tuned runner where the server and the
load generators run on cores of their own: the ratio then says how close a client comes to
driving the server as hard as wrk does.

Latency is compared raw with raw. The clients' p50 / p99 here are closed loop, from the
send (nothing to correct); wrk's printed latency is not raw (wrk 4 adds its own
coordinated-omission samples before printing), so wrk runs with a done() hook that prints its
histogram and wrk_raw.py takes wrk's correction back out. Where that fails, wrk's printed
figures are shown, noted as corrected.
"""

import argparse
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from hftbench import roster
from hftbench.errors import UsageError
from hftbench.measure.placement import UNPINNED, Placement, format_cpu_list
from hftbench.measure.server import Server, ServerError
from wrk_raw import done_script, raw_wrk_percentiles

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(os.environ.get("HFTBENCH_BIN", ROOT / "bin"))
CLIENTS = roster.default().names
# Minimum req/s as a fraction of wrk's, at 50 connections closed loop (bench-config/clients.yaml).
GOALS = {c.name: c.throughput_goal for c in roster.default().clients}
CONNECTIONS = 50
LAYOUTS = ("shared", "split")


@dataclass
class Measure:
    """One tool's figures in one round; None when the run failed."""

    rps: float | None
    p50_us: float | None
    p99_us: float | None
    note: str = ""
    # The tool's own CPU (user + system) per request it sent: what decides its share of
    # the two cores it splits with the server, hence its ratio to wrk.
    cpu_us_per_req: float | None = None


# ---- pure functions ---------------------------------------------------------------------

_UNIT_US = {"us": 1.0, "ms": 1000.0, "s": 1_000_000.0}


def _duration_us(text: str) -> float:
    m = re.fullmatch(r"([\d.]+)(us|ms|s)", text)
    if not m:
        raise ValueError(f"not a wrk duration: {text!r}")
    return float(m.group(1)) * _UNIT_US[m.group(2)]


def parse_wrk(output: str, connections: int = CONNECTIONS) -> Measure:
    """Requests/sec and the raw 50% / 99% latency: from the histogram line of done_script,
    with wrk's correction taken out (uncorrect); without one (or when it does not check out),
    wrk's printed --latency distribution, noted as corrected."""
    rps = re.search(r"^Requests/sec:\s+([\d.]+)", output, re.M)
    p50 = re.search(r"^\s+50%\s+(\S+)", output, re.M)
    p99 = re.search(r"^\s+99%\s+(\S+)", output, re.M)
    if not (rps and p50 and p99):
        raise ValueError("wrk output has no Requests/sec or latency distribution (was --latency passed?)")
    non2xx = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", output)
    notes = [f"{non2xx.group(1)} non-2xx"] if non2xx else []
    raw = raw_wrk_percentiles(output, connections)
    if raw is None:
        notes.append("p50/p99 corrected by wrk")
        p50_us, p99_us = _duration_us(p50.group(1)), _duration_us(p99.group(1))
    else:
        p50_us, p99_us = raw
    return Measure(float(rps.group(1)), p50_us, p99_us, "; ".join(notes))


def wrk_requests(output: str) -> int:
    """The number of requests wrk completed ("N requests in 5.00s")."""
    m = re.search(r"^\s*(\d+) requests in ", output, re.M)
    if not m:
        raise ValueError("wrk output has no 'N requests in' line")
    return int(m.group(1))


def parse_result(doc: dict) -> Measure:
    lat = doc["latency_us"]
    note = f"{doc['errors']} errors" if doc["errors"] else ""
    return Measure(doc["throughput_rps"], lat["p50"], lat["p99"], note)


def result_requests(doc: dict) -> int:
    """Every request the client sent: the measured ones and the warm-up."""
    return doc["ok"] + doc["errors"] + doc["warmup"]


def cpu_per_request(cpu_s: float, requests: int) -> float | None:
    return cpu_s * 1e6 / requests if requests > 0 else None


def median_measure(measures: list) -> Measure:
    """Per field, the median over the rounds that produced a figure."""

    def med(values):
        values = [v for v in values if v is not None]
        return statistics.median(values) if values else None

    notes = "; ".join(sorted({m.note for m in measures if m.note}))
    return Measure(
        med(m.rps for m in measures),
        med(m.p50_us for m in measures),
        med(m.p99_us for m in measures),
        notes,
        med(m.cpu_us_per_req for m in measures),
    )


def paired_ratios(sequence: list) -> dict:
    """Each client run's req/s over the mean req/s of the wrk runs right before and right
    after it (only one when it is first or last; none usable: no ratio). ``sequence`` is
    the run order as (tool, Measure) pairs, tool "wrk" or a client name; the result maps
    each client to its ratios in run order."""
    ratios: dict = {}
    for i, (tool, m) in enumerate(sequence):
        if tool == "wrk":
            continue
        ratios.setdefault(tool, [])
        around = [_nearest_wrk(sequence, i, step) for step in (-1, 1)]
        refs = [w.rps for w in around if w is not None and w.rps]
        if m.rps is not None and refs:
            ratios[tool].append(m.rps / statistics.fmean(refs))
    return ratios


def _nearest_wrk(sequence: list, i: int, step: int) -> Measure | None:
    j = i + step
    while 0 <= j < len(sequence):
        if sequence[j][0] == "wrk":
            return sequence[j][1]
        j += step
    return None


def goal_verdict(ratios: list, goal: float) -> str:
    """Whether a client met its goal over the rounds: ✅ when every round's ratio reached it,
    ❌ when none did, "k of n" when the rounds disagree (the machine's noise straddles the
    goal, so neither answer would be honest); "—" without a ratio."""
    if not ratios:
        return "—"
    reached = sum(r >= goal for r in ratios)
    if reached == len(ratios):
        return "✅"
    if reached == 0:
        return "❌"
    return f"{reached} of {len(ratios)}"


def table(rows: dict, wrk: Measure, ratios: dict) -> str:
    """The markdown table: rows maps client -> Measure (median over rounds), ratios maps
    client -> its paired ratios to wrk (paired_ratios); the ratio shown is their median,
    with the range when there are several. Latency is raw for every tool (the module doc);
    a wrk figure that could not be uncorrected says so in wrk's note."""

    def num(v, fmt):
        return "—" if v is None else format(v, fmt)

    wrk_label = f"wrk ({wrk.note})" if wrk.note else "wrk"
    lines = [
        "| client | req/s | ratio to wrk (range) | p50 raw (µs) | p99 raw (µs) | CPU µs / req "
        "| goal | met? |",
        "|---|---:|---:|---:|---:|---:|---:|:---:|",
        f"| {wrk_label} | {num(wrk.rps, ',.0f')} | 1.00 | {num(wrk.p50_us, ',.0f')} "
        f"| {num(wrk.p99_us, ',.0f')} | {num(wrk.cpu_us_per_req, '.1f')} | | |",
    ]
    for client, m in rows.items():
        own = ratios.get(client, [])
        ratio = statistics.median(own) if own else None
        spread = f" ({min(own):.2f}–{max(own):.2f})" if len(own) > 1 else ""
        goal = GOALS[client]
        met = goal_verdict(own, goal)
        extra = f" ({m.note})" if m.note else ""
        lines.append(
            f"| {client}{extra} | {num(m.rps, ',.0f')} | {num(ratio, '.2f')}{spread} "
            f"| {num(m.p50_us, ',.0f')} | {num(m.p99_us, ',.0f')} | {num(m.cpu_us_per_req, '.1f')} "
            f"| ≥ {goal:.2f} | {met} |"
        )
    return "\n".join(lines)


def split_cpus(cpus) -> tuple[list[int], list[int]]:
    """--layout split: the server gets the lower half of the CPUs, the load tool the rest
    (the larger half when the count is odd: the tool must out-run the server)."""
    cpus = sorted(cpus)
    if len(cpus) < 2:
        raise ValueError(f"--layout split needs at least 2 CPUs, this process may use {len(cpus)}")
    half = len(cpus) // 2
    return cpus[:half], cpus[half:]


def describe_layout(place: Placement) -> str:
    if not place.server:
        return "server and load tool share all CPUs"
    return (
        f"server pinned to CPUs {format_cpu_list(place.server)}, "
        f"load tool to CPUs {format_cpu_list(place.clients)}"
    )


def wrk_threads(place: Placement) -> int:
    return len(place.clients) if place.clients else 2


# ---- processes --------------------------------------------------------------------------


def lua_script() -> Path:
    """The server's wrk script (the clients' order mix), shared so wrk and the server's own
    benchmark post the same orders."""
    script = ROOT / "server" / "bench" / "order.lua"
    if not script.is_file():
        sys.exit(f"throughput: {script} missing; it comes with the server (server/bench/)")
    return script


def run_timed(argv: list[str], timeout_s: int, place: Placement) -> tuple[subprocess.CompletedProcess, float]:
    """Runs argv to its end (on the load tool's CPUs when they are pinned); returns it with
    the CPU seconds (user + system) it used."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run(
        argv, capture_output=True, text=True, timeout=timeout_s, preexec_fn=place.confine_client()
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu_s = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return proc, cpu_s


def run_wrk(url: str, duration_s: int, script: Path, place: Placement) -> Measure:
    argv = [
        "wrk",
        f"-t{wrk_threads(place)}",
        f"-c{CONNECTIONS}",
        f"-d{duration_s}s",
        "--latency",
        "-s",
        str(script),
        url + "/order",
    ]
    proc, cpu_s = run_timed(argv, duration_s + 30, place)
    if proc.returncode != 0:
        return Measure(None, None, None, f"wrk exit {proc.returncode}: {proc.stderr.strip()[:80]}")
    m = parse_wrk(proc.stdout)
    m.cpu_us_per_req = cpu_per_request(cpu_s, wrk_requests(proc.stdout))
    return m


def run_client(client: str, url: str, duration_s: int, out_dir: Path, place: Placement) -> Measure:
    exe = BIN / f"client-{client}"
    if not exe.is_file():
        return Measure(None, None, None, "missing: run make build")
    out = out_dir / f"{client}-{time.monotonic_ns()}.json"
    argv = [
        str(exe),
        "--url",
        url,
        "--duration",
        str(duration_s),
        "--connections",
        str(CONNECTIONS),
        "--warmup",
        "1000",
        "--scenario",
        "throughput",
        "--output",
        str(out),
    ]
    proc, cpu_s = run_timed(argv, duration_s + 60, place)
    if not out.is_file():
        return Measure(None, None, None, f"exit {proc.returncode}: {proc.stderr.strip()[:80]}")
    doc = json.loads(out.read_text())
    m = parse_result(doc)
    m.cpu_us_per_req = cpu_per_request(cpu_s, result_requests(doc))
    return m


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--duration", type=int, default=5, help="seconds per measurement (default 5)")
    ap.add_argument("--rounds", type=int, default=1, help="interleaved rounds; the table shows medians")
    ap.add_argument(
        "--clients", default=",".join(CLIENTS), help="comma-separated subset of " + ",".join(CLIENTS)
    )
    ap.add_argument(
        "--layout",
        choices=LAYOUTS,
        default="shared",
        help="shared: server and tool share all CPUs; split: each on half of them (see the module doc)",
    )
    ap.add_argument("--output", help="also write the markdown table to this file")
    ns = ap.parse_args(argv)
    clients = [c for c in ns.clients.split(",") if c]
    unknown = sorted(set(clients) - set(CLIENTS))
    if unknown or ns.duration < 1 or ns.rounds < 1:
        ap.error(f"--clients must be among {','.join(CLIENTS)} (got {unknown}); --duration, --rounds >= 1")
    place = UNPINNED
    if ns.layout == "split":
        try:
            place = Placement(*map(tuple, split_cpus(os.sched_getaffinity(0))))
        except ValueError as err:
            ap.error(str(err))
    if shutil.which("wrk") is None:
        sys.exit("throughput: wrk not found: run make deps (apt-get install wrk)")
    work = Path(tempfile.mkdtemp(prefix="hftbench-throughput-"))
    shared_script = lua_script()
    script = done_script(shared_script, work)
    # The server pins its worker threads itself, one per CPU (hft-server --cpus).
    server = Server(BIN / "hft-server", work / "server.log", cpus=place.server)
    try:
        url = server.start()
    except (ServerError, UsageError) as exc:
        server.stop()
        sys.exit(f"throughput: {exc}")
    sequence = []  # (tool, Measure) in run order: wrk before every client and at the end

    def measure(label: str, tool: str, run) -> None:
        sequence.append((tool, run()))
        print(f"{label}: {tool} {sequence[-1][1]}", file=sys.stderr)

    try:
        for r in range(ns.rounds):
            for c in clients:
                measure(f"round {r + 1}", "wrk", lambda: run_wrk(url, ns.duration, script, place))
                measure(f"round {r + 1}", c, lambda c=c: run_client(c, url, ns.duration, work, place))
        measure("end", "wrk", lambda: run_wrk(url, ns.duration, script, place))
    finally:
        server.stop()
    runs_of = {t: [m for tool, m in sequence if tool == t] for t in ["wrk", *clients]}
    rows = {c: median_measure(runs_of[c]) for c in clients}
    md = table(rows, median_measure(runs_of["wrk"]), paired_ratios(sequence))
    header = (
        f"{time.strftime('%Y-%m-%d', time.gmtime())}, {os.cpu_count()} CPUs, "
        f"{CONNECTIONS} connections closed loop, {ns.duration} s per tool, {ns.rounds} interleaved round(s), "
        f"medians; ratio = client over the mean of the wrk runs right before and after it; "
        f"{describe_layout(place)}; wrk script {shared_script.relative_to(ROOT)} (+ a done() hook); "
        f"p50 / p99 raw for every tool (wrk's own coordinated-omission correction taken out)"
    )
    print(f"{header}\n\n{md}")
    if ns.output:
        Path(ns.output).write_text(f"{header}\n\n{md}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
