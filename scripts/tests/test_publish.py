"""scripts/ci/publish on a checkout whose origin has no gh-pages yet: it builds the first
gh-pages commit, and does so again when run a second time in the same checkout (a retried
job step, a run by hand after a failed push)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from gate_synth import latency_run, result_doc, write_run

pytestmark = pytest.mark.ci

ROOT = Path(__file__).resolve().parents[2]

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
        publish = repo / "scripts" / "ci" / "publish"
        r = subprocess.run([str(publish), str(run)], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr[-3000:]
        shard = json.loads(git(repo, "show", "gh-pages-publish:data/shards/pr/2026-11.json"))
        assert [e["run_id"] for e in shard["runs"]] == [f"run_20261124T000000Z_00000{n}"]
    assert "orphan" not in git(repo, "branch", "--list")  # the temporary branch is gone
    assert git(repo, "worktree", "list").count("\n") == 1
