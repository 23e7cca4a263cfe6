"""Issue 61, item 3: what the sandbox of a pull request's code sees and may ask of the kernel
(measure/sandbox.py). Its build and its server read none of the runner's secrets (the runner's
own folder with `.runner` and `.credentials`, $RUNNER_TEMP, /etc/hft-runner and /etc/hft-bench,
the job user's home and cargo's credentials, base's side in the harness's output, what
HFT_SANDBOX_HIDE names), its build sends nothing anywhere, a nested user namespace and the
calls of the seccomp filter are refused, an older bwrap or a missing filter is named, and a
head whose /stats lies about its orders is a regression naming them.

Each attack (support/hostile_head.py) runs twice: in the sandbox, where it gets nothing, and without
it (the same build unsandboxed, the same server started directly, the same command outside),
where it gets what it went for: the test can fail. The runner's folders are stand-ins under
the test's tmp_path, never the host's /etc or home."""

from __future__ import annotations

import json
import os
import pwd
import re
import shutil
import subprocess
import time
import uuid
from pathlib import Path

import pytest
from hftbench import cli
from hftbench.measure import sandbox
from hftbench.measure.server import Server
from hftbench.measure.worktrees import build_server, export_commit
from support.hftbench_fakes import ab_argv
from support.hostile_head import (
    ROOT,
    SERVER,
    Outside,
    egress_shell,
    kernel_attack,
    lying_stats,
    read_attack,
    runner_world,
)

CLIENT = ROOT / "bin" / "client-hft"
needs_sandbox = pytest.mark.skipif(
    os.environ.get("CI") != "true" and sandbox.probe() is not None,
    reason=f"no sandbox can start here ({sandbox.probe()}): {sandbox.FIX}",
)
needs_binaries = pytest.mark.usefixtures("real_binaries")  # conftest.py: skips without bin/; measuring


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True
    ).stdout.strip()


@pytest.fixture
def runner(tmp_path, monkeypatch):
    """A job on a runner (hostile_head.runner_world) as the harness sees it: its workspace,
    RUNNER_TEMP, HOME and cargo home in the environment, the two /etc folders' stand-ins in
    sandbox.RUNNER_SECRETS, base's built side in the harness's output ($OUT) and an operator's
    file named by HFT_SANDBOX_HIDE, each with a secret. "secrets": the files the head must not
    read (what it read is told by its tag, "tag")."""
    tag = uuid.uuid4().hex[:12]
    world = runner_world(tmp_path / "host", tag)
    out = world["RUNNER_TEMP"] / "pr-bench" / "ab"
    base_server = out / "base" / "sandboxed" / "hft-server"
    base_server.parent.mkdir(parents=True)
    base_server.write_text(f"secret-base-{tag}\n")
    operator = tmp_path / "operator" / "token"
    operator.parent.mkdir()
    operator.write_text(f"secret-operator-{tag}\n")
    monkeypatch.setenv("GITHUB_WORKSPACE", str(world["workspace"]))
    monkeypatch.setenv("RUNNER_TEMP", str(world["RUNNER_TEMP"]))
    monkeypatch.setenv("OUT", str(world["RUNNER_TEMP"] / "pr-bench"))
    monkeypatch.setenv("HOME", str(world["HOME"]))
    monkeypatch.setenv("CARGO_HOME", str(world["HOME"] / ".cargo"))
    monkeypatch.delenv("RUSTUP_HOME", raising=False)
    monkeypatch.setenv(sandbox.HIDE_ENV, f"{tmp_path / 'no-such-path'}:{operator}")
    etc = world["etc"]
    monkeypatch.setattr(sandbox, "RUNNER_SECRETS", (str(etc / "hft-runner"), str(etc / "hft-bench")))
    secrets = [world[k] for k in ("runner", "credentials", "rsaparams", "runner_temp", "ssh_key")]
    secrets += [
        world["cargo_credentials"],
        world["etc_hft_runner"],
        world["etc_hft_bench"],
        base_server,
        operator,
    ]
    return {**world, "tag": tag, "out": out, "secrets": secrets, "base_server": base_server}


