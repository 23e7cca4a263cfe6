"""hft/runner/install-runner.sh --dry-run shows every part of the runner's hardening, and
never a key. The loop itself runs for real in test_runner_loop.py."""

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
    env = {**os.environ, "RUNNER_SHA256": "0" * 64, "RUNNER_APP_KEY_FILE": "/secret/app.pem"}
    return subprocess.run([str(SCRIPT), "--dry-run", *args], env=env, capture_output=True, text=True)


APP = ("--app-id", "12", "--installation-id", "34")


@pytest.fixture(scope="module")
def log() -> str:
    r = dry_run("--url", "https://github.com/acme", "--runner-group-id", "3", *APP,
                "--isolate", "2-3", "--server-cpus", "2-3", "--client-cpus", "4-7")  # fmt: skip
    assert r.returncode == 0, r.stderr
    return r.stdout


def section(log: str, start: str, end: str) -> str:
    return log.split(start)[1].split(end)[0]


def test_every_step_is_shown(log):
    assert re.findall(r"^install-runner.sh: step: (\d)/6", log, re.M) == list("123456")


def test_the_loop_registers_each_job_just_in_time_with_a_github_app(log):
    conf = section(log, "write /etc/hft-runner/loop.conf (mode 0600)", "+ write")
    lines = ("scope=orgs/acme", "app_id=12", "installation_id=34", "app_key=/etc/hft-runner/app-key.pem",
             "runner_group_id=3", "labels=self-hosted,linux,x64,hft-tuned", "job_runner=systemd")  # fmt: skip
    for line in lines:
        assert f"      {line}\n" in conf, line
    assert 'install -o root -g root -m 0600 "$RUNNER_APP_KEY_FILE" /etc/hft-runner/app-key.pem' in log
    assert "/secret/app.pem" not in log and "--token" not in log and "config.sh" not in log
    assert (
        f"install -D -o root -g root -m 0755 {SCRIPT.parent}/runner-loop.sh /usr/local/sbin/hft-runner-loop"
        in log
    )


def test_the_tarball_is_checked_before_it_is_unpacked_into_a_root_owned_pristine(log):
    pristine = "/opt/hft-runner/pristine"
    check = log.index("| sha256sum -c -")
    assert check < log.index(f"tar -xzf {pristine}/.download/actions-runner-linux-x64-2.329.0.tar.gz")
    assert (
        f"chown -R root:root {pristine}/2.329.0.new" in log and f"chmod -R go-w {pristine}/2.329.0.new" in log
    )
    assert f"mv -T {pristine}/current.new {pristine}/current" in log, "switched by one rename"


def test_an_update_only_replaces_the_pristine_runner():
    r = dry_run("--update", "2.330.0", "a" * 64)
    assert r.returncode == 0, r.stderr
    assert "curl -fsSL" in r.stdout and "actions-runner-linux-x64-2.330.0.tar.gz" in r.stdout
    assert "step: 1/6" not in r.stdout and "systemctl" not in r.stdout
    bad = dry_run("--update", "2.330.0", "not-a-sum")
    assert bad.returncode == 2 and "64 hex digits" in bad.stderr


def test_the_job_unit_is_sandboxed(log):
    unit = section(log, "write /etc/systemd/system/hft-runner-job@.service", "+ install")
    lines = [line.strip() for line in unit.splitlines()]
    want = ("User=ghrunner", "NoNewPrivileges=yes", "ProtectSystem=strict", "PrivateTmp=yes", "RemoveIPC=yes",
            "ReadWritePaths=/var/lib/hft-runner/jobs/%i", "ProtectHome=tmpfs", "KillMode=control-group",
            "ExecStart=/var/lib/hft-runner/jobs/%i/runner/run.sh")  # fmt: skip
    for d in want:
        assert d in lines, d
    assert [x for x in lines if x.startswith("ReadWritePaths=")] == [
        "ReadWritePaths=/var/lib/hft-runner/jobs/%i"
    ]


def test_toolchains_from_root_paths(log):
    path = re.search(r"set PATH=(\S+) in", log)[1].split(":")
    assert path[:2] == ["/opt/rust/cargo/bin", "/usr/local/go/bin"] and not [
        p for p in path if "home" in p or "~" in p
    ]
    assert "set HFT_CI=true in /etc/hft-runner/runner.env" in log


def test_tunings_and_placement(log):
    assert "isolcpus=2-3 nohz_full=2-3 rcu_nocbs=2-3" in log and "hft-setup-system --apply" in log
    assert "HFTBENCH_SERVER_CPUS=2-3 in" in log and "HFTBENCH_CLIENT_CPUS=4-7 in" in log


def test_a_failed_tuning_unit_does_not_keep_the_runner_offline(log):
    """Requires= would stop the runner silently when the tunings fail: it Wants= them, after
    them, and its loop logs the failure at every job (check-runner then fails the job)."""
    unit = section(log, "write /etc/systemd/system/hft-runner.service", "+ write")
    lines = [line.strip() for line in unit.splitlines()]
    assert "Requires=hft-tuning.service" not in unit and not [x for x in lines if x.startswith("Requires=")]
    assert "Wants=network-online.target hft-tuning.service" in lines
    assert "After=network-online.target hft-tuning.service" in lines
    loop = (SCRIPT.parent / "runner-loop.sh").read_text()
    assert "systemctl is-failed --quiet hft-tuning.service; then" in loop and "ERROR: hft-tuning" in loop


def test_a_runner_group_needs_an_organization_url():
    r = dry_run("--url", "https://github.com/acme/hft-bench", "--runner-group-id", "3", *APP)
    assert r.returncode == 2 and "--runner-group-id needs an organization --url" in r.stderr


def test_the_app_ids_are_required():
    r = dry_run("--url", "https://github.com/acme/hft-bench")
    assert r.returncode == 2 and "--app-id must be the GitHub App's numeric id" in r.stderr


def test_the_runner_is_not_named_after_the_host(log):
    """Every public job log shows the runner's name: by default a random one, not the host's."""
    import socket

    name = re.search(r"^      name=(\S+)$", log, re.M)[1]
    assert re.fullmatch(r"hft-bench-[0-9a-f]{8}", name) and socket.gethostname().split(".")[0] not in name


def test_the_job_started_hook_is_installed_root_owned_and_named_in_the_runners_env(log):
    hook = "/usr/local/sbin/hft-job-started-hook.sh"
    assert f"install -D -o root -g root -m 0755 {SCRIPT.parent}/job-started-hook.sh {hook}" in log
    assert f"set ACTIONS_RUNNER_HOOK_JOB_STARTED={hook} in /etc/hft-runner/runner.env" in log
    loop = (SCRIPT.parent / "runner-loop.sh").read_text()
    assert 'install -o root -g root -m 0644 "$cfg_runner_env" "$dir/runner/.env"' in loop, "every job's .env"
