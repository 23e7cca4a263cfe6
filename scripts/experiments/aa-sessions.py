"""Independent A/A sessions' z-scores (issue 62, item 5), offline.

Reads N `hftbench ab` folders of independent A/A sessions (each with its verdict.json) and
prints, per gated series × metric, the sd of the sessions' z-scores (each session's normal
score of its two-sided p, signed by its estimate) and its chi-square interval. An interval
that is right at the session level gives sd ~ 1; a low end above 1 means sessions differ
more than each one's interval says (a host state that lasts a session).

    .venv/bin/python scripts/experiments/aa-sessions.py AB_DIR [AB_DIR ...] [--confidence 0.95]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from hftbench.judge import designs  # noqa: E402
from hftbench.judge.gates import load_gates  # noqa: E402
from hftbench.judge.hidden import pair_log_ratios  # noqa: E402
from hftbench.judge.independence import lag1_within_groups, sessions_z, z_dispersion  # noqa: E402
from hftbench.judge.sides import load_runs  # noqa: E402


def pooled_rounds(folders: list[Path], keys: set[str]) -> dict[str, tuple[list[float], list[str]]]:
    """ "series metric" -> the rounds' log ratios of every session in order, and each round's
    group (its session and base's duet slot)."""
    gates = load_gates()
    out: dict[str, tuple[list[float], list[str]]] = {}
    for folder in folders:
        heads = {designs.round_key(r.run_id): r for r in load_runs(folder / "head")}
        pool = [
            (b, heads[k]) for b in load_runs(folder / "base") if (k := designs.round_key(b.run_id)) in heads
        ]
        groups = [f"{folder}:{b.duet_slot}" for b, _ in pool]
        for key, logs in pair_log_ratios(pool, gates).items():
            if key in keys and len(logs) == len(pool):
                values, labels = out.setdefault(key, ([], []))
                values.extend(logs)
                labels.extend(groups)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sessions", nargs="+", type=Path, help="hftbench ab folders, one per A/A session")
    parser.add_argument("--confidence", type=float, default=0.95)
    parser.add_argument(
        "--lag1", action="store_true", help="also the lag-1 autocorrelation of the pooled rounds"
    )
    args = parser.parse_args(argv)
    docs = []
    for folder in args.sessions:
        path = folder / "verdict.json"
        if not path.is_file():
            print(f"{path}: no verdict.json; pass the folders `hftbench ab --out` wrote", file=sys.stderr)
            return 2
        docs.append(json.loads(path.read_text()))
    print("| series metric | sessions | sd of z | interval | |")
    print("|---|---|---|---|---|")
    for key, zs in sorted(sessions_z(docs).items()):
        d = z_dispersion(zs, args.confidence)
        if d is None:
            print(f"| {key} | {len(zs)} | – | – | too few sessions |")
            continue
        word = "interval too narrow at the session level" if d.too_narrow else "consistent with 1"
        print(f"| {key} | {d.sessions} | {d.sd:.2f} | {d.low:.2f} … {d.high:.2f} | {word} |")
    if args.lag1:
        gated = {
            f"{r['scenario']}/{r['client']} {r['metric']}"
            for doc in docs
            for r in doc["results"]
            if r.get("gated")
        }
        print("\n| series metric | pooled rounds | lag-1 r | null (shuffles within session x slot) | p | |")
        print("|---|---|---|---|---|---|")
        rng = np.random.default_rng(62)
        for key, (logs, groups) in sorted(pooled_rounds(args.sessions, gated).items()):
            a = lag1_within_groups(logs, groups, shuffles=2000, rng=rng)
            if a is not None:
                word = "neighbours alike" if a.p < 1 - args.confidence else "consistent with none"
                null = f"{a.null_mean:+.3f} ± {a.null_sd:.3f}"
                print(f"| {key} | {a.n} | {a.r:+.3f} | {null} | {a.p:.3f} | {word} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
