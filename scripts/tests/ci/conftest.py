"""Fixtures of the CI tests: the worlds the workflows run in under nektos/act, and the runner
loop's. Each is a module fixture made once for the module whose tests read it, as before."""

from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from support.act_world import BOT, TOKEN, World
from support.hook_world import MAIN_BENCH, MERGE_SHA, Contents
from support.hook_world import github as hook_github
from support.runner_world import (
    APP_ID,
    CALIBRATION,
    CHECK,
    HANG_S,
    INSTALLATION_ID,
    INSTALLER,
    PLANT,
    REPO,
    VERSIONS,
    runner_tarball,
    stub_tools,
)
from support.runner_world import FakeGitHub as FakeRunnerGitHub

sys.path.insert(0, str(Path(__file__).parents[1] / "fakes"))
from github_api import FakeGitHub  # noqa: E402


@pytest.fixture(scope="module")
def act_world(real_binaries, tmp_path_factory):
    """The shared world of the act runs that measure (test_workflows_act.py): a dev clone, its
    origin, the stand-in REST API; one per module, since each act run builds on the last. The
    root conftest.py marks every test that takes it `act`."""
    # ACT_TEST_DIR keeps every run's act.log, clone and origin.git for a look afterwards.
    keep = os.environ.get("ACT_TEST_DIR")
    tmp = Path(keep) if keep else tmp_path_factory.mktemp("act")
    tmp.mkdir(parents=True, exist_ok=True)
    planted = {
        "id": 1,
        "issue_number": 7,
        "user": {"login": "mallory"},
        "body": "<!-- hft-bench-verdict -->\nplanted by someone else: edit me",
    }
    with FakeGitHub(tmp / "api", token=TOKEN, login=BOT, seed={"comments": [planted]}) as api:
        started, world = time.monotonic(), World(tmp, api)
        yield world
        # The job matrix (event x job -> result, outputs) and the time, for the record.
        matrix = {name: {"jobs": r["jobs"], "outputs": r["outputs"]} for name, r in world.runs.items()}
        matrix["seconds"] = round(time.monotonic() - started)
        Path(os.environ.get("ACT_MATRIX_OUT", tmp / "matrix.json")).write_text(json.dumps(matrix, indent=1))


@pytest.fixture(scope="module")
def bare_world(tmp_path_factory):
    """A world of its own for the act runs that start no server and time nothing (a fork's
    pull request: the hosted pool job alone; ci.yml's lint job). Not the shared `act_world`, so
    the root conftest.py leaves them out of the serial pass: they run in make test's parallel pass
    (marked slow: make check leaves them out)."""
    keep = os.environ.get("ACT_TEST_DIR")
    tmp = Path(keep) / "bare" if keep else tmp_path_factory.mktemp("act-bare")
    tmp.mkdir(parents=True, exist_ok=True)
    with FakeGitHub(tmp / "api", token=TOKEN, login=BOT) as api:
        yield World(tmp, api)


