"""What the harness runs in a side's tree and how it leaves it (measure/worktrees.py, issue 61):
every git call goes through the fence (git_cmd), so a head's planted submodule with
core.fsmonitor runs nothing (unfenced, it does: the attack is real), and remove_worktrees undoes
what a build made read-only, follows no link out, and names a tree it could not remove."""

from __future__ import annotations

import subprocess

from hftbench.measure import fingerprint
from hftbench.measure.worktrees import git_cmd, remove_worktrees
from support.hostile_head import add_gitlink, fsmonitor_attack, git, new_repo


def test_git_status_in_a_tree_with_a_planted_submodule_runs_its_fsmonitor_unless_fenced(tmp_path):
    """The attack is real: git status, as git_info ran it in ab's head worktree before issue 61,
    runs the command a populated submodule's core.fsmonitor names. The fence (git_cmd: what
    every git call of hftbench goes through) runs none of it."""
    tree, marker = tmp_path / "tree", tmp_path / "fsmonitor-marker"
    new_repo(tree)
    (tree / "a").write_text("a\n")
    git(tree, "add", "a")
    git(tree, "commit", "-qm", "first")
    add_gitlink(tree)
    git(tree, "commit", "-qm", "a gitlink")
    planted = subprocess.run(["sh", "-c", fsmonitor_attack(marker)], cwd=tree, capture_output=True, text=True)
    assert "fsmonitor planted" in planted.stdout, planted.stdout + planted.stderr
    subprocess.run(
        ["git", "-C", str(tree), "status", "--porcelain", "--untracked-files=no"], capture_output=True
    )
    assert marker.is_file(), (
        "unfenced git status did not run the submodule's fsmonitor: the attack is not real"
    )
    marker.unlink()
    info = fingerprint.git_info(tree)
    for args in (("status", "--porcelain"), ("diff", "--stat"), ("log", "-1")):
        subprocess.run(git_cmd(tree, *args), capture_output=True)
    assert not marker.exists(), "a fenced git command ran the submodule's core.fsmonitor"
    assert info["commit"] == git(tree, "rev-parse", "HEAD") and info["message"] == "a gitlink"


def test_removing_a_tree_undoes_what_its_build_made_read_only_and_names_what_survives(
    tmp_path, monkeypatch, capsys
):
    tree = tmp_path / "out" / "head" / "worktree"
    (tree / "locked" / "in").mkdir(parents=True)
    (tree / "locked" / "in" / "f").write_text("x")
    (tree / "closed").mkdir()
    outside = tmp_path / "outside"
    outside.write_text("x")
    outside.chmod(0o444)
    (tree / "link").symlink_to(outside)
    for path, mode in (
        (tree / "locked" / "in" / "f", 0o444),
        (tree / "locked" / "in", 0o555),
        (tree / "locked", 0o555),
        (tree / "closed", 0o000),
    ):
        path.chmod(mode)
    assert remove_worktrees(tmp_path, [tree, tmp_path / "never-made"]) == [] and not tree.exists()
    assert outside.stat().st_mode & 0o777 == 0o444  # a link inside was not followed
    stuck = tmp_path / "out" / "base" / "worktree"
    stuck.mkdir(parents=True)
    monkeypatch.setattr("shutil.rmtree", lambda *a, **kw: None)
    assert remove_worktrees(tmp_path, [stuck]) == [stuck]
    assert f"could not remove {stuck}" in capsys.readouterr().err
