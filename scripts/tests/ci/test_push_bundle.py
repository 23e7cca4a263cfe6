"""scripts/ci/pages-bundle + push-bundle: a gh-pages commit built in a read-only job, handed over
as a git bundle, checked and pushed by a job that runs nothing else; only a fast-forward of the
tip it was built on is pushed as is. A tip that moved on is reported (the history: rebuilt by the
next job), replayed (the microbenchmark data) or refused, as asked."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.ci

ROOT = Path(__file__).resolve().parents[3]
IDENT = ("-c", "user.name=t", "-c", "user.email=t@example.com")


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True
    ).stdout.strip()


def checkout(tmp: Path, name: str, origin: Path) -> Path:
    """A job's checkout: scripts/ci, origin = the bare repository."""
    repo = tmp / name
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    shutil.copytree(ROOT / "scripts" / "ci", repo / "scripts" / "ci")
    git(repo, "remote", "add", "origin", str(origin))
    return repo


def ci(repo: Path, script: str, *args: str, out: Path | None = None) -> subprocess.CompletedProcess:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(repo), "GITHUB_OUTPUT": str(out or repo / "output")}
    return subprocess.run([str(repo / "scripts/ci" / script), *args], capture_output=True, text=True, env=env)


def commit_on(repo: Path, ref: str | None, branch: str, files: dict[str, str]) -> str:
    """A commit adding `files` to the tree of `ref` (None: an orphan), as local branch `branch`."""
    env = {"GIT_INDEX_FILE": str(repo / ".git" / f"index-{branch}"), "PATH": "/usr/bin:/bin"}

    def plumb(*args: str, stdin: str | None = None) -> str:
        cmd = ["git", "-C", str(repo), *IDENT, *args]
        return subprocess.run(
            cmd, check=True, capture_output=True, text=True, env=env, input=stdin
        ).stdout.strip()

    plumb("read-tree", ref) if ref else plumb("read-tree", "--empty")
    for path, text in files.items():
        blob = plumb("hash-object", "-w", "--stdin", stdin=text)
        plumb("update-index", "--add", "--cacheinfo", f"100644,{blob},{path}")
    parents = ["-p", ref] if ref else []
    sha = plumb("commit-tree", plumb("write-tree"), *parents, "-m", f"add {', '.join(files)}")
    git(repo, "branch", "-f", branch, sha)
    return sha


@pytest.fixture
def origin(tmp_path):
    bare = tmp_path / "origin.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    return bare


def build(tmp: Path, origin: Path, files: dict[str, str], name: str = "build") -> tuple[Path, str]:
    """The read-only job: fetch gh-pages, commit on it, bundle. Returns the bundle folder and the commit."""
    repo = checkout(tmp, name, origin)
    r = ci(repo, "fetch-store", str(tmp / f"{name}-store"))
    assert r.returncode == 0, r.stderr
    tip = ["git", "-C", str(repo), "rev-parse", "-q", "--verify", "refs/remotes/origin/gh-pages"]
    has_tip = subprocess.run(tip, capture_output=True).returncode == 0
    sha = commit_on(repo, "refs/remotes/origin/gh-pages" if has_tip else None, "gh-pages-publish", files)
    r = ci(repo, "pages-bundle", "gh-pages-publish", str(tmp / f"{name}-pages"))
    assert r.returncode == 0, r.stderr
    return tmp / f"{name}-pages", sha


def test_first_publish_then_a_fast_forward_are_pushed(tmp_path, origin):
    pages, first = build(tmp_path, origin, {"data/index.json": "{}"}, "b1")
    assert (pages / "base").read_text().strip() == "none"
    push = checkout(tmp_path, "push", origin)
    r = ci(push, "push-bundle", str(pages), "--if-moved", "report")
    assert r.returncode == 0, r.stderr
    assert git(origin, "rev-parse", "gh-pages") == first and "moved=false" in (push / "output").read_text()
    pages, second = build(tmp_path, origin, {"data/shards/pr.json": "[1]"}, "b2")
    assert (pages / "base").read_text().strip() == first
    r = ci(push, "push-bundle", str(pages), "--if-moved", "fail")
    assert r.returncode == 0, r.stderr
    assert git(origin, "rev-parse", "gh-pages") == second and git(origin, "rev-parse", "gh-pages^") == first


