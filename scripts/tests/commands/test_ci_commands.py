"""The CI path's own commands, without a workflow: `hftbench stage-artifact` (a leg's upload as an
explicit list of regular files, never a link followed: issue 61), the manifest a leg hands to
publish (hftbench/manifest.py), and `hftbench dispatch-leg --check`'s inputs (before the build,
with python3 alone). pr-leg, push-leg, combine --github-output and publish run end to end in
test_workflows_act.py, test_ci_push_path.py and test_publish.py."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from hftbench import manifest
from hftbench.commands.dispatch_leg import run_flags
from hftbench.errors import UsageError

pytestmark = pytest.mark.ci

ROOT = Path(__file__).resolve().parents[3]
WRAPPER = ROOT / "scripts" / "ci" / "hftbench"
SECRET = b"runner credentials: -----BEGIN RSA PRIVATE KEY----- 0xdeadbeef\n"


def hostile_leg(tmp_path: Path) -> tuple[Path, Path]:
    """A leg's output as the head's code could leave it: results and a verdict, and beside them a
    `chmod 555` folder (it survives `git worktree remove --force`) holding a link to a secret
    file of the runner, a link at the top, a hard link, the exported tree and each side's bin/."""
    secret = tmp_path / "runner" / ".credentials_rsaparams.json"
    secret.parent.mkdir()
    secret.write_bytes(SECRET)
    out = tmp_path / "pr-bench"
    run = out / "ab" / "head" / "run_20261203T000000Z_abcdef"
    (run / "latency-1c").mkdir(parents=True)
    (run / "results.json").write_text('{"results": []}\n')
    (run / "latency-1c" / "hft.json").write_text("{}\n")
    (run / "latency-1c" / "hft.hlog").write_text("#[histogram]\n")
    (out / "verdict.json").write_text('{"status": "no_change"}\n')
    (out / "summary.md").write_text("## no change\n")
    (out / "ab" / "base" / "bin").mkdir(parents=True)
    (out / "ab" / "base" / "bin" / "hft-server").write_bytes(b"\x7fELF server")
    (out / "ab" / "head" / "bin").mkdir(parents=True)
    (out / "ab" / "head" / "bin" / "hft-server").write_bytes(SECRET)  # what the head's build wrote
    (out / "ab" / "head" / "worktree" / "src").mkdir(parents=True)
    (out / "ab" / "head" / "worktree" / "src" / "notes.md").write_text("the head's own files\n")
    locked = out / "ab" / "head" / "leftover"
    locked.mkdir()
    (locked / "stolen.json").symlink_to(secret)
    (locked / "stolen.log").symlink_to(secret.parent)  # a link to a folder: never descended
    locked.chmod(0o555)
    (out / "credentials.json").symlink_to(secret)
    os.link(secret, out / "ab" / "head" / "hard.json")  # a second name of the secret
    return out, secret


def staged_bytes(folder: Path) -> list[bytes]:
    return [p.read_bytes() for p in folder.rglob("*") if p.is_file() and not p.is_symlink()]


def test_stage_artifact_takes_results_and_never_a_link_or_the_head_s_tree(tmp_path):
    out, secret = hostile_leg(tmp_path)
    try:
        dest = tmp_path / "pr-bench-artifact"
        r = subprocess.run(
            [str(WRAPPER), "stage-artifact", str(out), str(dest)], capture_output=True, text=True
        )
        assert r.returncode == 0, r.stderr
        files = sorted(str(p.relative_to(dest)) for p in dest.rglob("*") if p.is_file())
        assert files == [
            "ab/base/bin/hft-server",  # the server base served, built by the harness; never the head's
            "ab/head/run_20261203T000000Z_abcdef/latency-1c/hft.hlog",
            "ab/head/run_20261203T000000Z_abcdef/latency-1c/hft.json",
            "ab/head/run_20261203T000000Z_abcdef/results.json",
            "summary.md",
            "verdict.json",
        ]
        assert not [p for p in dest.rglob("*") if p.is_symlink()]
        assert SECRET not in staged_bytes(dest)
        # each link and the second name are said, by path
        for left in ("credentials.json", "leftover/stolen.json", "leftover/stolen.log", "hard.json"):
            assert f"{left}: " in r.stderr, (left, r.stderr)
        # The protection is what keeps it out: a plain copy that follows links, as upload-artifact
        # does, puts the secret's bytes into the artifact.
        plain = tmp_path / "plain"
        shutil.copytree(out, plain)
        assert staged_bytes(plain).count(SECRET) >= 3
    finally:
        (out / "ab" / "head" / "leftover").chmod(0o755)


