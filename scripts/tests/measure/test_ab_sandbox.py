"""A pull request whose code attacks the harness (issue 36): `hftbench ab` on a tiny repository
whose head commit's build script (`--build-cmd "sh build.sh"`, as build.rs would run) and
server (server.sh, the real bin/hft-server slowed by 300 µs an order) try to write the base
checkout (this checkout's scripts/, .venv and bin/, the compared repository), base's built
server (replaced by a slowed one: that would hide the regression), a client binary, $OUT,
$RUNNER_TEMP and the artifact folder, print the job's tokens into the logs, and leave
processes behind (setsid inside a subshell: a double fork). With the sandbox
(measure/sandbox.py) none of it lands and the slowdown is still a regression.

`HFT_SANDBOX=off .venv/bin/pytest scripts/tests/measure/test_ab_sandbox.py` shows the test failing
without it (what the sandbox is for); the committed test runs with it on."""

from __future__ import annotations

import json
import subprocess
import time
import uuid
from pathlib import Path

import pytest
from hftbench import cli
from hftbench.errors import UsageError
from hftbench.measure import sandbox
from hftbench.measure.server import Server, real_binary
from hftbench.measure.server import sha256 as server_sha256
from hftbench.publish import method_text
from hftbench.verdict import Verdict
from support.hostile_head import (
    BUILD,
    CLIENT,
    GITLINK,
    MINE,
    SERVER,
    add_gitlink,
    attacks,
    clean_up,
    fsmonitor_attack,
    git,
    left_behind,
    needs_binaries,
    needs_sandbox,
    new_repo,
    sha,
    tuning_attack,
    wait_for_none_left,
)


@pytest.fixture
def world(tmp_path, monkeypatch):
    """The job's folders, a repository whose head attacks them, and the cleanup of whatever an
    unsandboxed run let through (files created in this checkout, processes left)."""
    tag = uuid.uuid4().hex[:12]
    job = tmp_path / "job"
    out, runner_temp, artifact, clients = job / "out", job / "runner_temp", job / "artifact", job / "clients"
    for d in (out, runner_temp, artifact, clients):
        d.mkdir(parents=True)
    (artifact / "verdict.json").write_text("{}\n")
    (clients / "client-hft").write_bytes(CLIENT.read_bytes())
    (clients / "client-hft").chmod(0o755)
    repo = tmp_path / "repo"
    repo.mkdir()
    mine = MINE
    w = {
        "dirs": [*mine, repo, out, out / "ab", runner_temp, artifact],
        "base_servers": [out / "ab" / "base" / side / "hft-server" for side in ("bin", "sandboxed")],
        "head_tree": out / "ab" / "head" / "worktree",
        "client": clients / "client-hft",
        "artifact": artifact,
    }
    monkeypatch.setenv("RUNNER_TEMP", str(runner_temp))
    monkeypatch.setenv("OUT", str(out))
    monkeypatch.setenv("GITHUB_TOKEN", f"ghs_{tag}")
    monkeypatch.setenv("ACTIONS_RUNTIME_TOKEN", f"rt_{tag}")

    def git(*args):
        subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)

    git("init", "-q")
    git("config", "user.email", "t@example.com")
    git("config", "user.name", "t")
    install = "mkdir -p bin && install -m 755 server.sh bin/hft-server\n"
    (repo / "build.sh").write_text(install)
    (repo / "server.sh").write_text(f'#!/bin/sh\nexec {SERVER} "$@"\n')
    git("add", ".")
    git("commit", "-qm", "base")
    (repo / "build.sh").write_text(attacks(tag, "build", w) + install)
    (repo / "server.sh").write_text(
        "#!/bin/sh\n" + attacks(tag, "server", w) + f'exec {SERVER} --inject-delay-us 300 "$@"\n'
    )
    git("commit", "-qam", "head: slower, and hostile")
    w.update(tag=tag, tmp=tmp_path, repo=repo, out=out, clients=clients, mine=mine)
    yield w
    clean_up(tag, mine)


