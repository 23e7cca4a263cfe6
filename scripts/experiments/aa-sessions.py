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

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from hftbench.judge.independence import sessions_z, z_dispersion  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sessions", nargs="+", type=Path, help="hftbench ab folders, one per A/A session")
    parser.add_argument("--confidence", type=float, default=0.95)
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
    return 0


if __name__ == "__main__":
    sys.exit(main())