def test_stage_artifact_of_a_leg_that_wrote_nothing_stages_nothing(tmp_path):
    dest = tmp_path / "dest"
    r = subprocess.run(
        [str(WRAPPER), "stage-artifact", str(tmp_path / "none"), str(dest)], capture_output=True, text=True
    )
    assert r.returncode == 0 and dest.is_dir() and not any(dest.iterdir()), r.stderr
    assert "the leg wrote nothing" in r.stderr


def test_a_manifest_names_each_entry_and_its_verdict(tmp_path):
    leg = tmp_path / "bench-run-a"
    (leg / "ab" / "head").mkdir(parents=True)
    (leg / "runs" / "run_x").mkdir(parents=True)
    m = manifest.Manifest()
    m.add(leg / "ab" / "head", manifest.ROUNDS, leg, leg / "verdict.json")
    m.add(leg / "runs" / "run_x", manifest.RUN, leg)
    m.write(leg)
    assert manifest.read(leg) == [
        (leg / "ab" / "head", manifest.ROUNDS, leg / "verdict.json"),
        (leg / "runs" / "run_x", manifest.RUN, None),
    ]


@pytest.mark.parametrize(
    ("entry", "said"),
    [
        ({"folder": "../../etc", "kind": "run"}, "leaves the leg's folder"),
        ({"folder": "/etc", "kind": "run"}, "leaves the leg's folder"),
        ({"folder": "runs/x", "kind": "run", "verdict": "../pool/verdict.json"}, "leaves the leg's folder"),
        ({"folder": "link", "kind": "run"}, "resolves outside the leg's folder"),
        ({"folder": "runs/x", "kind": "everything"}, "is not {folder, kind"),
    ],
)
def test_a_manifest_cannot_name_a_folder_outside_its_leg(tmp_path, entry, said):
    """The manifest is data from the leg's runner: publish refuses an entry outside the leg."""
    leg = tmp_path / "bench-run-a"
    leg.mkdir()
    (leg / "link").symlink_to(tmp_path)
    (leg / manifest.NAME).write_text(json.dumps({"entries": [entry]}))
    with pytest.raises(UsageError, match=said):
        manifest.read(leg)


def test_dispatch_inputs_become_run_flags_and_bad_ones_are_refused():
    assert run_flags({"SUITE": "stress", "ORDERS": "5000", "CLIENTS": "rust,c"}, 1001, "ghrunner") == [
        *("--suite", "stress", "--quiet", "--clients", "rust,c", "--orders", "5000"),
    ]
    with pytest.raises(UsageError, match="input orders must be a whole number"):
        run_flags({"ORDERS": "12x"}, 1001, "ghrunner")
    with pytest.raises(UsageError, match="input clients must be a comma list"):
        run_flags({"CLIENTS": "rust;rm -rf /"}, 1001, "ghrunner")
    # The network suite needs root, which the runner's job user lacks by design: refused, with the fix.
    with pytest.raises(UsageError, match=r"suite network needs root.*ghrunner.*sudo \.venv/bin/hftbench run"):
        run_flags({"SUITE": "network"}, 1001, "ghrunner")
    assert run_flags({"SUITE": "network"}, 0, "root")[:2] == ["--suite", "network"]


def test_dispatch_check_runs_before_the_build_with_python3_alone(tmp_path):
    """bench.yml's first step of a run by hand: no .venv yet, so the wrapper's python3 runs it."""
    checkout = tmp_path / "checkout"
    shutil.copytree(ROOT / "scripts" / "ci", checkout / "scripts" / "ci")
    shutil.copytree(ROOT / "scripts" / "hftbench", checkout / "scripts" / "hftbench")
    shutil.copytree(ROOT / "bench-config", checkout / "bench-config")
    env = {k: v for k, v in os.environ.items() if k not in ("OUT", "VIRTUAL_ENV", "PYTHONPATH")}
    cmd = [str(checkout / "scripts" / "ci" / "hftbench"), "dispatch-leg", "--check"]
    r = subprocess.run(cmd, env={**env, "SUITE": "stress", "ORDERS": "5000"}, capture_output=True, text=True)
    assert r.returncode == 0 and "--suite stress --quiet --orders 5000" in r.stderr, r.stderr
    r = subprocess.run(cmd, env={**env, "SUITE": "stress", "ORDERS": "12x"}, capture_output=True, text=True)
    assert r.returncode == 2 and "input orders must be a whole number (got '12x')" in r.stderr