def test_hidden_covers_the_runners_folders_once_each_and_only_those_that_exist(runner, tmp_path):
    covered = sandbox.hidden((runner["out"],))
    runner_folder = runner["runner"].parent
    assert sandbox.runner_folder() == runner_folder
    assert (
        set(covered)
        == {
            runner["etc"] / "hft-runner",
            runner["etc"] / "hft-bench",
            runner_folder,  # holds $RUNNER_TEMP, $OUT and the output: no tmpfs of their own
            runner["HOME"],
            tmp_path / "operator" / "token",
        }
        | _passwd_home()
    ), covered
    assert Path("/") not in sandbox.hidden((Path("/"),))
    head = str(runner["out"] / "head")
    args = sandbox.wrap(["true"], writable=(Path(head),), hide=(runner["out"],))
    # the runner's folder covered first, the tree inside it bound back, then the cover read-only
    cover = args.index(str(runner_folder))
    bind = args.index(head)
    remount = len(args) - 1 - args[::-1].index(str(runner_folder))
    assert args[cover - 1] == "--tmpfs" and args[bind - 1] == "--bind" and args[remount - 1] == "--remount-ro"
    assert cover < bind < remount


def _passwd_home() -> set[Path]:
    """The job user's home in passwd, covered beside $HOME (a runner's user has /nonexistent)."""
    home = Path(os.path.realpath(pwd.getpwuid(os.getuid()).pw_dir))
    return {home} if home.exists() and home != Path("/") else set()


def _head_repo(path: Path, build: str) -> tuple[Path, str]:
    """A one-commit repository whose build.sh runs `build` and installs server.sh."""
    path.mkdir(parents=True)
    _git(path, "init", "-q")
    (path / "build.sh").write_text(build + "mkdir -p bin && install -m 755 server.sh bin/hft-server\n")
    (path / "server.sh").write_text(f'#!/bin/sh\nexec {SERVER} "$@"\n')
    _git(path, "add", ".")
    _git(path, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "head")
    return path, _git(path, "rev-parse", "HEAD")


def _read(log: str, tag: str) -> list[str]:
    return sorted(line for line in log.splitlines() if line.startswith("read ") and tag in line)


@needs_sandbox
def test_a_build_reads_none_of_the_runners_secrets_and_sends_nothing(runner, tmp_path):
    cargo_config = runner["HOME"] / ".cargo" / "config.toml"
    with Outside() as outside:
        attack = read_attack([*runner["secrets"], cargo_config]) + egress_shell(
            "127.0.0.1", outside.port, runner["tag"]
        )
        repo, sha = _head_repo(tmp_path / "repo", attack)
        target = tmp_path / "target" / "ab"
        scratch = sandbox.scratch_for(target, seed=False)
        try:
            build_server(repo, sha, runner["out"] / "head", "sh build.sh", target, scratch=scratch)
        finally:
            sandbox.remove_scratch(scratch)
        boxed = (runner["out"] / "head" / "build.log").read_text()
        assert not outside.received, f"the sandboxed build reached outside: {outside.received}"
        # The same build unsandboxed (as base builds): every secret read, the listener reached.
        build_server(repo, sha, tmp_path / "open" / "head", "sh build.sh", target)
        opened = (tmp_path / "open" / "head" / "build.log").read_text()
        assert outside.saw(runner["tag"].encode()), outside.received
    assert not _read(boxed, runner["tag"]), f"the sandboxed build read: {_read(boxed, runner['tag'])}"
    assert all(f"refused {p}" in boxed for p in runner["secrets"]), boxed
    assert "egress refused" in boxed and "egress sent" not in boxed
    # cargo's own settings are there for the build; its registry token is not
    assert f"read {cargo_config}: # the job's cargo settings" in boxed
    assert len(_read(opened, runner["tag"])) == len(runner["secrets"]), opened
    assert "egress sent" in opened


@needs_binaries
@needs_sandbox
def test_a_server_reads_none_of_the_runners_secrets(runner, tmp_path):
    head = runner["out"] / "head" / "sandboxed" / "hft-server"
    head.parent.mkdir(parents=True)
    head.write_text(f'#!/bin/sh\n{read_attack(runner["secrets"])}exec {SERVER} "$@"\n')
    head.chmod(0o755)
    launcher = runner["out"] / "head" / "bin" / "hft-server"
    sandbox.server_launcher(head, launcher, hide=(runner["out"],))
    with Server(launcher, tmp_path / "boxed.log") as boxed:
        assert boxed.stats()["total_orders"] == 0  # its own binary bound back: it serves
    with Server(head, tmp_path / "open.log"):
        pass
    boxed_log, open_log = (tmp_path / "boxed.log").read_text(), (tmp_path / "open.log").read_text()
    assert not _read(boxed_log, runner["tag"]), _read(boxed_log, runner["tag"])
    assert all(f"refused {p}" in boxed_log for p in runner["secrets"]), boxed_log
    assert len(_read(open_log, runner["tag"])) == len(runner["secrets"]), open_log


