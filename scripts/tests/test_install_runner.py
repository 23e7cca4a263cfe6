"""hft/runner/install-runner.sh --dry-run shows every part of the runner's hardening, and
never a token."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.ci

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "hft" / "runner" / "install-runner.sh"


def dry_run(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "RUNNER_ADMIN_TOKEN": "secret-admin-token", "RUNNER_SHA256": "0" * 64}
    return subprocess.run([str(SCRIPT), "--dry-run", *args], env=env, capture_output=True, text=True)


@pytest.fixture(scope="module")
def log() -> str:
    r = dry_run("--url", "https://github.com/acme", "--runner-group", "hft-bench",
                "--isolate", "2-3", "--server-cpus", "2-3", "--client-cpus", "4-7")  # fmt: skip
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_every_step_is_shown(log):
    assert re.findall(r"^install-runner.sh: step: (\d)/6", log, re.M) == list("123456")


def test_ephemeral_registration_without_updates_and_the_token_only_in_the_environment(log):
    assert "--ephemeral --disableupdate" in log and "--runnergroup hft-bench" in log
    assert 'ACTIONS_RUNNER_INPUT_TOKEN=$reg runuser -u "$user" -- ./config.sh' in log
    assert "--token" not in log, "a token as a process argument shows in ps"
    assert "-H @/etc/hft-runner/admin-token" in log and "secret-admin-token" not in log


def test_between_jobs_every_process_ends_and_home_work_tmp_are_wiped(log):
    loop = log.split("write /usr/local/sbin/hft-runner-loop")[1].split("write /etc/systemd")[0]
    for part in ('pkill -KILL -u "$user"', 'find "$home" "$dir/_work" "$dir/_diag" -mindepth 1 -delete',
                 'find /tmp /var/tmp /dev/shm -xdev -user "$user" -delete', "cp -a /etc/hft-runner/skel/.",
                 "-p KillMode=control-group"):  # fmt: skip
        assert part in loop, part
    assert loop.index("clean\n") < loop.index("config.sh"), "cleaned before every registration"


def test_runner_folder_root_owned_and_toolchains_from_root_paths(log):
    assert "chown -R root:root /opt/actions-runner" in log and "chmod -R go-w /opt/actions-runner" in log
    assert (
        "install -d -o ghrunner -g ghrunner -m 0700 /opt/actions-runner/_work /opt/actions-runner/_diag"
        in log
    )
    path = re.search(r"set PATH=(\S+) in", log)[1].split(":")
    assert path[:2] == ["/opt/rust/cargo/bin", "/usr/local/go/bin"] and not [
        p for p in path if "home" in p or "~" in p
    ]
    assert "set HFT_CI=true" in log


def test_tunings_and_placement(log):
    assert "isolcpus=2-3 nohz_full=2-3 rcu_nocbs=2-3" in log and "hft-setup-system --apply" in log
    assert "HFTBENCH_SERVER_CPUS=2-3 in" in log and "HFTBENCH_CLIENT_CPUS=4-7 in" in log


def test_a_failed_tuning_unit_does_not_keep_the_runner_offline(log):
    """Requires= would stop the runner silently when the tunings fail: it Wants= them, after
    them, and its loop logs the failure at every job (check-runner then fails the job)."""
    unit = log.split("write /etc/systemd/system/hft-runner.service")[1].split("install-runner.sh: step")[0]
    lines = [line.strip() for line in unit.splitlines()]
    assert "Requires=hft-tuning.service" not in unit and not [x for x in lines if x.startswith("Requires=")]
    assert "Wants=network-online.target hft-tuning.service" in lines
    assert "After=network-online.target hft-tuning.service" in lines
    loop = log.split("write /usr/local/sbin/hft-runner-loop")[1].split("write /etc/systemd")[0]
    assert "if systemctl is-failed --quiet hft-tuning.service; then" in loop and "ERROR: hft-tuning" in loop


def test_a_runner_group_needs_an_organization_url():
    r = dry_run("--url", "https://github.com/acme/hft-bench", "--runner-group", "g")
    assert r.returncode == 2 and "--runner-group needs an organization --url" in r.stderr


def test_the_runner_is_not_named_after_the_host(log):
    """Every public job log shows the runner's name: by default a random one, not the host's."""
    import socket

    name = re.search(r"--name (\S+)", log)[1]
    assert re.fullmatch(r"hft-bench-[0-9a-f]{8}", name) and socket.gethostname().split(".")[0] not in name


def test_the_job_started_hook_is_installed_root_owned_and_named_in_the_runners_env(log):
    hook = "/usr/local/sbin/hft-job-started-hook.sh"
    assert f"install -o root -g root -m 0755 {SCRIPT.parent}/job-started-hook.sh {hook}" in log
    assert f"set ACTIONS_RUNNER_HOOK_JOB_STARTED={hook} in /opt/actions-runner/.env" in log
    assert log.index("chown -R root:root /opt/actions-runner") < log.index("set ACTIONS_RUNNER_HOOK")
