"""`hftbench publish BENCH`: the next gh-pages commit. Each entry of BENCH added to the history
store, the change points recomputed, the dashboard rebuilt, and a commit on top of the fetched
gh-pages tip made into the local branch gh-pages-publish. No token and no push here
(scripts/ci/pages-bundle hands the commit over, scripts/ci/push-bundle pushes it).

BENCH is a run folder (a run by hand: one entry); or a leg's folder, whose manifest.json
(hftbench/manifest.py, written by push-leg or dispatch-leg) names each entry and its verdict;
or a folder of legs' folders, one per artifact (bench-run-<runner>/ of a push's pool, each
runner's entries with its own verdict: the history is keyed by runner).

A push's legs are published only where combine's verdict (POOL_VERDICT, main-combine's
verdict.json) names the leg under `pool.runners` and did not refuse it (a forged or
inconsistent leg: judge/legcheck.py); a refused leg's runs and verdict stay out of the history,
and the log says why. POOL_VERDICT set but missing (combine found no verdict to judge: a first
push) refuses every leg that brings a verdict.

Inputs (bench.yml's environment): REMOTE (default origin), PUBLISH_FETCH (default true:
scripts/ci/fetch-store first; false: build on the refs/remotes/REMOTE/gh-pages already
fetched), POOL_VERDICT, POOL_PREFIX (the legs' artifact prefix, default bench-run-),
CREEP_REFERENCE (the commit the dashboard's creep lines start from; unset: the oldest push).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .. import ci_job, manifest, results
from ..errors import UsageError
from ..publish.store_text import stored_verdict
from ..store import history as hs
from ..verdict import PoolSection, Verdict
from .base import Command

BRANCH = "gh-pages-publish"
BOT = ["-c", "user.name=hft-bench-bot", "-c", "user.email=hft-bench-bot@users.noreply.github.com"]


@dataclass(frozen=True)
class Entry:
    """One history entry to add: its folder, its kind (manifest.ROUNDS / RUN) and its verdict."""

    folder: Path
    kind: str
    verdict: Path | None

    def label(self) -> str:
        """How the commit message names it: a commit's rounds by that commit (only its hex digits:
        results.json is the runner's data), a run by its id."""
        if self.kind != manifest.ROUNDS:
            return self.folder.name
        runs = results.list_runs(self.folder)
        commit = results.load_run(runs[0]).git.get("commit") if runs else None
        return f"rounds of {re.sub('[^0-9a-f]', '', str(commit or '?')[:10])}"


def leg_entries(leg: Path) -> list[Entry]:
    """A leg's entries, from its manifest."""
    return [Entry(folder, kind, verdict) for folder, kind, verdict in manifest.read(leg)]


def pool_runners(path: Path) -> dict[str, tuple[str, str | None]] | None:
    """combine's verdict at `path`: runner name -> (state, why); None when the file is missing."""
    if not path.is_file():
        return None
    try:
        doc = json.loads(path.read_text())
        pool = Verdict.from_json(doc).pool
        if not isinstance(pool, PoolSection) or not isinstance(doc["pool"].get("runners"), list):
            raise KeyError("pool.runners")
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise UsageError(
            f"POOL_VERDICT {path} has no pool.runners ({exc}): pass the verdict.json that `hftbench "
            "combine` wrote (main-combine's artifact)"
        ) from exc
    return {r.name: (r.state, r.why) for r in pool.runners}


def refused(leg: Path, pool_verdict: Path | None, prefix: str) -> str | None:
    """Why combine's verdict keeps `leg` (a leg's folder) out of the history; None when it
    accepted it, or when no pool verdict is given (a run by hand)."""
    if pool_verdict is None:
        return None
    runners = pool_runners(pool_verdict)
    if runners is None:
        brings = (leg / "verdict.json").is_file() or any(e.verdict for e in leg_entries(leg))
        if brings:
            return (
                f"it brings a verdict, but combine wrote none ({pool_verdict} missing): its verdict "
                "was never judged"
            )
        return None
    if not leg.name.startswith(prefix):
        return f"its folder is not named {prefix}<runner>: no leg of the pool"
    name = leg.name.removeprefix(prefix)
    if name not in runners:
        return f"combine's verdict names no runner {name} (an artifact the pool did not assign)"
    state, why = runners[name]
    if state == "refused":
        return "combine refused it: " + re.sub(r"[\r\n]", " ", why or "no reason given")
    return None


