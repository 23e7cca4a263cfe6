"""The runner loop for real, as root, in a scratch root: hft/runner/install-runner.sh installs
it (--root, with a stand-in GitHub API on 127.0.0.1 and a stand-in runner tarball, both from
support/runner_world.py), then the installed hft-runner-loop runs two jobs as a dedicated test user.
The stand-in runner (fixtures/fake-runner) makes the writes and starts the processes
actions/runner's source shows (hft/runner/README.md lists them); each fails its job on EACCES.
Its run.sh, run-helper.sh and listener end with the exit codes the real ones give (each cites
its lines of actions/runner; test_fake_runner.py checks the mapping). The first job plants a
cron entry, an at job, a SysV semaphore, files in /dev/shm, /tmp and /var/tmp and a background
process, and reads the runner's calibration record; the second finds none of the plants. Then
runners that end without a job (terminated, a session conflict, a deprecated version, a
registration gone) each lose their registration, and the loop backs off and registers anew.

systemd cannot run units on the test VM (`systemctl is-system-running` says offline), so the
loop runs with --job-runner direct: the job unit's ExecStart as the user, without the unit's
sandbox; the sandbox directives are checked by parsing the generated unit (and the loop's
scrub is what clears the first job's leftovers here)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from support.runner_world import CALIBRATION, HANG_S, INSTALLER, REPO, ROOT, VERSIONS

pytestmark = [
    pytest.mark.ci,
    pytest.mark.skipif(os.geteuid() != 0, reason="runs jobs as a dedicated user it creates: needs root"),
    pytest.mark.skipif(
        any(shutil.which(t) is None for t in ("jq", "openssl", "curl", "setpriv", "useradd", "ipcmk")),
        reason="needs jq, openssl, curl, setpriv (util-linux), useradd and ipcmk",
    ),
]


def test_two_jobs_each_registered_just_in_time_with_an_app_token(runner_loop_world):
    gh, loop = runner_loop_world["github"], runner_loop_world["loop"]
    assert loop.returncode == 0, loop.stderr
    assert not gh.errors, gh.errors
    assert len(gh.tokens) == 4 and len(gh.jit_requests) == 2, "two tokens and one JIT registration per job"
    # per job: the App's token for the registration, then the hook's read token (this
    # repository's contents, read, nothing else), revoked when the job ended
    read = {"repositories": [REPO.split("/")[1]], "permissions": {"contents": "read"}}
    assert gh.token_bodies == [None, read, None, read], gh.token_bodies
    assert gh.revoked == ["ghs_test2", "ghs_test4"], gh.revoked
    for req in gh.jit_requests:
        assert req["labels"] == ["self-hosted", "linux", "x64", "hft-tuned"] and req["runner_group_id"] == 1
        assert req["work_folder"] == "_work" and req["name"].startswith("hft-bench-test-")
    assert gh.jit_requests[0]["name"] != gh.jit_requests[1]["name"]
    assert "-----BEGIN" not in loop.stdout + loop.stderr and "ghs_test" not in loop.stdout + loop.stderr


def test_every_write_of_the_runner_is_allowed_and_the_hook_runs(runner_loop_world):
    results = runner_loop_world["github"].results
    assert [r["rc"] for r in results] == ["0", "0"], results
    jobs_dir = str(runner_loop_world["root"] / "var/lib/hft-runner/jobs")
    for r in results:
        out = r["output"]
        assert "Permission denied" not in out and "job-started hook: push of" in out, out
        assert r["root"].startswith(jobs_dir + "/") and r["root"].endswith("/runner")
    assert results[0]["root"] != results[1]["root"], "each job in a fresh copy"
    assert [r["disable_update"] for r in results] == ["true", "true"], "no self-update: unchecked code"
    assert "job 1 planted" in results[0]["output"]
    assert "read token gone" in results[0]["output"], "the hook deleted it before the job's step"


def test_the_second_job_finds_nothing_of_the_first(runner_loop_world):
    out = runner_loop_world["github"].results[1]["output"]
    assert "job 2 clean" in out and "LEFT" not in out, out


def test_nothing_of_the_user_is_left_after_the_loop(runner_loop_world):
    uid, user, tools = runner_loop_world["uid"], runner_loop_world["user"], runner_loop_world["tools"]
    assert subprocess.run(["pgrep", "-U", str(uid)], capture_output=True).returncode == 1
    assert user not in subprocess.run(["ipcs", "-s"], capture_output=True, text=True).stdout
    assert not [p for d in ("/dev/shm", "/tmp", "/var/tmp") for p in Path(d).glob(f"hft-planted-{uid}")]
    assert subprocess.run([tools["crontab"], "-l", "-u", user], capture_output=True, text=True).stdout == ""
    assert user not in subprocess.run([tools["atq"]], capture_output=True, text=True).stdout
    assert list((runner_loop_world["root"] / "var/lib/hft-runner/jobs").iterdir()) == [], (
        "per-job folders deleted"
    )


def test_the_pristine_runner_stays_root_owned_and_unwritten(runner_loop_world):
    pristine = runner_loop_world["root"] / "opt/hft-runner/pristine"
    assert os.readlink(pristine / "current") == VERSIONS[0]
    here = pristine / VERSIONS[0]
    for p in [here, *here.rglob("*")]:
        st = p.lstat()
        assert st.st_uid == 0 and not st.st_mode & 0o022, p
    for written in (".runner", ".credentials", ".env", "run-helper.sh", "_diag", "_work"):
        assert not (here / written).exists(), written
    assert not list((pristine / ".download").iterdir()), "no tarball left behind"


def test_the_jobs_env_names_the_root_owned_hook(runner_loop_world):
    env = (runner_loop_world["root"] / "etc/hft-runner/runner.env").read_text().splitlines()
    hook = runner_loop_world["root"] / "usr/local/sbin/hft-job-started-hook.sh"
    assert f"ACTIONS_RUNNER_HOOK_JOB_STARTED={hook}" in env
    st = hook.stat()
    assert st.st_uid == 0 and not st.st_mode & 0o022
    assert (runner_loop_world["root"] / "etc/hft-runner/app-key.pem").stat().st_mode & 0o777 == 0o600


def unit(runner_loop_world) -> dict[str, list[str]]:
    directives: dict[str, list[str]] = {}
    for line in (
        (runner_loop_world["root"] / "etc/systemd/system/hft-runner-job@.service").read_text().splitlines()
    ):
        if "=" in line and not line.startswith("#"):
            k, v = line.split("=", 1)
            directives.setdefault(k, []).append(v)
    return directives


def test_the_job_unit_is_sandboxed_and_may_write_only_its_job_folder(runner_loop_world):
    u, jobs = unit(runner_loop_world), f"{runner_loop_world['root']}/var/lib/hft-runner/jobs/%i"
    want = {
        "NoNewPrivileges": "yes",
        "ProtectSystem": "strict",
        "PrivateTmp": "yes",
        "RemoveIPC": "yes",
        "PrivateIPC": "yes",
        "ProtectHome": "tmpfs",
        "RestrictSUIDSGID": "yes",
        "KillMode": "control-group",
        "CapabilityBoundingSet": "",
        "User": runner_loop_world["user"],
        "Delegate": "cpuset memory pids",
    }
    for key, value in want.items():
        assert u.get(key) == [value], (key, u.get(key))
    # their mounts over /proc forbid the fresh /proc of bwrap, the sandbox of a PR's code
    assert "ProtectKernelTunables" not in u and "ProtectKernelLogs" not in u
    assert u["ReadWritePaths"] == [jobs], "exactly the job's folder (runner copy and home)"
    assert u["WorkingDirectory"] == [f"{jobs}/runner"] and u["Environment"] == [f"HOME={jobs}/home"]
    assert u["ExecStart"] == [f"{jobs}/runner/run.sh"], "the JIT configuration is never an argument"
    assert u["EnvironmentFile"] == [f"{runner_loop_world['root']}/run/hft-runner/%i.env"]


def test_an_update_is_checked_before_it_is_unpacked_then_switched(runner_loop_world):
    root, env, new = runner_loop_world["root"], runner_loop_world["env"], VERSIONS[1]
    pristine = root / "opt/hft-runner/pristine"
    base = [
        "--root",
        str(root),
        "--download-base",
        f"file://{runner_loop_world['outside'] / 'dl'}",
        "--update",
        new,
    ]
    bad = subprocess.run([str(INSTALLER), *base, "f" * 64], env=env, capture_output=True, text=True)
    assert bad.returncode == 2 and "does not match sha256" in bad.stderr, bad.stderr
    assert os.readlink(pristine / "current") == VERSIONS[0] and not list(pristine.glob(f"{new}*"))
    good = subprocess.run(
        [str(INSTALLER), *base, runner_loop_world["sums"][new]], env=env, capture_output=True, text=True
    )
    assert good.returncode == 0, good.stderr
    assert os.readlink(pristine / "current") == new and (pristine / new / "run.sh").stat().st_uid == 0


def test_a_runner_that_fails_is_logged_and_its_registration_removed(runner_loop_world):
    """Here the stand-in GitHub has no job left: the registration is gone, and the stand-in
    listener, like the real one, says so and exits 0, as do run-helper.sh and run.sh. No job ran
    (no Worker log): the loop counts a failure, removes the JIT runner and would back off. What
    a loop stopped mid-job left is removed when the loop starts."""
    gh, root = runner_loop_world["github"], runner_loop_world["root"]
    (root / "var/lib/hft-runner/jobs/stale-job/runner").mkdir(parents=True)  # a loop stopped mid-job
    loop = subprocess.run(
        [
            str(root / "usr/local/sbin/hft-runner-loop"),
            "--config",
            str(root / "etc/hft-runner/loop.conf"),
            "--jobs",
            "1",
        ],
        env=runner_loop_world["env"],
        capture_output=True,
        text=True,
        timeout=HANG_S,
    )
    assert loop.returncode == 1 and "run.sh exited 0" in loop.stderr, loop.stderr
    assert "The runner no longer exists on the server" in loop.stderr
    assert "the runner exited without running a job" in loop.stderr
    assert gh.deleted == [f"/repos/{REPO}/actions/runners/3"], gh.deleted
    assert "removed the registration of runner 3" in loop.stderr
    assert list((root / "var/lib/hft-runner/jobs").iterdir()) == []
    assert subprocess.run(["pgrep", "-U", str(runner_loop_world["uid"])], capture_output=True).returncode == 1


def test_the_calibration_record_is_root_owned_and_read_by_the_job_user(runner_loop_world):
    """Not in the root-only /etc/hft-runner (a job there stops with a usage error): in
    /etc/hft-bench, root's to write and everyone's to read, named in the jobs' .env. The first
    job, as the runner user, read it."""
    root = runner_loop_world["root"]
    record = root / "etc/hft-bench/calibration.json"
    assert json.loads(record.read_text()) == CALIBRATION
    env = (root / "etc/hft-runner/runner.env").read_text().splitlines()
    assert f"HFTBENCH_CALIBRATION={record}" in env
    st = record.stat()
    assert st.st_uid == 0 and st.st_gid == 0 and st.st_mode & 0o777 == 0o644, oct(st.st_mode)
    for folder in (record.parent, record.parent.parent):  # /etc/hft-bench, /etc
        st = folder.stat()
        assert st.st_uid == 0 and st.st_mode & 0o755 == 0o755 and not st.st_mode & 0o022, (
            folder,
            oct(st.st_mode),
        )
    assert (root / "etc/hft-runner").stat().st_mode & 0o777 == 0o700, "the secrets stay root's alone"
    assert not (root / "etc/hft-runner/calibration.json").exists()
    out = runner_loop_world["github"].results[0]["output"]
    assert f"calibration: {record} guards 1" in out, out


def test_a_terminated_runner_and_a_deprecated_version_back_off_and_register_anew(runner_loop_world):
    """Four tries: a runner too old for GitHub (listener 7; run.sh passes 7 on because the loop
    sets ACTIONS_RUNNER_RETURN_VERSION_DEPRECATED_EXIT_CODE=1 where it starts run.sh), a
    terminated one and a session conflict (listener 1 and 5; run.sh says 0, and no job ran),
    then a job. Each failure loses its registration; the loop waits 1 s, 2 s, 2 s (doubling,
    capped at retry_max_s) and registers anew; the job then runs in a fresh registration."""
    gh, root = runner_loop_world["github"], runner_loop_world["root"]
    gh.jobs = ["!RunnerVersionTooOld", "!SessionFailure", "!SessionConflict", 'echo "job after the back-off"']
    before_jit, before_deleted, before_results = len(gh.jit_requests), len(gh.deleted), len(gh.results)
    started = time.monotonic()
    loop = subprocess.run(
        [
            str(root / "usr/local/sbin/hft-runner-loop"),
            "--config",
            str(root / "etc/hft-runner/loop.conf"),
            "--jobs",
            "4",
        ],
        env=runner_loop_world["env"],
        capture_output=True,
        text=True,
        timeout=HANG_S,
    )
    took = time.monotonic() - started
    err = loop.stderr
    assert loop.returncode == 1, err  # three failed tries of four
    requests = gh.jit_requests[before_jit:]
    assert len(requests) == 4 and len({r["name"] for r in requests}) == 4, "a new registration per try"
    ids = range(before_jit + 1, before_jit + 4)
    assert gh.deleted[before_deleted:] == [f"/repos/{REPO}/actions/runners/{i}" for i in ids], gh.deleted
    exits = [line.rsplit(" ", 1)[1] for line in err.splitlines() if ": run.sh exited " in line]
    assert exits == ["7", "0", "0", "0"], err
    assert re.search(r"runner 2\.\d+\.\d+ is deprecated: GitHub sends it no job", err)
    assert "install-runner.sh --update VERSION SHA256" in err
    said = loop.stdout + err  # run-helper.sh and run.sh print on stdout (the unit's journal)
    assert "Runner listener exit with deprecated version exit code: 7" in said
    assert "Runner listener exit with terminated error" in said
    assert "Runner listener exit with Session Conflict error" in said
    assert err.count("the runner exited without running a job") == 2, err
    waits = [line for line in err.splitlines() if "backing off" in line]
    assert [w.split("backing off ")[1].split(" s ")[0] for w in waits] == ["1", "2", "2"], waits
    assert took >= 5, "the loop slept through its back-off"
    results = gh.results[before_results:]
    assert [r["rc"] for r in results] == ["0"] and "job after the back-off" in results[0]["output"]
    assert list((root / "var/lib/hft-runner/jobs").iterdir()) == []


@pytest.mark.slow  # a world of its own, with the same real back-offs
def test_a_loop_refuses_a_user_unit_or_folder_another_runner_of_the_host_names(tmp_path):
    """Between jobs a loop kills every process of its user, and at its start it stops its job
    units and empties its job and run folders: a second runner of the host (install-runner.sh
    --instance N, loop-N.conf beside the first) that shares any of them is refused before the
    loop touches anything. Users that do not exist here: past the check, the loop stops there."""
    loop = ROOT / "hft" / "runner" / "runner-loop.sh"

    def conf(n: int, **same: str) -> dict[str, str]:
        own = {
            "user": f"hft-test-nouser-{n}",
            "unit": f"hft-runner-{n}-job",
            "jobs_dir": str(tmp_path / f"runner-{n}" / "jobs"),
            "run_dir": str(tmp_path / f"run-{n}"),
        }
        return {
            "repo": REPO,
            "api": "http://127.0.0.1:9",
            "scope": f"repos/{REPO}",
            "app_id": "1",
            "installation_id": "2",
            "app_key": str(tmp_path / "key.pem"),
            "runner_group_id": "1",
            "labels": "self-hosted",
            "name": "t",
            "pristine_dir": str(tmp_path / "pristine"),
            "skel": str(tmp_path / "skel"),
            "runner_env": str(tmp_path / f"runner-{n}.env"),
            "job_runner": "direct",
            "retry_s": "1",
            "retry_max_s": "2",
            **own,
            **same,
        }

    def write(name: str, c: dict[str, str]) -> Path:
        path = tmp_path / name
        path.write_text("".join(f"{k}={v}\n" for k, v in c.items()))
        return path

    first = conf(1)
    for key in ("user", "unit", "jobs_dir", "run_dir"):
        write("loop-2.conf", conf(2, **{key: first[key]}))
        r = subprocess.run(
            [str(loop), "--config", str(write("loop-1.conf", first)), "--jobs", "1"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert r.returncode == 2, r.stderr
        assert f"both name {key}={first[key]}" in r.stderr and "install-runner.sh --instance N" in r.stderr
        assert not Path(first["jobs_dir"]).exists()
    write("loop-2.conf", conf(2))
    r = subprocess.run(
        [str(loop), "--config", str(tmp_path / "loop-1.conf"), "--jobs", "1"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 2 and "user hft-test-nouser-1 does not exist" in r.stderr, r.stderr
