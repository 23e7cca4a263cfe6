"""`hftbench publish` (bench.yml: scripts/ci/hftbench publish) on a checkout whose origin has no
gh-pages yet: it builds the first gh-pages commit, and does so again when run a second time in
the same checkout (a retried job step, a run by hand after a failed push); a push's legs
published by their manifests, only where combine accepted them."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from support.gate_synth import latency_run, result_doc, write_run

pytestmark = pytest.mark.ci

ROOT = Path(__file__).resolve().parents[3]

needs = pytest.mark.skipif(
    not (ROOT / "gh-pages" / "node_modules" / "uplot").is_dir()
    or shutil.which("node") is None
    or not os.access(ROOT / ".venv" / "bin" / "hftbench", os.X_OK),
    reason="needs gh-pages/node_modules and .venv (make deps)",
)


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


@needs
def test_publish_twice_in_one_checkout_without_a_gh_pages_branch(tmp_path):
    origin, repo = tmp_path / "origin.git", tmp_path / "repo"
    subprocess.run(["git", "init", "-q", "--bare", str(origin)], check=True)
    subprocess.run(["git", "clone", "-q", "--no-local", str(ROOT), str(repo)], check=True)
    git(repo, "remote", "set-url", "origin", str(origin))
    shutil.copytree(ROOT / "scripts" / "ci", repo / "scripts" / "ci", dirs_exist_ok=True)  # as in the tree
    for name in (".venv", "gh-pages/node_modules"):  # installed, not in git
        (repo / name).symlink_to(ROOT / name)
    rng = np.random.default_rng(9)
    for n in (1, 2):
        doc = result_doc("large", "rust", latency_run(rng, 2_000))
        run = write_run(tmp_path / f"bench{n}", f"run_20261124T000000Z_00000{n}", {("large", "rust"): [doc]})
        publish = [str(repo / "scripts" / "ci" / "hftbench"), "publish"]
        r = subprocess.run([*publish, str(run)], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr[-3000:]
        shard = json.loads(git(repo, "show", "gh-pages-publish:data/shards/pr/2026-11.json"))
        assert [e["run_id"] for e in shard["runs"]] == [f"run_20261124T000000Z_00000{n}"]
    assert "orphan" not in git(repo, "branch", "--list")  # the temporary branch is gone
    assert git(repo, "worktree", "list").count("\n") == 1
    # CREEP_REFERENCE (bench.yml: vars.CREEP_REFERENCE) reaches the dashboard's build, which
    # refuses a reference that is no commit sha
    env = {**os.environ, "CREEP_REFERENCE": "v1.4"}
    r = subprocess.run([*publish, str(run)], capture_output=True, text=True, env=env)
    assert r.returncode != 0 and 'creep reference "v1.4" is not a 7 to 40 digit' in r.stderr


def _checkout(tmp_path: Path) -> Path:
    """A clone of this checkout, as the publish job has it: origin without gh-pages, this tree's
    scripts/ci, the installed .venv and dashboard packages."""
    origin, repo = tmp_path / "origin.git", tmp_path / "repo"
    subprocess.run(["git", "init", "-q", "--bare", str(origin)], check=True)
    subprocess.run(["git", "clone", "-q", "--no-local", str(ROOT), str(repo)], check=True)
    git(repo, "remote", "set-url", "origin", str(origin))
    shutil.copytree(ROOT / "scripts" / "ci", repo / "scripts" / "ci", dirs_exist_ok=True)
    for name in (".venv", "gh-pages/node_modules"):
        (repo / name).symlink_to(ROOT / name)
    return repo


def _leg(legs: Path, name: str, run_id: str, rng) -> None:
    """A push's leg as its artifact holds it: bench-run-<name>/runs/<run_id>/, its verdict, and
    the manifest that names the run as the verdict's entry."""
    doc = result_doc("large", "rust", latency_run(rng, 2_000))
    write_run(legs / f"bench-run-{name}" / "runs", run_id, {("large", "rust"): [doc]})
    entry = {"folder": f"runs/{run_id}", "kind": "run", "verdict": "verdict.json"}
    (legs / f"bench-run-{name}" / "manifest.json").write_text(json.dumps({"entries": [entry]}))
    verdict = {
        "status": "no_change",
        "exit_code": 0,
        "results": [],
        "pool_leg": name,
        "base": {"run_ids": []},
        "head": {"run_ids": [run_id]},
    }
    (legs / f"bench-run-{name}" / "verdict.json").write_text(json.dumps(verdict))


