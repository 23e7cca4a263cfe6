"""`hftbench ab --base REF --head REF --suite pr`: the pull-request gate in one command.

1. `git worktree add --detach` both refs into <out>/worktrees/ and build the *server* of each
   there (`--build-cmd`, default cargo with one shared target dir, so dependencies compile
   once). Identical commits are built once: the same binary on both sides, a true A/A.
2. The clients are NOT rebuilt: both sides use the current checkout's bin/client-* (symlinked
   into each side's bin/), so the client is not a variable of the comparison; only the
   server changes, which is what a pull request on the order API changes.
3. Rounds run interleaved base, head, head, base, base, head, … (one fresh server per side
   per round, same flags), so drift on the machine hits both sides alike.
4. After `--repeats` rounds per side, compare; while a gated metric is inconclusive, add a
   pair of rounds, up to `--max-repeats` and within `--time-budget` (the pull request waits).
   Then write verdict.json + summary.md into --out.

Exit 0 no regression (or still inconclusive at --max-repeats), 1 a gated metric regressed,
2 it could not run (bad ref, build failed, server did not start).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from . import config as config_mod
from . import paths
from .compare import Comparison, compare_sides
from .compare_gates import load_gates
from .compare_render import markdown, print_console
from .compare_sides import load_side
from .errors import UsageError
from .history_store import write_atomic
from .run import make_plan, run_plan
from .runner import client_binary
from .server import ServerError

DEFAULT_BUILD = (
    'cargo build --release --quiet -p hft-server && install -D -m 755 "$CARGO_TARGET_DIR/release/hft-server" '
    "bin/hft-server"
)


def _git(repo: Path, *args: str) -> str:
    proc = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True)
    if proc.returncode != 0:
        raise UsageError(f"git {' '.join(args)} in {repo} failed: {proc.stderr.strip()}")
    return proc.stdout.strip()


def resolve(repo: Path, ref: str) -> str:
    """The commit a ref names, or UsageError naming it."""
    proc = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"],
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        raise UsageError(f"{ref!r} is not a commit in {repo}; pass a branch, tag or sha (git fetch it first)")
    return proc.stdout.strip()


def order(pair: int) -> tuple[str, str]:
    """Which side runs first in round pair `pair`: B,H then H,B then B,H …"""
    return ("base", "head") if pair % 2 == 0 else ("head", "base")


def build_server(repo: Path, sha: str, side_dir: Path, build_cmd: str, target_dir: Path) -> float:
    """Check `sha` out into side_dir/worktree, run build_cmd there, copy its bin/hft-server
    into side_dir/bin. Returns the build's wall time (excluded from the measurement)."""
    tree = side_dir / "worktree"
    _git(repo, "worktree", "add", "--detach", "--force", str(tree), sha)
    env = {**os.environ, "CARGO_TARGET_DIR": str(target_dir)}
    started = time.perf_counter()
    proc = subprocess.run(["bash", "-c", build_cmd], cwd=tree, env=env, capture_output=True, text=True)
    took = time.perf_counter() - started
    log = side_dir / "build.log"
    log.write_text(proc.stdout + proc.stderr)
    built = tree / "bin" / "hft-server"
    if proc.returncode != 0 or not built.is_file():
        why = f"exit {proc.returncode}" if proc.returncode else "it left no bin/hft-server"
        raise UsageError(f"building {sha[:10]} failed ({why}); see {log}")
    (side_dir / "bin").mkdir(exist_ok=True)
    shutil.copy2(built, side_dir / "bin" / "hft-server")
    return took


def link_clients(clients_bin: Path, side_bin: Path, clients: list[str]) -> None:
    for client in clients:
        src = client_binary(clients_bin, client)
        if not os.access(src, os.X_OK):
            raise UsageError(f"{src} missing: run `make build` in {clients_bin.parent} (ab uses its clients)")
        dst = client_binary(side_bin, client)
        if not dst.exists():
            dst.symlink_to(src.resolve())