def test_a_moved_tip_is_reported_refused_or_replayed_never_forced(tmp_path, origin):
    pages, _ = build(tmp_path, origin, {"data/index.json": "{}"}, "b0")
    push = checkout(tmp_path, "push", origin)
    assert ci(push, "push-bundle", str(pages), "--if-moved", "report").returncode == 0
    ours, _ = build(tmp_path, origin, {"micro/ours.txt": "ours"}, "ours")
    theirs, won = build(tmp_path, origin, {"micro/theirs.txt": "theirs"}, "theirs")
    assert ci(push, "push-bundle", str(theirs), "--if-moved", "report").returncode == 0

    r = ci(push, "push-bundle", str(ours), "--if-moved", "report")
    assert r.returncode == 0 and "moved on since the build" in r.stderr, r.stderr
    assert (push / "output").read_text().splitlines()[-1] == "moved=true"
    assert git(origin, "rev-parse", "gh-pages") == won
    r = ci(push, "push-bundle", str(ours), "--if-moved", "fail")
    assert r.returncode == 2 and "re-run" in r.stderr and git(origin, "rev-parse", "gh-pages") == won, (
        r.stderr
    )

    r = ci(push, "push-bundle", str(ours), "--if-moved", "replay")
    assert r.returncode == 0, r.stderr
    assert git(origin, "rev-parse", "gh-pages^") == won  # on top of the winner: nothing lost
    assert git(origin, "show", "gh-pages:micro/ours.txt") == "ours"
    assert git(origin, "show", "gh-pages:micro/theirs.txt") == "theirs"


def test_a_bundle_that_is_not_what_it_claims_is_refused(tmp_path, origin):
    pages, first = build(tmp_path, origin, {"data/index.json": "{}"}, "b0")
    push = checkout(tmp_path, "push", origin)
    assert ci(push, "push-bundle", str(pages), "--if-moved", "report").returncode == 0
    bad, _ = build(tmp_path, origin, {"x": "y"}, "bad")
    (bad / "base").write_text("; rm -rf /\n")
    r = ci(push, "push-bundle", str(bad), "--if-moved", "report")
    assert r.returncode == 2 and "must be a commit sha" in r.stderr, r.stderr
    (bad / "base").write_text("none\n")  # claims a first commit, but is built on the tip
    (bad / "gh-pages.bundle").write_bytes(b"not a bundle")
    r = ci(push, "push-bundle", str(bad), "--if-moved", "report")
    assert r.returncode == 2 and "not a git bundle" in r.stderr, r.stderr
    assert git(origin, "rev-parse", "gh-pages") == first
    r = ci(push, "push-bundle", str(tmp_path / "nothing"), "--if-moved", "report")
    assert r.returncode != 0 and git(origin, "rev-parse", "gh-pages") == first