def _run(cmd: list[str]) -> str:
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


@pytest.fixture
def fresh_probe():
    """sandbox's probe and hardening found anew in this test, and again after it."""

    def forget():
        sandbox.probe.cache_clear()
        sandbox.hardening.cache_clear()
        sandbox._userns_refused.clear()

    forget()
    yield
    forget()


@needs_sandbox
def test_a_nested_user_namespace_and_the_filters_calls_are_refused_inside_and_run_outside(fresh_probe):
    if sandbox.hardening().missing:
        pytest.skip(f"this host's sandbox cannot refuse {sandbox.hardening().missing}")
    inside = _run(sandbox.wrap(["sh", "-c", kernel_attack()], writable=()))
    assert {"unshare refused", "setarch refused", "keyctl refused"} <= set(inside.splitlines()), inside
    outside = _run(["sh", "-c", kernel_attack()])
    assert {"unshare ran", "setarch ran"} <= set(outside.splitlines()), outside


@needs_sandbox
def test_each_fence_refuses_on_its_own(fresh_probe, monkeypatch):
    """Without the filter, --disable-userns alone still refuses the nested namespace while the
    personality runs; without either, both run inside: each is what refuses its attack."""
    if sandbox.hardening().missing:
        pytest.skip(f"this host's sandbox cannot refuse {sandbox.hardening().missing}")
    no_filter = sandbox.Hardening(True, None, ("the seccomp filter (off in this test)",))
    monkeypatch.setattr(sandbox, "hardening", lambda: no_filter)
    userns_only = set(_run(sandbox.wrap(["sh", "-c", kernel_attack()], writable=())).splitlines())
    assert {"unshare refused", "setarch ran"} <= userns_only, userns_only
    neither = _run(sandbox.wrap(["sh", "-c", kernel_attack()], writable=(), disable_userns=False))
    assert {"unshare ran", "setarch ran"} <= set(neither.splitlines()), neither


FAKE_OLD_BWRAP = """#!/bin/sh
# bwrap 0.6.1 as far as the harness can tell: no --disable-userns
if [ "$1" = --help ]; then {real} --help | grep -v -e --disable-userns; exit 0; fi
if [ "$1" = --version ]; then echo "bubblewrap 0.6.1"; exit 0; fi
for arg in "$@"; do
  [ "$arg" = --disable-userns ] && {{ echo "bwrap: Unknown option --disable-userns" >&2; exit 1; }}
done
exec {real} "$@"
"""
FAKE_SETUID_BWRAP = """#!/bin/sh
# lists --disable-userns, then cannot use it (a setuid bwrap)
for arg in "$@"; do
  [ "$arg" = --disable-userns ] && {{ echo "bwrap: not in setuid bwrap" >&2; exit 1; }}
done
exec {real} "$@"
"""


@pytest.mark.parametrize(
    ("fake", "named"),
    [
        (FAKE_OLD_BWRAP, "nested user namespaces (bubblewrap 0.6.1 has no --disable-userns"),
        (FAKE_SETUID_BWRAP, "nested user namespaces (bwrap could not start with --disable-userns: "),
    ],
)
@needs_sandbox
def test_an_older_bwrap_and_a_missing_filter_are_named_not_a_crash(
    fake, named, fresh_probe, tmp_path, monkeypatch, capsys
):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "bwrap").write_text(fake.format(real=shutil.which("bwrap")))
    (bindir / "bwrap").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bindir}:{os.environ['PATH']}")
    monkeypatch.setattr(sandbox, "SECCOMP", tmp_path / "not-built" / "seccomp.bpf")
    monkeypatch.delenv(sandbox.ENV, raising=False)
    monkeypatch.setenv("CI", "true")  # not refused: the sandbox starts, without those fences
    box = sandbox.policy(required=True)
    assert box.enabled and box.note.startswith(sandbox.ON_NOTE + "; NOT refused here: "), box.note
    assert named in box.note and f"{tmp_path / 'not-built' / 'seccomp.bpf'} not built" in box.note
    assert sandbox.SECCOMP_FIX in box.note
    assert "cannot refuse" in capsys.readouterr().err
    args = sandbox.wrap(["true"], writable=())
    assert "--disable-userns" not in args and "--seccomp" not in " ".join(args)
    assert subprocess.run(args).returncode == 0