def remove_worktrees(repo: Path, out: Path) -> None:
    for side in ("base", "head"):
        tree = out / side / "worktree"
        if tree.exists():
            subprocess.run(
                ["git", "-C", str(repo), "worktree", "remove", "--force", str(tree)], capture_output=True
            )
    subprocess.run(["git", "-C", str(repo), "worktree", "prune"], capture_output=True)


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "ab",
        help="build two refs, run them interleaved until conclusive, compare (the PR gate)",
        description=__doc__,
    )
    p.add_argument("--base", required=True, help="base ref (branch, tag, sha)")
    p.add_argument("--head", required=True, help="head ref")
    p.add_argument("--suite", default="pr", help="suite of bench-config/scenarios.yaml (default pr)")
    p.add_argument("--scenarios", help="comma-separated scenarios instead of the suite's")
    p.add_argument("--clients", help="comma-separated clients instead of the suite's")
    p.add_argument("--orders", type=int, help="override measured orders per cell")
    p.add_argument(
        "--repeats", type=int, default=8, help="rounds per side before the first verdict (default 8)"
    )
    p.add_argument(
        "--max-repeats", type=int, default=12, help="most rounds per side while inconclusive (default 12)"
    )
    p.add_argument(
        "--time-budget", type=float, default=270.0,
        help="no further pair once measuring would pass this many seconds (default 270; builds excluded)",
    )  # fmt: skip
    p.add_argument("--gates", type=Path, help="gates file (default bench-config/gates.yaml)")
    p.add_argument("--out", type=Path, help="output folder (default results/ab_<UTC>)")
    p.add_argument("--repo", type=Path, help="repository holding the refs (default: this checkout)")
    p.add_argument(
        "--clients-bin", type=Path, help="client binaries for both sides (default: this checkout's bin/)"
    )
    p.add_argument(
        "--build-cmd", default=DEFAULT_BUILD, help="run in each worktree; must leave bin/hft-server"
    )
    p.add_argument("--server-flags", default="", help="hft-server flags for both sides, e.g. '--workers 2'")
    p.add_argument("--head-server-flags", default="", help="extra flags for head only (calibration)")
    p.add_argument("--keep-worktrees", action="store_true", help="leave the worktrees for inspection")
    p.add_argument("--quiet", action="store_true", help="plain progress lines")
    p.set_defaults(func=main)


def main(args) -> int:
    if not 1 <= args.repeats <= args.max_repeats:
        raise UsageError(f"need 1 <= --repeats ({args.repeats}) <= --max-repeats ({args.max_repeats})")
    root = paths.repo_root()
    repo = (args.repo or root).resolve()
    cfg = config_mod.load(paths.config_file(root))
    gates = load_gates(args.gates)
    base_sha, head_sha = resolve(repo, args.base), resolve(repo, args.head)
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    out = (args.out or paths.results_dir(root) / f"ab_{stamp}").resolve()
    if out.exists() and any(out.iterdir()):
        raise UsageError(f"--out {out} exists and is not empty; pass a new folder")
    clients_bin = (args.clients_bin or paths.bin_dir(root)).resolve()
    plan = make_plan(
        cfg,
        clients_bin,
        args.suite if not args.scenarios else None,
        args.scenarios.split(",") if args.scenarios else None,
        args.clients.split(",") if args.clients else None,
        overrides={"orders": args.orders},
        floor=False,
    )
    if args.scenarios and args.suite:
        plan.suite = args.suite
    flags = {"base": shlex.split(args.server_flags), "head": shlex.split(args.server_flags)}
    flags["head"] += shlex.split(args.head_server_flags)
    # SIGTERM (a cancelled CI job) must still remove the worktrees: turn it into SystemExit.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        return _run(args, repo, root, out, cfg, gates, plan, clients_bin, base_sha, head_sha, flags)
    finally:
        if not args.keep_worktrees:
            remove_worktrees(repo, out)


