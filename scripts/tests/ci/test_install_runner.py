"""hft/runner/install-runner.sh --dry-run shows every part of the runner's hardening, and
never a key; its flags say what they need. The loop itself runs for real in
test_runner_loop.py."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.ci

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = ROOT / "hft" / "runner" / "install-runner.sh"


def dry_run(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "RUNNER_SHA256": "0" * 64, "RUNNER_APP_KEY_FILE": "/secret/app.pem"}
    return subprocess.run([str(SCRIPT), "--dry-run", *args], env=env, capture_output=True, text=True)


APP = ("--app-id", "12", "--installation-id", "34")
ORG = ("--repo", "acme/hft-bench", "--url", "https://github.com/acme")
LABELS = "self-hosted,linux,x64,hft-tuned,pool-desktop"


@pytest.fixture(scope="module")
def log() -> str:
    r = dry_run(
        *ORG,
        "--runner-group",
        "3",
        *APP,
        "--labels",
        LABELS,
        "--isolate",
        "2-3",
        "--server-cpus",
        "2-3",
        "--client-cpus",
        "4-7",
    )
    assert r.returncode == 0, r.stderr
    return r.stdout


def section(log: str, start: str, end: str) -> str:
    return log.split(start)[1].split(end)[0]


def test_every_step_is_shown(log):
    assert re.findall(r"^install-runner.sh: step: (\d)/6", log, re.M) == list("123456")


def test_the_loop_registers_each_job_just_in_time_with_a_github_app(log):
    conf = section(log, "write /etc/hft-runner/loop.conf (mode 0600)", "+ write")
    lines = (
        "repo=acme/hft-bench",
        "scope=orgs/acme",
        "app_id=12",
        "installation_id=34",
        "app_key=/etc/hft-runner/app-key.pem",
        "runner_group_id=3",
        f"labels={LABELS}",
        "job_runner=systemd",
        "retry_s=30",
        "retry_max_s=900",
    )
    for line in lines:
        assert f"      {line}\n" in conf, line
    assert 'install -o root -g root -m 0600 "$RUNNER_APP_KEY_FILE" /etc/hft-runner/app-key.pem' in log
    assert "/secret/app.pem" not in log and "config.sh" not in log
    assert not re.search(r"--token\b(?!-file)", log), (
        "no token as an argument (the hook's --token-file is a path)"
    )
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
    want = (
        "User=ghrunner",
        "NoNewPrivileges=yes",
        "ProtectSystem=strict",
        "PrivateTmp=yes",
        "RemoveIPC=yes",
        "ReadWritePaths=/var/lib/hft-runner/jobs/%i",
        "ProtectHome=tmpfs",
        "KillMode=control-group",
        "ExecStart=/var/lib/hft-runner/jobs/%i/runner/run.sh",
    )
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
    r = dry_run(
        "--repo", "acme/hft-bench", "--url", "https://github.com/acme/hft-bench", "--runner-group", "3", *APP
    )
    assert r.returncode == 2 and "--runner-group needs an organization --url" in r.stderr


def test_an_organization_runner_needs_its_runner_group_named():
    """No silent Default group: it lets every repository of the organization ask for the runner."""
    r = dry_run(*ORG, *APP)
    assert r.returncode == 2 and "--runner-group is required with an organization --url" in r.stderr
    assert "GET /orgs/acme/actions/runner-groups" in r.stderr and "Default group" in r.stderr
    bad = dry_run(*ORG, "--runner-group", "default", *APP)
    assert bad.returncode == 2 and "--runner-group must be a number" in bad.stderr
    named = dry_run(*ORG, "--runner-group", "1", *APP)
    assert (
        named.returncode == 0
        and "--runner-group 1 is the Default group: limit it to acme/hft-bench" in named.stdout
    )


def test_a_repository_runner_registers_in_the_repository_without_a_group():
    r = dry_run("--repo", "acme/hft-bench", "--url", "https://github.com/acme/hft-bench", *APP)
    assert r.returncode == 0, r.stderr
    assert "      scope=repos/acme/hft-bench\n" in r.stdout and "      runner_group_id=1\n" in r.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--url", "https://github.com/acme"), "--repo must be OWNER/REPO"),
        (("--repo", "hft-bench", "--url", "https://github.com/acme"), "--repo must be OWNER/REPO"),
        (("--repo", "acme/other", "--url", "https://github.com/acme/hft-bench"), "but --repo is acme/other"),
        (("--repo", "mallory/hft-bench", "--url", "https://github.com/acme"), "belongs to mallory"),
    ],
)
def test_the_repository_is_required_and_must_be_the_registrations(args, message):
    r = dry_run(*args, "--runner-group", "3", *APP)
    assert r.returncode == 2 and message in r.stderr, r.stderr


@pytest.mark.parametrize("labels", ["a,,b", "self-hosted, linux", "a;b", "a,b,"])
def test_labels_are_a_plain_comma_list(labels):
    r = dry_run(*ORG, "--runner-group", "3", *APP, "--labels", labels)
    assert r.returncode == 2 and "--labels must be a comma list" in r.stderr, r.stderr


def test_the_app_ids_are_required():
    r = dry_run("--repo", "acme/hft-bench", "--url", "https://github.com/acme/hft-bench")
    assert r.returncode == 2 and "--app-id must be the GitHub App's numeric id" in r.stderr


def test_the_runner_is_not_named_after_the_host(log):
    """Every public job log shows the runner's name: by default a random one, not the host's."""
    import socket

    name = re.search(r"^      name=(\S+)$", log, re.M)[1]
    assert re.fullmatch(r"hft-bench-[0-9a-f]{8}", name) and socket.gethostname().split(".")[0] not in name


def test_the_job_started_hook_is_installed_root_owned_pinned_and_named_in_the_runners_env(log):
    hook, lib = "/usr/local/sbin/hft-job-started-hook.sh", "/usr/local/lib/hft-runner/job-started-hook.sh"
    assert f"install -D -o root -g root -m 0755 {SCRIPT.parent}/job-started-hook.sh {lib}" in log
    pinned = section(log, f"write {hook} (mode 0755)", "+ ")
    line = (
        f"exec bash -e {lib} --repo acme/hft-bench --protected main --api https://api.github.com"
        ' --token-file "$HOME/.hft-bench-hook-token"\n'
    )
    assert line in pinned, "the repository and its protected branches are pinned on the machine"
    assert f"set ACTIONS_RUNNER_HOOK_JOB_STARTED={hook} in /etc/hft-runner/runner.env" in log
    loop = (SCRIPT.parent / "runner-loop.sh").read_text()
    assert 'install -o root -g root -m 0644 "$cfg_runner_env" "$dir/runner/.env"' in loop, "every job's .env"


def test_the_calibration_record_goes_where_the_job_user_reads_it(tmp_path):
    """Root writes it, the runner user reads it: /etc/hft-bench (0755), not the root-only
    /etc/hft-runner (0700), which would stop every leg with a usage error."""
    record = tmp_path / "calibration.json"
    record.write_text('{"guards": [{"series": "latency-1c/hft", "metric": "p99", "guarded": true}]}')
    r = dry_run("--calibration", str(record))
    assert r.returncode == 0, r.stderr
    assert "install -d -o root -g root -m 0755 /etc/hft-bench\n" in r.stdout
    assert f"install -o root -g root -m 0644 {record} /etc/hft-bench/calibration.json.new" in r.stdout
    assert "mv -T /etc/hft-bench/calibration.json.new /etc/hft-bench/calibration.json" in r.stdout
    assert (
        "set HFTBENCH_CALIBRATION=/etc/hft-bench/calibration.json in /etc/hft-runner/runner.env" in r.stdout
    )
    assert "step: 1/6" not in r.stdout and "systemctl" not in r.stdout


def test_the_install_makes_the_readable_folder_beside_the_secret_one(log):
    assert "install -d -o root -g root -m 0700 /etc/hft-runner\n" in log
    assert "install -d -o root -g root -m 0755 /etc/hft-bench\n" in log


@pytest.mark.parametrize("content", ["not json", "{}", '{"guards": []}', '{"guards": {}}'])
def test_a_file_that_is_not_a_calibration_record_is_refused(tmp_path, content):
    record = tmp_path / "calibration.json"
    record.write_text(content)
    r = dry_run("--calibration", str(record))
    assert r.returncode == 2 and "has no 'guards' list" in r.stderr, r.stderr
    missing = dry_run("--calibration", str(tmp_path / "nope.json"))
    assert missing.returncode == 2 and "is not readable" in missing.stderr


def test_the_runner_version_is_pinned_where_dependabot_watches_it(log):
    """runner-version/Dockerfile's tag is the installer's default version; Dependabot's docker
    ecosystem proposes each new ghcr.io/actions/actions-runner release there."""
    dockerfile = SCRIPT.parent / "runner-version" / "Dockerfile"
    tags = re.findall(r"^FROM ghcr\.io/actions/actions-runner:(\d+\.\d+\.\d+)$", dockerfile.read_text(), re.M)
    assert len(tags) == 1, "one FROM line with the runner version"
    assert f"step: 2/6 GitHub Actions runner {tags[0]}," in log
    assert f"actions-runner-linux-x64-{tags[0]}.tar.gz" in log
    updates = yaml.safe_load((ROOT / ".github" / "dependabot.yml").read_text())["updates"]
    assert {"package-ecosystem": "docker", "directory": "/hft/runner/runner-version"}.items() <= next(
        u for u in updates if u["package-ecosystem"] == "docker"
    ).items()


def test_the_protected_branches_are_pinned_in_the_hooks_line():
    """--protected: the branches whose bench.yml is reviewed (default main), written into the
    root-owned line the runner runs, as --repo is."""
    r = dry_run(*ORG, "--runner-group", "3", *APP, "--protected", "main,release/1.x")
    assert r.returncode == 0, r.stderr
    assert " --repo acme/hft-bench --protected main,release/1.x --api " in r.stdout
    for bad in ("main,,x", "main release", "../x", "-x", "main,"):
        refused = dry_run(*ORG, "--runner-group", "3", *APP, "--protected", bad)
        assert (
            refused.returncode == 2 and "--protected must be a comma list of branch names" in refused.stderr
        ), bad


def test_the_loop_leaves_the_hook_its_read_token_where_the_hooks_line_looks():
    """The loop writes the read token into the job's home under the name the hook's line reads
    (`$HOME/...`: HOME is the job unit's, not the workflow's), and revokes it after the job."""
    loop = (SCRIPT.parent / "runner-loop.sh").read_text()
    name = re.search(r"^HOOK_TOKEN=(\S+)$", loop, re.M)[1]
    assert f'--token-file "\\$HOME/{name}"' in SCRIPT.read_text()
    assert '>"$dir/home/$HOOK_TOKEN"' in loop and 'api DELETE "$read_tok" installation/token' in loop
    assert 'permissions: {contents: "read"}' in loop and "repositories: [$r]" in loop


def unit_directives(log: str) -> dict[str, list[str]]:
    unit = section(log, "write /etc/systemd/system/hft-runner-job@.service", "+ install")
    directives: dict[str, list[str]] = {}
    for line in (x.strip() for x in unit.splitlines()):
        if "=" in line and not line.startswith("#"):
            key, value = line.split("=", 1)
            directives.setdefault(key, []).append(value)
    return directives


def test_the_job_unit_allows_only_the_namespaces_the_sandbox_makes(log):
    """bwrap, as measure/sandbox.py starts it, unprivileged: a user and a mount namespace, and
    one per --unshare-* flag, for a build and for a server (which has a network of its own:
    the harness hands it its socket). Exactly those are allowed."""
    from hftbench.measure import sandbox

    build = sandbox.wrap(["true"], writable=())
    server = sandbox.wrap(["true"], writable=(), own_network=True)
    flags = [a for a in build + server if a.startswith("--unshare-")]
    made = {"user", "mnt"} | {f.removeprefix("--unshare-") for f in flags}
    assert made == {"user", "mnt", "pid", "ipc", "net"}, flags
    (allowed,) = unit_directives(log)["RestrictNamespaces"]
    assert set(allowed.split()) == made, allowed


def test_the_job_unit_delegates_its_cgroup_with_the_controllers_hftbench_enables(log):
    """Each side's server in a group of its own on the runner (measure/cgroups.py): the job's
    cgroup delegated to the runner user with exactly the controllers cgroups.py enables below
    it, and not mounted read-only: systemd 252's ProtectControlGroups=yes makes all of
    /sys/fs/cgroup read-only, the delegated group included, which would leave the job none."""
    from hftbench.measure import cgroup_parsing

    d = unit_directives(log)
    (delegated,) = d["Delegate"]
    assert delegated.split() == list(cgroup_parsing.V2_CONTROLLERS), delegated
    assert "ProtectControlGroups" not in d and "DelegateSubgroup" not in d  # the latter: systemd 254
    assert d["User"] == ["ghrunner"] and d["KillMode"] == ["control-group"]


def test_the_job_unit_filters_system_calls(log):
    """@system-service, the mounts bwrap makes in its own namespaces and perf record's
    perf_event_open; not the keyrings (state a next job could find) nor userfaultfd; refused
    calls fail with EPERM (a probe falls back) instead of killing the job; native calls only."""
    d = unit_directives(log)
    assert d["SystemCallFilter"] == ["@system-service @mount perf_event_open", "~@keyring userfaultfd"]
    assert d["SystemCallErrorNumber"] == ["EPERM"] and d["SystemCallArchitectures"] == ["native"]


def _syscalls(group: str) -> set[str]:
    out = subprocess.run(
        ["systemd-analyze", "syscall-filter", group], capture_output=True, text=True, check=True
    )
    names = {
        w for line in out.stdout.splitlines()[1:] for w in line.split() if not line.strip().startswith("#")
    }
    return set().union(*(_syscalls(n) if n.startswith("@") else {n} for n in names))


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="needs systemd-analyze (systemd)")
def test_the_filter_keeps_what_bwrap_and_a_benchmark_call_and_leaves_out_ptrace(log, tmp_path):
    """As this machine's systemd expands the groups: bwrap's mount, pivot_root, umount2,
    unshare and clone, the pinning and perf record a benchmark does are in; ptrace, the
    keyrings, userfaultfd, bpf and module or kexec loading are not. And systemd reads every
    directive of the unit (verify names an unknown key or a bad value)."""
    allowed_groups, denied_groups = unit_directives(log)["SystemCallFilter"]
    allowed = set().union(*(_syscalls(w) if w.startswith("@") else {w} for w in allowed_groups.split()))
    allowed -= set().union(*(_syscalls(w) if w.startswith("@") else {w} for w in denied_groups[1:].split()))
    needed = {
        "mount",
        "pivot_root",
        "umount2",
        "unshare",
        "clone",
        "execve",
        "sched_setaffinity",
        "perf_event_open",
        "mmap",
        "socket",
    }
    assert needed <= allowed, needed - allowed
    assert not {"ptrace", "keyctl", "add_key", "userfaultfd", "bpf", "kexec_load", "init_module"} & allowed
    unit = tmp_path / "hft-runner-job@x.service"
    text = section(log, "write /etc/systemd/system/hft-runner-job@.service", "+ install").split("\n", 1)[1]
    unit.write_text(text.replace("\n      ", "\n").strip() + "\n")
    r = subprocess.run(["systemd-analyze", "verify", str(unit)], capture_output=True, text=True)
    said = [line for line in r.stderr.splitlines() if "is not executable" not in line and line.strip()]
    assert not said, said  # the one complaint left: run.sh of a job that does not exist here


def test_runners_sharing_a_host_each_get_their_own_user_units_folders_and_env():
    """A loop kills every process of its user between jobs, and at its start stops its job
    units and empties its folders: runner N of a host (--instance N) owns each of them alone."""
    r = dry_run(*ORG, "--runner-group", "3", *APP, "--instance", "2", "--server-cpus", "4-5")
    assert r.returncode == 0, r.stderr
    log = r.stdout
    assert "step: 1/6 runner user hft-runner-2 " in log
    assert (
        "+ useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin hft-runner-2"
        in log
    )
    conf = section(log, "write /etc/hft-runner/loop-2.conf (mode 0600)", "+ write")
    for line in (
        "user=hft-runner-2",
        "unit=hft-runner-2-job",
        "jobs_dir=/var/lib/hft-runner/runner-2/jobs",
        "run_dir=/run/hft-runner/runner-2",
        "runner_env=/etc/hft-runner/runner-2.env",
    ):
        assert f"      {line}\n" in conf, line
    loop = section(log, "write /etc/systemd/system/hft-runner-2.service", "+ write")
    assert "ExecStart=/usr/local/sbin/hft-runner-loop --config /etc/hft-runner/loop-2.conf" in loop
    job = [
        x.strip()
        for x in section(log, "write /etc/systemd/system/hft-runner-2-job@.service", "+ install").splitlines()
    ]
    assert "User=hft-runner-2" in job and "Group=hft-runner-2" in job
    assert "ReadWritePaths=/var/lib/hft-runner/runner-2/jobs/%i" in job
    assert "set HFTBENCH_SERVER_CPUS=4-5 in /etc/hft-runner/runner-2.env" in log
    hook = "/usr/local/sbin/hft-job-started-hook-2.sh"
    assert f"set ACTIONS_RUNNER_HOOK_JOB_STARTED={hook} in /etc/hft-runner/runner-2.env" in log
    assert "systemctl restart hft-runner-2.service" in log
    # Nothing of the host's single runner is written or restarted.
    for single in (
        "/etc/hft-runner/loop.conf",
        "/etc/hft-runner/runner.env",
        "hft-runner.service",
        "hft-runner-job@",
        "/var/lib/hft-runner/jobs",
    ):
        assert single not in log, single


@pytest.mark.parametrize("instance", ["0", "100", "a", "-1"])
def test_an_instance_is_a_number_from_1_to_99(instance):
    r = dry_run(*ORG, "--runner-group", "3", *APP, "--instance", instance)
    assert r.returncode == 2 and "--instance must be a number from 1 to 99" in r.stderr


def test_a_user_another_runner_of_the_host_runs_as_is_refused(tmp_path):
    secrets = tmp_path / "etc" / "hft-runner"
    secrets.mkdir(parents=True)
    (secrets / "loop.conf").write_text("user=ghrunner\nunit=hft-runner-job\n")
    (secrets / "loop-1.conf").write_text("user=hft-runner-1\nunit=hft-runner-1-job\n")
    args = (*ORG, "--runner-group", "3", *APP, "--root", str(tmp_path))
    for given, taken in (
        (("--instance", "2", "--user", "ghrunner"), "loop.conf"),
        (("--instance", "2", "--user", "hft-runner-1"), "loop-1.conf"),
        (("--user", "hft-runner-1"), "loop-1.conf"),
    ):
        r = dry_run(*args, *given)
        assert r.returncode == 2, r.stdout
        assert f"already runs the runner of {secrets / taken}" in r.stderr and "--instance N" in r.stderr
    assert dry_run(*args, "--instance", "2").returncode == 0  # hft-runner-2: its own
    assert dry_run(*args, "--instance", "1").returncode == 0  # runner 1 reinstalled: its own conf
    assert dry_run(*args).returncode == 0  # the single runner reinstalled, as ghrunner: its own conf