def test_a_tip_moved_by_microbenchmarks_alone_takes_the_history_replayed_over_it(tmp_path, origin):
    """--replay-over micro/: the history build does not read micro/, so a microbenchmark commit
    that landed between a history build and its push is kept under it, not rebuilt; a tip that
    moved anywhere else still goes to the mode (here: refused)."""
    pages, _ = build(tmp_path, origin, {"data/index.json": "{}"}, "b0")
    push = checkout(tmp_path, "push", origin)
    assert ci(push, "push-bundle", str(pages), "--if-moved", "report").returncode == 0
    ours, _ = build(tmp_path, origin, {"data/shards/main.json": "[1]"}, "ours")
    micro, won = build(tmp_path, origin, {"micro/data.js": "window.BENCHMARK_DATA = {}"}, "micro")
    assert ci(push, "push-bundle", str(micro), "--if-moved", "replay").returncode == 0

    r = ci(push, "push-bundle", str(ours), "--if-moved", "fail", "--replay-over", "micro/")
    assert r.returncode == 0 and "by micro/ alone" in r.stderr, r.stderr
    assert git(origin, "rev-parse", "gh-pages^") == won
    assert git(origin, "show", "gh-pages:data/shards/main.json") == "[1]"
    assert git(origin, "show", "gh-pages:micro/data.js") == "window.BENCHMARK_DATA = {}"

    # Another history build won: the store must be rebuilt, so nothing is replayed.
    late, _ = build(tmp_path, origin, {"data/shards/main.json": "[1, 2]"}, "late")
    other, won = build(tmp_path, origin, {"data/index.json": '{"runs": 3}'}, "other")
    assert ci(push, "push-bundle", str(other), "--if-moved", "report").returncode == 0
    r = ci(push, "push-bundle", str(late), "--if-moved", "fail", "--replay-over", "micro/")
    assert r.returncode == 2 and "re-run" in r.stderr, r.stderr
    assert git(origin, "rev-parse", "gh-pages") == won
    # Nor when the microbenchmark commit changed a file the bundle changes too.
    mine, _ = build(tmp_path, origin, {"micro/index.html": "ours"}, "mine")
    clash, won = build(tmp_path, origin, {"micro/index.html": "theirs"}, "clash")
    assert ci(push, "push-bundle", str(clash), "--if-moved", "report").returncode == 0
    r = ci(push, "push-bundle", str(mine), "--if-moved", "report", "--replay-over", "micro/")
    assert r.returncode == 0 and (push / "output").read_text().splitlines()[-1] == "moved=true", r.stderr
    assert git(origin, "rev-parse", "gh-pages") == won
    r = ci(push, "push-bundle", str(mine), "--if-moved", "report", "--replay-over", "../")
    assert r.returncode == 2 and "a folder such as micro/" in r.stderr, r.stderr


def test_a_replay_keeps_both_appends_to_one_data_js_and_refuses_any_other_clash(tmp_path, origin):
    """Two microbenchmark publishers built on one tip, each appending to micro/data.js: the one
    that lost the race is replayed on the winner with both appends kept (github-action-benchmark's
    data.js merged: the winner's entries, then the loser's own); a clash in any other file is
    refused, nothing pushed."""

    def data(*runs: str) -> str:
        return "window.BENCHMARK_DATA = " + json.dumps({"entries": {"go": [{"commit": r} for r in runs]}})

    pages, _ = build(tmp_path, origin, {"micro/data.js": data("r1")}, "b0")
    push = checkout(tmp_path, "push", origin)
    assert ci(push, "push-bundle", str(pages), "--if-moved", "report").returncode == 0
    ours, _ = build(tmp_path, origin, {"micro/data.js": data("r1", "ours")}, "ours")
    theirs, won = build(tmp_path, origin, {"micro/data.js": data("r1", "theirs")}, "theirs")
    assert ci(push, "push-bundle", str(theirs), "--if-moved", "replay").returncode == 0
    r = ci(push, "push-bundle", str(ours), "--if-moved", "replay")
    assert r.returncode == 0, r.stderr
    assert git(origin, "rev-parse", "gh-pages^") == won
    doc = json.loads(git(origin, "show", "gh-pages:micro/data.js").removeprefix("window.BENCHMARK_DATA = "))
    assert [x["commit"] for x in doc["entries"]["go"]] == ["r1", "theirs", "ours"]

    tip = git(origin, "rev-parse", "gh-pages")
    mine, _ = build(tmp_path, origin, {"micro/index.html": "mine"}, "mine")
    clash, won = build(tmp_path, origin, {"micro/index.html": "theirs"}, "clash")
    assert ci(push, "push-bundle", str(clash), "--if-moved", "replay").returncode == 0
    r = ci(push, "push-bundle", str(mine), "--if-moved", "replay")
    assert r.returncode == 2 and "conflicted; nothing pushed" in r.stderr, r.stderr
    assert git(origin, "rev-parse", "gh-pages") == won != tip