@needs_binaries
@needs_sandbox
def test_the_heads_code_changes_nothing_of_the_harness_and_the_verdict_stands(world):
    client_before = sha(world["client"])
    code = cli.main(
        [
            "ab",
            "--repo",
            str(world["repo"]),
            "--base",
            "HEAD~1",
            "--head",
            "HEAD",
            "--scenarios",
            "latency-1c",
            "--clients",
            "hft",
            "--clients-bin",
            str(world["clients"]),
            "--orders",
            "2000",
            "--repeats",
            "8",
            "--max-repeats",
            "8",
            "--no-profile",
            "--out",
            str(world["out"] / "ab"),
            "--build-cmd",
            BUILD,
            "--quiet",
        ]
    )
    wait_for_none_left(world["tag"])
    problems = []
    planted = sorted(str(p) for d in world["dirs"] for p in d.glob(f"_pwned_{world['tag']}_*"))
    planted += [str(p) for p in world["tmp"].rglob("_pwned_env")]
    if planted:
        problems.append(f"files written by the head's code: {planted}")
    for path in world["base_servers"]:
        if path.exists() and "inject-delay" in path.read_text():
            problems.append(f"base's built server was replaced: {path.read_text()!r}")
    if sha(world["client"]) != client_before:
        problems.append("the client binary was changed")
    if (world["artifact"] / "verdict.json").read_text() != "{}\n":
        problems.append("the artifact folder's verdict.json was overwritten")
    secrets = [f"ghs_{world['tag']}".encode(), f"rt_{world['tag']}".encode()]
    leaked = [
        str(p)
        for p in world["tmp"].rglob("*")
        if p.is_file() and not p.is_symlink() and any(s in p.read_bytes() for s in secrets)
    ]
    if leaked:
        problems.append(f"the job's tokens were written into {leaked}")
    if left_behind(world["tag"]):
        problems.append(f"processes left behind: {left_behind(world['tag'])}")
    head_sha = subprocess.run(
        ["git", "-C", str(world["repo"]), "rev-parse", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    commits = {
        json.loads(p.read_text())["git"]["commit"]
        for p in (world["out"] / "ab" / "head").glob("run_*/results.json")
    }
    if commits != {head_sha}:
        problems.append(
            f"the head's runs name commits {commits}, not {head_sha}: its worktree's .git was changed"
        )
    verdict = json.loads((world["out"] / "ab" / "verdict.json").read_text())
    if code != 1 or verdict["status"] != "regression":
        problems.append(f"the slowed head was not a regression (exit {code}, status {verdict['status']})")
    assert not problems, "; ".join(problems)
    assert verdict["ab"]["sandbox"]["head"] == "bubblewrap"
    assert (
        "Isolation: the head was built and served in a bubblewrap sandbox"
        in (world["out"] / "ab" / "summary.md").read_text()
    )


def test_where_no_sandbox_starts_ci_is_refused_with_the_fix_and_a_local_run_says_so(monkeypatch, capsys):
    monkeypatch.setattr(sandbox, "probe", lambda: "bwrap (bubblewrap) is not installed")
    monkeypatch.delenv(sandbox.ENV, raising=False)
    monkeypatch.setenv("CI", "true")
    with pytest.raises(UsageError, match=r"CI=true.*not installed.*install bubblewrap.*provision-host"):
        sandbox.policy()
    monkeypatch.delenv("CI")
    with pytest.raises(UsageError, match="--require-sandbox"):
        sandbox.policy(required=True)
    monkeypatch.setenv(sandbox.ENV, "on")
    with pytest.raises(UsageError, match=f"{sandbox.ENV}=on"):
        sandbox.policy()
    monkeypatch.setenv(sandbox.ENV, "auto")
    local = sandbox.policy()
    assert not local.enabled and local.to_json() == {
        "head": "none",
        "note": "unsandboxed: bwrap (bubblewrap) is not installed",
    }
    assert "UNSANDBOXED" in capsys.readouterr().err
    monkeypatch.setenv(sandbox.ENV, "off")
    assert sandbox.policy().note == f"unsandboxed: {sandbox.ENV}=off"
    with pytest.raises(UsageError, match="contradict"):
        sandbox.policy(required=True)
    doc = {"ab": {"sandbox": local.to_json()}}
    assert "The head ran unsandboxed" in method_text.method(Verdict.from_json(doc))


def test_a_build_sees_no_token_and_the_same_environment_on_both_sides(monkeypatch, tmp_path):
    monkeypatch.setenv("GITHUB_TOKEN", "ghs_x")
    monkeypatch.setenv("ACTIONS_RUNTIME_TOKEN", "rt_x")
    monkeypatch.setenv("RUSTFLAGS", "-C target-cpu=native")
    env = sandbox.build_env(tmp_path / "home", tmp_path / "target")
    assert not any("TOKEN" in k or k.startswith("ACTIONS_") or k.startswith("GITHUB_") for k in env)
    assert env["RUSTFLAGS"] == "-C target-cpu=native" and env["CARGO_TARGET_DIR"] == str(tmp_path / "target")
    assert env["HOME"] == str(tmp_path / "home") and env["CARGO_HOME"] and env["RUSTUP_HOME"]


@needs_sandbox
def test_in_the_sandbox_nothing_outside_its_scratch_is_writable_and_nothing_outlives_it(tmp_path):
    outside, scratch = tmp_path / "outside", tmp_path / "scratch"
    outside.mkdir()
    scratch.mkdir()
    tag = uuid.uuid4().hex[:12]
    script = (
        f"echo x > {outside}/f; echo x > {scratch}/f; echo x > /tmp/_pwned_{tag}; "
        f"( setsid env HFT_PWN={tag} sleep 1000 </dev/null >/dev/null 2>&1 & ); "
        "echo started"
    )
    proc = subprocess.run(
        sandbox.wrap(["sh", "-c", script], writable=(scratch,)), capture_output=True, text=True
    )
    assert proc.returncode == 0 and "started" in proc.stdout, proc.stderr
    assert (
        (scratch / "f").is_file() and not (outside / "f").exists() and not Path(f"/tmp/_pwned_{tag}").exists()
    )
    assert "Read-only file system" in proc.stderr
    assert not wait_for_none_left(tag)


@needs_binaries
@needs_sandbox
def test_a_sandboxed_server_answers_on_loopback_and_is_measured_and_stopped_as_itself(tmp_path, monkeypatch):
    """The head's bin/hft-server is a launcher (sandbox.server_launcher): the client, outside,
    reaches it on loopback; its CPU and a soak's samples are the server's own; stop ends it all."""
    monkeypatch.setenv("GITHUB_TOKEN", "ghs_launcher")
    launcher = tmp_path / "bin" / "hft-server"
    sandbox.server_launcher(SERVER, launcher)
    with Server(launcher, tmp_path / "server.log") as server:
        assert server.stats()["total_orders"] == 0  # over loopback, from outside the sandbox
        pid = server.serving_pid()
        assert pid is not None and pid != server.proc.pid
        assert Path(f"/proc/{pid}/comm").read_text().strip() == "hft-server"
        assert b"ghs_launcher" not in Path(f"/proc/{pid}/environ").read_bytes()
        assert server.cpu_seconds() is not None
    time.sleep(0.2)
    assert not Path(f"/proc/{pid}").exists() or "Z" in Path(f"/proc/{pid}/stat").read_text().split()[2]


# Issue 61: after the head's build, the harness runs nothing in the head's folder (no git, no
# tuning script). Each attack's marker lies outside the sandbox: only the harness can write it.


@pytest.fixture
def fenced_world(tmp_path):
    """A repository whose head commit's build plants a submodule with core.fsmonitor (the
    gitlink `GITLINK`) and a folder it makes read-only, and whose own tuning script is hostile;
    its server is base's."""
    repo = tmp_path / "repo"
    new_repo(repo)
    markers = {"fsmonitor": tmp_path / "fsmonitor-marker", "tuning": tmp_path / "tuning-marker"}
    install = "mkdir -p bin && install -m 755 server.sh bin/hft-server\n"
    (repo / "build.sh").write_text(install)
    (repo / "server.sh").write_text(f'#!/bin/sh\nexec {SERVER} "$@"\n')
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "base")
    locked = "mkdir -p locked/in && touch locked/in/f && chmod 555 locked/in locked\n"
    (repo / "build.sh").write_text(fsmonitor_attack(markers["fsmonitor"]) + locked + install)
    script = repo / "hft" / "scripts" / "setup_hft_system.sh"
    script.parent.mkdir(parents=True)
    script.write_text(tuning_attack(markers["tuning"]))
    script.chmod(0o755)
    git(repo, "add", ".")
    add_gitlink(repo)
    git(repo, "commit", "-qm", "head: a submodule's fsmonitor and a tuning script")
    return {"repo": repo, "markers": markers, "out": tmp_path / "ab", "head": git(repo, "rev-parse", "HEAD")}


@needs_binaries
@needs_sandbox
@pytest.mark.parametrize("design", ["duet", "paired-rounds"])
def test_the_harness_runs_nothing_in_the_heads_tree_after_its_build(fenced_world, design):
    w = fenced_world
    code = cli.main(
        [
            "ab",
            "--repo",
            str(w["repo"]),
            "--base",
            "HEAD~1",
            "--head",
            "HEAD",
            "--design",
            design,
            "--scenarios",
            "latency-1c",
            "--clients",
            "hft",
            "--orders",
            "300",
            "--repeats",
            "2",
            "--max-repeats",
            "2",
            "--no-profile",
            "--out",
            str(w["out"]),
            "--build-cmd",
            BUILD,
            "--quiet",
        ]
    )
    assert code in (0, 1) and (w["out"] / "verdict.json").is_file()
    assert "fsmonitor planted" in (w["out"] / "head" / "build.log").read_text()  # the attack was in place
    ran = {name: marker for name, marker in w["markers"].items() if marker.exists()}
    assert not ran, f"the harness ran the head's code outside the sandbox: {sorted(ran)}"
    heads = [json.loads(p.read_text()) for p in (w["out"] / "head").glob("run_*/results.json")]
    assert len(heads) == 2 and all(r["complete"] for r in heads)
    assert {(r["git"]["commit"], r["git"]["message"], r["git"]["dirty"]) for r in heads} == {
        (w["head"], "head: a submodule's fsmonitor and a tuning script", False)
    }
    # Its tree removed, the read-only folder its build made included.
    assert not (w["out"] / "head" / "worktree").exists() and not (w["out"] / "base" / "worktree").exists()
    assert GITLINK not in git(w["repo"], "worktree", "list")


# A head's server that is base's binary under another name is named in the verdict.


def test_a_launcher_is_hashed_as_the_binary_it_runs(tmp_path):
    real = tmp_path / "sandboxed" / "hft-server"
    real.parent.mkdir()
    real.write_bytes(b"\x7fELF the server")
    launcher = tmp_path / "bin" / "hft-server"
    sandbox.server_launcher(real, launcher)
    assert real_binary(launcher) == real.resolve() and real_binary(real) == real
    assert server_sha256(real_binary(launcher)) == server_sha256(real) != server_sha256(launcher)


@needs_binaries
@needs_sandbox
def test_a_head_that_changes_server_yet_serves_bases_binary_is_named(tmp_path):
    repo = tmp_path / "repo"
    new_repo(repo)
    (repo / "build.sh").write_text("mkdir -p bin && install -m 755 server.sh bin/hft-server\n")
    (repo / "server.sh").write_text(f'#!/bin/sh\nexec {SERVER} "$@"\n')
    (repo / "server" / "src").mkdir(parents=True)
    (repo / "server" / "src" / "lib.rs").write_text("pub fn order() {}\n")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "base")
    # the head rewrites the server's source, yet its build installs the very same binary
    (repo / "server" / "src" / "lib.rs").write_text("pub fn order() { /* faster, it says */ }\n")
    git(repo, "commit", "-qam", "head: a new order path")
    clients = tmp_path / "clients"
    clients.mkdir()
    (clients / "client-hft").symlink_to(CLIENT)
    out = tmp_path / "ab"
    cli.main(
        [
            "ab",
            "--repo",
            str(repo),
            "--base",
            "HEAD~1",
            "--head",
            "HEAD",
            "--scenarios",
            "latency-1c",
            "--clients",
            "hft",
            "--clients-bin",
            str(clients),
            "--orders",
            "2000",
            "--repeats",
            "8",
            "--max-repeats",
            "8",
            "--no-profile",
            "--out",
            str(out),
            "--build-cmd",
            BUILD,
            "--quiet",
        ]
    )
    note = json.loads((out / "verdict.json").read_text())["ab"]["sandbox"]["note"]
    assert note.startswith("head serves base's binary: its hft-server is byte-identical to base's")
    assert "changes server/ (1 files)" in note
    assert "head serves base's binary" in (out / "summary.md").read_text()