class PublishCommand(Command):
    name = "publish"
    help = "CI: add runs to the history on gh-pages, rebuild the dashboard, commit into gh-pages-publish"
    raw_description = True

    @classmethod
    def add_arguments(cls, p) -> None:
        p.add_argument(
            "bench", type=Path, help="a run folder, a leg's folder (manifest.json) or a folder of legs"
        )

    def entries(self, bench: Path) -> list[Entry]:
        """BENCH's entries: a run folder, a leg's manifest, or each accepted leg's manifest."""
        if (bench / "results.json").is_file():
            return [Entry(bench, manifest.RUN, None)]
        if (bench / manifest.NAME).is_file():
            return leg_entries(bench)
        env = os.environ
        pool_verdict = Path(env["POOL_VERDICT"]) if env.get("POOL_VERDICT") else None
        found: list[Entry] = []
        for leg in sorted(p for p in bench.iterdir() if p.is_dir()):
            why = refused(leg, pool_verdict, env.get("POOL_PREFIX", "bench-run-"))
            if why:
                self.say(
                    f"leg {leg.name} not published: {why}; neither its runs nor its verdict go into the "
                    "history"
                )
            elif (leg / manifest.NAME).is_file():
                found += leg_entries(leg)
            else:
                self.say(f"leg {leg.name} not published: no {manifest.NAME} (the leg command writes it)")
        return found

    def run(self) -> int:
        bench = self.args.bench.absolute()
        if not bench.is_dir():
            raise UsageError(
                f"{bench}: no such folder; pass a run folder, a leg's folder or a folder of legs"
            )
        entries = self.entries(bench)
        if not entries:
            raise UsageError(
                f"{bench} holds no run folder to publish (a run folder, a leg's manifest.json, or one "
                "folder with one per leg that combine accepted; see above)"
            )
        labels = list(dict.fromkeys(e.label() for e in entries))  # each runner's rounds of one commit: once
        remote, root = os.environ.get("REMOTE") or "origin", self.root
        if not (root / "gh-pages" / "node_modules" / "uplot").is_dir():
            npm = ["npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"]
            subprocess.run(npm, cwd=root / "gh-pages", check=True)
        work = Path(tempfile.mkdtemp())
        orphan = f"hft-publish-orphan-{os.getpid()}"
        try:
            self.say(f"building on {remote}'s gh-pages")
            if (os.environ.get("PUBLISH_FETCH") or "true") == "true":
                ci_job.fetch_store(root, work / "store")
            site = self.site(work / "site", remote, orphan)
            self.build(site, entries)
            git(root, "-C", str(site), "add", "-A")
            git(root, "-C", str(site), *BOT, "commit", "-qm", f"history: add {' '.join(labels)}")
            git(root, "branch", "-f", BRANCH, git(root, "-C", str(site), "rev-parse", "HEAD"))
        finally:
            subprocess.run(
                ["git", "worktree", "remove", "--force", str(work / "site")], cwd=root, capture_output=True
            )
            subprocess.run(["git", "branch", "-D", "-q", orphan], cwd=root, capture_output=True)
            shutil.rmtree(work, ignore_errors=True)
        self.say(f"{BRANCH}: history: add {' '.join(labels)} (bundle it with scripts/ci/pages-bundle)")
        return 0

    def site(self, site: Path, remote: str, orphan: str) -> Path:
        """gh-pages' tip checked out at `site`; a first gh-pages an orphan commit, on a branch of
        its own that `run` deletes after the worktree, so a second publish here does not find it."""
        root = self.root
        tip = subprocess.run(
            ["git", "rev-parse", "-q", "--verify", f"refs/remotes/{remote}/gh-pages"],
            cwd=root,
            capture_output=True,
        )
        if tip.returncode == 0:
            git(root, "worktree", "add", "-q", "--detach", str(site), f"{remote}/gh-pages")
            return site
        self.say(f"no gh-pages branch on {remote}: creating it")
        git(root, "worktree", "add", "-q", "--detach", str(site))
        git(root, "-C", str(site), "checkout", "-q", "--orphan", orphan)
        git(root, "-C", str(site), "rm", "-rq", "--cached", ".")
        git(root, "-C", str(site), "clean", "-fdxq")
        return site

    def build(self, site: Path, entries: list[Entry]) -> None:
        """The entries into the store, its change points, the dashboard."""
        from .history import write_changepoints

        store = site / "data"
        for e in entries:
            runs = [results.load_run(e.folder)] if (e.folder / "results.json").is_file() else None
            runs = runs or [results.load_run(p) for p in results.list_runs(e.folder)]
            if not runs:
                raise UsageError(f"{e.folder}: no results.json in it or in its run_* folders")
            verdict = Verdict.from_json(json.loads(e.verdict.read_text())) if e.verdict else None
            try:
                added = hs.add_run(store, runs, stored_verdict(verdict) if verdict else None)
            except hs.StoreError as exc:
                raise UsageError(str(exc)) from exc
            print(
                f"history: added {added['run_id']} ({runs[-1].suite}, {len(added['results'])} series, "
                f"{len(runs)} round(s))"
            )
        doc = write_changepoints(store)
        print(
            f"history: {sum(len(v) for v in doc['series'].values())} change points in "
            f"{len(doc['series'])} series"
        )
        build = ["node", "gh-pages/build-src/build.mjs", "--store", str(store), "--out", str(site)]
        if os.environ.get("CREEP_REFERENCE"):
            build += ["--creep-reference", os.environ["CREEP_REFERENCE"]]
        proc = subprocess.run(build, cwd=self.root, stdout=subprocess.PIPE, text=True)
        print(proc.stdout, end="", file=sys.stderr)
        if proc.returncode != 0:
            raise UsageError(f"the dashboard's build failed (exit {proc.returncode}); see its output above")


def git(root: Path, *args: str) -> str:
    """git in the checkout `root` (or -C a worktree of it); its stdout, or UsageError with its message."""
    proc = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True)
    if proc.returncode != 0:
        raise UsageError(f"git {' '.join(args)} failed: {proc.stderr.strip()}")
    return proc.stdout.strip()