def test_an_exported_commits_files_are_dated_at_the_export_not_the_commit(tmp_path):
    """cargo rebuilds what is newer than its last build: a head's sources dated at their commit
    (git archive's mtime) are older than the target dir seeded from base's build, and its
    changed server read as fresh (base's binary served as the head's, 2026-12-03)."""
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    (repo / "lib.rs").write_text("pub fn order() {}\n")
    _git(repo, "add", ".")
    old = {
        **os.environ,
        "GIT_COMMITTER_DATE": "2001-01-01T00:00:00Z",
        "GIT_AUTHOR_DATE": "2001-01-01T00:00:00Z",
    }
    subprocess.run(
        [
            "git",
            "-C",
            str(repo),
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@example.com",
            "commit",
            "-qm",
            "old",
        ],
        check=True,
        env=old,
    )
    before = time.time() - 1
    export_commit(repo, _git(repo, "rev-parse", "HEAD"), tmp_path / "tree")
    assert (tmp_path / "tree" / "lib.rs").stat().st_mtime >= before


# Issue 61: a head whose /stats counts one order too many, built for real by cargo in the
# sandbox (offline, its home hidden: the build still succeeds) and compared with this commit.


@pytest.fixture
def lying_repo(tmp_path):
    """A clone of this checkout's HEAD and a head commit whose server lies in /stats."""
    repo = tmp_path / "repo"
    subprocess.run(["git", "clone", "-q", "--shared", str(ROOT), str(repo)], check=True)
    lying_stats(repo)
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qam", "head: /stats lies")
    return repo


# The lie is in /stats, not in speed: cargo's dev profile. The release profile's fat LTO link
# cost ~17 s a side, and its dependencies ~40 s more where this checkout's target/ab was still
# cold (a clean clone's make test: this test 64-78 s, no other test builds there with cargo).
DEV_BUILD = (
    "cargo build --locked --quiet -p hft-server && "
    'install -D -m 755 "$CARGO_TARGET_DIR/debug/hft-server" bin/hft-server'
)


@needs_binaries
@needs_sandbox
@pytest.mark.skipif(shutil.which("cargo") is None, reason="needs cargo (make deps)")
def test_a_head_whose_stats_lie_is_a_regression_naming_its_failed_rounds(lying_repo, tmp_path):
    """Every head round fails on the count its /stats gives (one more than the client sent),
    and the verdict is a regression that says so, never "no change"."""
    out = tmp_path / "ab"
    code = cli.main(
        ab_argv(
            lying_repo,
            out,
            orders=300,
            rounds=2,
            extra=("--no-profile", "--require-sandbox", "--quiet", "--build-cmd", DEV_BUILD),
        )
    )
    verdict = json.loads((out / "verdict.json").read_text())
    assert verdict["ab"]["sandbox"]["head"] == "bubblewrap"  # built by cargo offline, in the sandbox
    cells = {
        side: [
            c
            for p in sorted((out / side).glob("run_*/results.json"))
            for c in json.loads(p.read_text())["cells"]
        ]
        for side in ("base", "head")
    }
    # The control is base: the same tree without the edit, its every cell passing the same check.
    assert len(cells["base"]) == 2 and all(c["status"] == "ok" for c in cells["base"]), cells["base"]
    assert len(cells["head"]) == 2 and all(c["status"] == "failed" for c in cells["head"]), cells["head"]
    for cell in cells["head"]:
        told, sent = re.fullmatch(
            r"the server processed ([\d,]+) orders, the client says it sent ([\d,]+)", cell["reason"]
        ).groups()
        assert int(told.replace(",", "")) == int(sent.replace(",", "")) + 1, cell["reason"]
    assert code == 1 and verdict["status"] == "regression", verdict["status"]
    headline = (out / "summary.md").read_text().splitlines()[0]
    assert headline.startswith(
        "## ❌ Regression: latency-1c/hft orders failed: head broke 2 of 2 rounds: "
    ), headline
    assert "the client says it sent" in headline and headline.endswith("none on base"), headline