@pytest.fixture(scope="module")
def runner_loop_world():
    """The runner loop installed into a scratch root and run for two jobs as a dedicated user it
    creates (test_runner_loop.py): a minute of real back-offs, once per module. The root
    conftest.py marks every test that takes it `slow`."""
    user = f"hftjob{os.getpid() % 100000}"
    root = Path(tempfile.mkdtemp(prefix="hft-runner-root-", dir="/var/tmp"))
    root.chmod(0o755)  # the job user must reach the hook and its runner copy inside
    subprocess.run(
        [
            "useradd",
            "--system",
            "--no-create-home",
            "--home-dir",
            "/nonexistent",
            "--shell",
            "/usr/sbin/nologin",
            user,
        ],
        check=True,
    )
    uid = pwd.getpwnam(user).pw_uid
    try:
        outside = root / "outside"  # what is not the machine's: downloads, keys, stubs
        (outside / "bin").mkdir(parents=True)
        key, pub = outside / "app.pem", outside / "app.pub"
        subprocess.run(["openssl", "genrsa", "-out", str(key), "2048"], check=True, capture_output=True)
        subprocess.run(
            ["openssl", "rsa", "-in", str(key), "-pubout", "-out", str(pub)], check=True, capture_output=True
        )
        sums = {v: runner_tarball(outside / "dl", v) for v in VERSIONS}
        tools = stub_tools(outside / "bin", outside / "spool")
        github = FakeRunnerGitHub(pub, [PLANT.format(**tools), CHECK.format(**tools)])
        env = {
            **os.environ,
            "PATH": f"{outside / 'bin'}:{os.environ['PATH']}",
            "RUNNER_SHA256": sums[VERSIONS[0]],
            "RUNNER_APP_KEY_FILE": str(key),
        }
        install = subprocess.run(
            [
                str(INSTALLER),
                "--root",
                str(root),
                "--repo",
                REPO,
                "--url",
                f"https://github.com/{REPO}",
                "--api",
                github.url,
                "--download-base",
                f"file://{outside / 'dl'}",
                "--app-id",
                APP_ID,
                "--installation-id",
                INSTALLATION_ID,
                "--job-runner",
                "direct",
                "--user",
                user,
                "--name",
                "hft-bench-test",
                "--version",
                VERSIONS[0],
            ],
            env=env,
            capture_output=True,
            text=True,
            timeout=HANG_S,
        )
        assert install.returncode == 0, install.stdout + install.stderr
        # hftbench calibrate's record, installed for the jobs to read (as root, once tuned)
        (outside / "calibration.json").write_text(json.dumps(CALIBRATION))
        calibrated = subprocess.run(
            [str(INSTALLER), "--root", str(root), "--calibration", str(outside / "calibration.json")],
            env=env,
            capture_output=True,
            text=True,
            timeout=HANG_S,
        )
        assert calibrated.returncode == 0, calibrated.stdout + calibrated.stderr
        # Back-off in seconds, not minutes: 1 s, then 2 s at most.
        conf = root / "etc/hft-runner/loop.conf"
        conf.write_text(
            conf.read_text()
            .replace("retry_s=30\n", "retry_s=1\n")
            .replace("retry_max_s=900\n", "retry_max_s=2\n")
        )
        loop = subprocess.run(
            [
                str(root / "usr/local/sbin/hft-runner-loop"),
                "--config",
                str(root / "etc/hft-runner/loop.conf"),
                "--jobs",
                "2",
            ],
            env=env,
            capture_output=True,
            text=True,
            timeout=HANG_S,
        )
        yield {
            "root": root,
            "user": user,
            "uid": uid,
            "github": github,
            "loop": loop,
            "env": env,
            "sums": sums,
            "tools": tools,
            "outside": outside,
        }
    finally:
        subprocess.run(["pkill", "-KILL", "-U", str(uid)], capture_output=True)
        time.sleep(0.2)
        for d in ("/dev/shm", "/tmp", "/var/tmp"):
            subprocess.run(
                ["find", d, "-xdev", "-mindepth", "1", "-user", str(uid), "-delete"], capture_output=True
            )
        for kind in ("-m", "-s", "-q"):  # what a failed run may have left
            for row in subprocess.run(["ipcs", kind], capture_output=True, text=True).stdout.splitlines():
                f = row.split()
                if len(f) > 2 and f[2] in (user, str(uid)) and f[1].isdigit():
                    subprocess.run(["ipcrm", kind, f[1]], capture_output=True)
        if shutil.which("crontab"):
            subprocess.run(["crontab", "-r", "-u", user], capture_output=True)
        subprocess.run(["userdel", user], capture_output=True)
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def contents() -> Contents:
    """The job-started hook's stand-in GitHub (test_job_started_hook_*.py, through their
    pytestmark): before each test, main's bench.yml at main's tip and at the pull request's
    merge commit, and nothing asked yet."""
    gh = hook_github()
    gh.files = {"refs/heads/main": MAIN_BENCH, MERGE_SHA: MAIN_BENCH}
    gh.asked = []
    return gh
