"""git_info names the branch of a detached checkout from CI's environment."""

import subprocess

from hftbench.fingerprint import git_info


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