def _run(args, repo, root, out, cfg, gates, plan, clients_bin, base_sha, head_sha, flags) -> int:
    say = lambda msg: print(f"hftbench ab: {msg}", file=sys.stderr, flush=True)  # noqa: E731
    target = root / "target" / "ab"
    builds = {}
    for side, sha in (("base", base_sha), ("head", head_sha)):
        (out / side).mkdir(parents=True, exist_ok=True)
        if side == "head" and sha == base_sha:
            (out / "head" / "bin").mkdir(exist_ok=True)
            shutil.copy2(out / "base" / "bin" / "hft-server", out / "head" / "bin" / "hft-server")
            builds["head"] = 0.0
        else:
            say(f"building {side} {sha[:10]} …")
            builds[side] = build_server(repo, sha, out / side, args.build_cmd, target)
        link_clients(clients_bin, out / side / "bin", plan.clients)
    say(f"built in {sum(builds.values()):.0f} s; measuring {', '.join(s.name for s in plan.scenarios)} × "
        f"{', '.join(plan.clients)}")  # fmt: skip
    started = time.perf_counter()
    pair, comparison = 0, None
    while True:
        for side in order(pair):
            # Unique run ids (the history store keys runs by id): time, side, round.
            stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
            run_dir = out / side / f"run_{stamp}_{side}{pair + 1:02d}"
            run_dir.mkdir(parents=True)
            tree = out / side / "worktree"
            tree = tree if tree.exists() else out / "base" / "worktree"  # A/A: one worktree
            try:
                run = run_plan(plan, out / side / "bin", run_dir, cfg.targets, flags[side], quiet=True,
                               root=tree if tree.exists() else root)  # fmt: skip
            except ServerError as exc:
                raise UsageError(f"{side} server: {exc}") from exc
            say(f"round {pair + 1} {side}: {len(run.cells) - len(run.failed)}/{len(run.cells)} cells ok")
        pair += 1
        if pair >= args.repeats:
            comparison = compare_sides(load_side(out / "base"), load_side(out / "head"), gates)
            if not comparison.needs_more_repeats() or pair >= args.max_repeats:
                break
            # One more pair costs what an average pair (and this comparison) cost so far.
            elapsed = time.perf_counter() - started
            if elapsed + elapsed / pair > args.time_budget:
                say(
                    f"inconclusive after {pair} rounds per side; time budget {args.time_budget:.0f} s reached"
                )
                break
            say(f"inconclusive after {pair} rounds per side; one more pair")
    measured = time.perf_counter() - started
    _write(out, comparison, base_sha, head_sha, pair, measured, builds, args)
    print_console(comparison)
    say(f"{comparison.status} after {pair} rounds per side; measuring took {measured:.0f} s "
        f"(builds {sum(builds.values()):.0f} s); {out / 'summary.md'}")  # fmt: skip
    return comparison.exit_code


def _write(out: Path, c: Comparison, base_sha, head_sha, rounds, measured, builds, args) -> None:
    doc = c.to_json()
    doc["base"]["commit"], doc["head"]["commit"] = base_sha, head_sha
    doc["ab"] = {
        "base_ref": args.base,
        "head_ref": args.head,
        "rounds_per_side": rounds,
        "order": "interleaved B,H,H,B,…",
        "measure_s": round(measured, 1),
        "build_s": {k: round(v, 1) for k, v in builds.items()},
        "server_flags": {
            "base": args.server_flags,
            "head": f"{args.server_flags} {args.head_server_flags}".strip(),
        },
    }
    write_atomic(out / "verdict.json", json.dumps(doc, indent=2) + "\n")
    md = markdown(c) + (
        f"\n<sub>hftbench ab: {args.base} ({base_sha[:10]}) vs {args.head} ({head_sha[:10]}), "
        f"{rounds} interleaved rounds per side, measured in {measured:.0f} s (builds excluded); "
        "clients from this checkout.</sub>\n"
    )
    write_atomic(out / "summary.md", md)
