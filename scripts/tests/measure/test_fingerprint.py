"""git_info names the branch of a detached checkout from CI's environment; commit_info reads a
commit from the clone by sha; host(tree) runs that tree's tuning script, which is why the
harness passes it no side's tree (issue 61)."""

import subprocess

from hftbench.measure import fingerprint
from hftbench.measure.fingerprint import git_info
from support.hostile_head import git, new_repo, tuning_attack


def _repo(tmp_path):
    def git(*args):
        subprocess.run(["git", "-C", str(tmp_path), *args], check=True, capture_output=True)

    git("init", "-q", "-b", "main")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "first")
    return git


def test_branch_of_a_normal_checkout(tmp_path, monkeypatch):
    monkeypatch.delenv("GITHUB_REF_NAME", raising=False)
    monkeypatch.delenv("GITHUB_HEAD_REF", raising=False)
    _repo(tmp_path)
    info = git_info(tmp_path)
    assert info["branch"] == "main"
    assert info["message"] == "first"
    assert info["dirty"] is False


def test_detached_checkout_takes_the_ci_branch_name(tmp_path, monkeypatch):
    git = _repo(tmp_path)
    git("checkout", "-q", "--detach")
    monkeypatch.delenv("GITHUB_HEAD_REF", raising=False)
    monkeypatch.delenv("GITHUB_REF_NAME", raising=False)
    assert git_info(tmp_path)["branch"] == "HEAD"
    monkeypatch.setenv("GITHUB_REF_NAME", "main")
    assert git_info(tmp_path)["branch"] == "main"
    monkeypatch.setenv("GITHUB_HEAD_REF", "feature/faster-book")
    assert git_info(tmp_path)["branch"] == "feature/faster-book"


def test_the_host_name_is_never_stored_nor_part_of_the_runner_id(tmp_path):
    """The history store is published on gh-pages: the runner's host name stays off it, and
    the runner id (a hash of CPU, cores, kernel, ...) does not change with it."""
    import numpy as np
    from hftbench.measure.fingerprint import host, runner_id
    from hftbench.results import load_run
    from hftbench.store import history as hs
    from support.gate_synth import latency_run, result_doc, write_run

    fp = {**host(), "hostname": "bench-7.secret-lab.example"}
    assert runner_id(fp) == runner_id({**fp, "hostname": "another-name"})
    doc = result_doc("large", "rust", latency_run(np.random.default_rng(5), 2_000))
    run = write_run(tmp_path / "runs", "run_01", {("large", "rust"): [doc]}, fingerprint=fp)
    hs.add_run(tmp_path / "store", load_run(run))
    stored = [p.read_text() for p in (tmp_path / "store").rglob("*.json")]
    assert stored and not [t for t in stored if "secret-lab" in t or "bench-7" in t]


def test_a_trees_tuning_script_runs_when_its_host_fingerprint_is_taken(tmp_path):
    """The attack is real: fingerprint.host(tree) runs tree's own hft/scripts/setup_hft_system.sh,
    unsandboxed (ab passed a side's worktree before issue 61); the harness now passes none."""
    tree, marker = tmp_path / "tree", tmp_path / "tuning-marker"
    script = tree / "hft" / "scripts" / "setup_hft_system.sh"
    script.parent.mkdir(parents=True)
    script.write_text(tuning_attack(marker))
    fingerprint.host(tree)
    assert marker.is_file()


def test_a_commits_git_info_is_read_from_the_clone_by_sha(tmp_path, monkeypatch):
    monkeypatch.delenv("GITHUB_HEAD_REF", raising=False)
    monkeypatch.delenv("GITHUB_REF_NAME", raising=False)
    repo = tmp_path / "repo"
    new_repo(repo)
    git(repo, "commit", "-q", "--allow-empty", "-m", "first")
    first = git(repo, "rev-parse", "HEAD")
    git(repo, "commit", "-q", "--allow-empty", "-m", "second")
    assert fingerprint.commit_info(repo, first, "main") == {
        "commit": first,
        "branch": "main",
        "dirty": False,
        "message": "first",
        "author": "t <t@example.com>",
    }
    assert fingerprint.commit_info(repo, first)["branch"] == "HEAD"  # as a detached checkout's
    unknown = fingerprint.commit_info(tmp_path / "no-repo", first)
    assert unknown["commit"] == first and unknown["message"] is None and unknown["dirty"] is False