@needs
def test_publish_leaves_out_a_leg_that_combine_refused_and_publishes_the_one_it_accepted(tmp_path):
    repo = _checkout(tmp_path)
    legs, rng = tmp_path / "bench", np.random.default_rng(3)
    _leg(legs, "a", "run_20261124T000000Z_0000aa", rng)
    _leg(legs, "b", "run_20261124T000000Z_0000bb", rng)
    why = "leg b: verdict.json pool_leg: 'a', but its artifact is runner b's\n::error::forged"
    seen = {"runner": None, "verdict": None, "rounds_per_side": None, "measure_s": None}
    seen |= {"calibration": None, "rows": [], "calibrated_mde": None, "optional": False}
    pool = {  # combine's verdict, as read: every runner's fields
        "status": "no_change",
        "pool": {
            "runners": [
                {"name": "a", "state": "complete", "why": None, **seen},
                {"name": "b", "state": "refused", "why": why, **seen},
            ]
        },
    }
    (tmp_path / "pool.json").write_text(json.dumps(pool))
    publish = [str(repo / "scripts" / "ci" / "hftbench"), "publish"]

    def run(pool_verdict: Path | None) -> subprocess.CompletedProcess:
        env = {**os.environ, "POOL_VERDICT": str(pool_verdict)} if pool_verdict else dict(os.environ)
        return subprocess.run([*publish, str(legs)], capture_output=True, text=True, env=env)

    r = run(tmp_path / "pool.json")
    assert r.returncode == 0, r.stderr[-3000:]
    assert (
        "hftbench publish: leg bench-run-b not published: combine refused it: leg b: verdict.json pool_leg: "
        "'a', but its artifact is runner b's ::error::forged; neither its runs nor its verdict go "
        "into the history"
    ) in r.stderr
    shard = json.loads(git(repo, "show", "gh-pages-publish:data/shards/pr/2026-11.json"))
    assert [e["run_id"] for e in shard["runs"]] == ["run_20261124T000000Z_0000aa"]
    # Every leg refused: nothing is published, and it fails saying so.
    pool["pool"]["runners"][0]["state"] = "refused"
    (tmp_path / "pool.json").write_text(json.dumps(pool))
    r = run(tmp_path / "pool.json")
    assert r.returncode == 2 and "leg bench-run-a not published: combine refused it" in r.stderr
    assert "holds no run folder to publish" in r.stderr
    # combine wrote no verdict (no leg compared): a leg that brings one was never judged.
    r = run(tmp_path / "missing.json")
    assert r.returncode == 2 and "it brings a verdict, but combine wrote none" in r.stderr
    # Not combine's verdict: refused with the fix, nothing published.
    (tmp_path / "other.json").write_text('{"status": "no_change"}')
    r = run(tmp_path / "other.json")
    assert (
        r.returncode == 2
        and "has no pool.runners" in r.stderr
        and "pass the verdict.json that `hftbench combine` wrote" in r.stderr
    )
    # Without POOL_VERDICT (a run by hand), both legs: what publish did before.
    r = run(None)
    assert r.returncode == 0, r.stderr[-3000:]
    shard = json.loads(git(repo, "show", "gh-pages-publish:data/shards/pr/2026-11.json"))
    assert sorted(e["run_id"] for e in shard["runs"]) == [
        "run_20261124T000000Z_0000aa",
        "run_20261124T000000Z_0000bb",
    ]
