"""Is the load series' P99 the server's or the host's? (issue 35), alternating solo and duet.

Alternates, ROUNDS times: one hft-server alone on CPU 1 under client-hft's open loop (8
connections, RATE orders/s, 40,000 orders), then two servers on CPU 1 under the open-loop
duet at the same total rate (each side half of it), as `hftbench ab`'s load series runs
them. The client busy-polls on CPU 0 at nice -20 in a session of its own, its autogroup at
-20 too (measure/placement.py). Prints per round the P99 from the intended send, from the
actual send, the send lateness' P99 and the largest latency, of each side.

If the P99 jumps between rounds of the same kind far more than between solo and duet, the
P99 is set by the host's regime at that moment, not by the design or the server.

    .venv/bin/python scripts/experiments/host-regime.py [ROUNDS] [RATE]
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BIN = ROOT / "bin"
SERVER_CPU, CLIENT_CPU = "1", 0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server() -> tuple[subprocess.Popen, int]:
    port = free_port()
    server = subprocess.Popen(
        [BIN / "hft-server", "--addr", f"127.0.0.1:{port}", "--cpus", SERVER_CPU],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    for _ in range(250):
        try:
            socket.create_connection(("127.0.0.1", port), 0.1).close()
            return server, port
        except OSError:
            time.sleep(0.02)
    server.kill()
    sys.exit(f"hft-server on port {port} did not answer in 5 s; run `make build` and try again")


def confine() -> None:
    os.setsid()
    os.sched_setaffinity(0, {CLIENT_CPU})
    try:
        os.setpriority(os.PRIO_PROCESS, 0, -20)
        Path("/proc/self/autogroup").write_text("-20")
    except OSError:
        pass  # not root: the client runs at the default priority


def client(ports: list[int], rate: int, out: Path) -> list[tuple[float, float, float, float]]:
    cmd = [
        str(BIN / "client-hft"),
        "--url",
        f"http://127.0.0.1:{ports[0]}",
        "--rate",
        str(rate),
        "--orders",
        "40000",
        "--connections",
        "8",
        "--warmup",
        "2000",
        "--cpus",
        str(CLIENT_CPU),
        "--busy-poll",
        "--output",
        str(out / "a.json"),
    ]
    if len(ports) > 1:
        cmd += ["--duet-url", f"http://127.0.0.1:{ports[1]}", "--duet-output", str(out / "b.json")]
    subprocess.run(cmd, preexec_fn=confine, stderr=subprocess.DEVNULL, check=False)
    rows = []
    for side in "ab"[: len(ports)]:
        d = json.loads((out / f"{side}.json").read_text())
        rows.append(
            (
                d["latency_us"]["p99"],
                d["uncorrected_latency_us"]["p99"],
                d["send_lateness_us"]["p99"],
                d["latency_us"]["max"],
            )
        )
    return rows


def one(kind: int, rate: int) -> list[tuple[float, float, float, float]]:
    servers = [start_server() for _ in range(kind)]
    try:
        with tempfile.TemporaryDirectory() as tmp:
            return client([port for _, port in servers], rate, Path(tmp))
    finally:
        for server, _ in servers:
            server.terminate()
            server.wait()


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 8
    rate = int(sys.argv[2]) if len(sys.argv) > 2 else 26_000
    print(
        f"{rounds} rounds, {rate:,} orders/s; per side: P99 from the intended send / from the actual "
        "send / send lateness P99 / max, in us"
    )
    for i in range(rounds):
        for name, kind in (("solo", 1), ("duet", 2)):
            cells = [f"{a:7.1f} {b:6.1f} {c:7.1f} {d:6.0f}" for a, b, c, d in one(kind, rate)]
            print(f"{i + 1:2d} {name}  " + "  |  ".join(cells), flush=True)


if __name__ == "__main__":
    main()
