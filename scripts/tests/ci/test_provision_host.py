"""hft/runner/provision-host: its flags (each refusal names the flag and where its value comes
from) and its dry run (every package scripts/deps.sh checks, each download checked before it
is used, the tools where the jobs' .env points, a check as the jobs' user); and scripts/deps.sh
linking a runner's provisioned tools instead of building them from the network."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.ci

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = ROOT / "hft" / "runner" / "provision-host"
DEPS = ROOT / "scripts" / "deps.sh"
GOOD = {"--go": "1.25.1", "--go-sha256": "a" * 64, "--rust": "1.89.0", "--rustup-sha256": "b" * 64}


def provision(
    *args: str, env: dict[str, str] | None = None, **flags: str | None
) -> subprocess.CompletedProcess:
    given = {**GOOD, **{f"--{k.replace('_', '-')}": v for k, v in flags.items()}}
    argv = [a for k, v in given.items() if v is not None for a in (k, v)]
    return subprocess.run([str(SCRIPT), *argv, *args], capture_output=True, text=True, timeout=60, env=env)


@pytest.fixture(scope="module")
def log() -> str:
    r = provision("--dry-run")
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_help_names_every_flag():
    r = subprocess.run([str(SCRIPT), "--help"], capture_output=True, text=True)
    assert r.returncode == 0
    for flag in ("--go", "--go-sha256", "--rust", "--rustup-sha256", "--user", "--dry-run"):
        assert flag in r.stdout, flag


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        ({"go": None}, "--go must be a Go release"),
        ({"go": "latest"}, "--go must be a Go release"),
        ({"go": "1.22.5"}, "--go 1.22.5 is older than 1.25, which clients/go/go.mod needs"),
        ({"go_sha256": None}, "--go-sha256 must be the 64 hex digits https://go.dev/dl/ shows"),
        ({"go_sha256": "A" * 64}, "--go-sha256 must be the 64 hex digits"),
        ({"rust": None}, "--rust must be a Rust release"),
        ({"rust": "stable"}, "--rust must be a Rust release"),
        ({"rust": "1.79.0"}, "--rust 1.79.0 is older than 1.80, Cargo.toml's rust-version"),
        (
            {"rustup_sha256": "abc"},
            "--rustup-sha256 must be the 64 hex digits of https://static.rust-lang.org",
        ),
        ({"user": "root"}, "--user must not be root"),
        ({"user": "Bad User"}, "--user must be the jobs' plain user name"),
    ],
)
def test_each_flag_is_checked_and_named(flags, message):
    r = provision("--dry-run", **flags)
    assert r.returncode == 2 and message in r.stderr, r.stderr
    assert "step:" not in r.stdout, "nothing runs before the flags are good"


def test_an_unknown_argument_is_refused():
    r = provision("--dry-run", "--sudo")
    assert r.returncode == 2 and "unknown argument '--sudo'" in r.stderr


@pytest.mark.skipif(os.geteuid() == 0, reason="as root a real run would start")
def test_a_real_run_needs_root():
    r = provision()
    assert r.returncode == 2 and "run as root" in r.stderr


def test_every_step_is_shown_and_nothing_changes(log):
    assert re.findall(r"^provision-host: step: (\d)/6", log, re.M) == list("123456")
    assert log.rstrip().endswith("done (dry run: nothing changed)")


def test_every_package_make_deps_checks_is_installed(log):
    """A job's make deps finds every package it checks installed, so it never needs sudo."""
    wanted = subprocess.run([str(DEPS), "--apt-packages"], capture_output=True, text=True, check=True)
    packages = wanted.stdout.split()
    assert "build-essential" in packages and "linux-perf" in packages
    line = next(x for x in log.splitlines() if "apt-get install" in x)
    installed = line.split("--no-install-recommends", 1)[1].split()
    for p in [*packages, "jq", "openssl", "curl", "git", "nodejs", "npm", "util-linux"]:
        assert p in installed, p
    assert len(installed) == len(set(installed)), "each package once"


def test_each_download_is_checked_before_it_is_used(log):
    go_tar = log.index("curl -fsSL -o /tmp/provision-host.XXXXXX/go.tar.gz https://go.dev/dl/go1.25.1.linux-")
    go_sum = log.index(f'echo "{"a" * 64}  /tmp/provision-host.XXXXXX/go.tar.gz" | sha256sum -c -')
    assert go_tar < go_sum < log.index("tar -xzf /tmp/provision-host.XXXXXX/go.tar.gz -C /usr/local/go.new")
    init = "/tmp/provision-host.XXXXXX/rustup-init"
    rust_sum = log.index(f'echo "{"b" * 64}  {init}" | sha256sum -c -')
    assert rust_sum < log.index(f"{init} -y --no-modify-path --profile minimal --default-toolchain 1.89.0")
    assert "--component clippy --component rustfmt" in log


def test_toolchains_and_tools_are_root_owned_and_read_only(log):
    for folder in ("/usr/local/go.new", "/opt/rust", "/opt/hft-bench"):
        assert f"chown -R root:root {folder}\n" in log and f"chmod -R a+rX,go-w {folder}\n" in log, folder
    assert "mv -T /usr/local/go.new /usr/local/go" in log
    assert "RUSTUP_HOME=/opt/rust/rustup CARGO_HOME=/opt/rust/cargo" in log


def test_the_tools_go_where_the_jobs_env_points(log):
    """install-runner.sh names /opt/hft-bench/tools in the jobs' .env (HFT_TOOLS_DIR); the
    PATH of the check is the one it gives the jobs."""
    assert f"{DEPS} --tools /opt/hft-bench/tools" in log
    installer = (SCRIPT.parent / "install-runner.sh").read_text()
    assert "TOOLS_DIR=$R/opt/hft-bench/tools" in installer and "set_runner_env HFT_TOOLS_DIR" in installer
    job_path = re.search(r'set_runner_env PATH "([^"]+)"', installer)[1]
    assert f"PATH={job_path} " in log


def test_the_check_runs_as_the_jobs_user_and_looks_for_anything_writable(log):
    check = log.split("step: 6/6")[1]
    tools = "/opt/hft-bench/tools/bin"
    wanted = [
        "cargo --version",
        "go version",
        "node --version",
        f"{tools}/actionlint -version",
        f"{tools}/act --version",
        f"{tools}/inferno-flamegraph --version",
    ]
    for tool in wanted:
        assert "env -i HOME=/nonexistent PATH=" in check and f" {tool}\n" in check, tool
    assert "setpriv --reuid=" in check and "-writable (must find nothing)" in check


def ptrace_step(tmp_path: Path, scope: str | None, path: str | None = None) -> str:
    """Step 5's dry run on a kernel whose Yama says `scope` (None: no Yama at all)."""
    proc_sys = tmp_path / "proc-sys"
    if scope is not None:
        (proc_sys / "kernel" / "yama").mkdir(parents=True)
        (proc_sys / "kernel" / "yama" / "ptrace_scope").write_text(scope + "\n")
    env = {**os.environ, "HFT_PROC_SYS": str(proc_sys), "PATH": path or os.environ["PATH"]}
    r = provision("--dry-run", env=env)
    assert r.returncode == 0, r.stderr  # never a failure: a VM may lack Yama or sysctl
    return r.stdout.split("step: 5/6")[1].split("step: 6/6")[0]


CONF = "/etc/sysctl.d/60-hft-bench-ptrace.conf"


def test_ptrace_scope_is_set_to_1_now_and_at_every_boot(tmp_path):
    """1: a job's processes trace (and read the memory of) their own children only, not
    Runner.Worker or Runner.Listener, which started them and hold the job's tokens."""
    step = ptrace_step(tmp_path, "0")
    assert "= kernel.yama.ptrace_scope is 0 now" in step, step
    assert f"+ write {CONF}: -kernel.yama.ptrace_scope = 1\n" in step
    assert "+ sysctl -q -w kernel.yama.ptrace_scope=1\n" in step
    assert "a job may trace only its own children" in step


def test_a_stricter_ptrace_scope_is_kept(tmp_path):
    step = ptrace_step(tmp_path, "2")
    assert "kernel.yama.ptrace_scope is 2 already, stricter than 1: kept" in step, step
    assert f"+ write {CONF}: -kernel.yama.ptrace_scope = 2\n" in step
    assert "kernel.yama.ptrace_scope=2\n" in step and "ptrace_scope=1" not in step


def test_a_kernel_without_yama_is_named_and_nothing_fails(tmp_path):
    step = ptrace_step(tmp_path, None)
    assert "! no " in step and "kernel/yama/ptrace_scope: Yama is not in this kernel" in step, step
    assert "CONFIG_SECURITY_YAMA" in step and "a job could read the runner's memory" in step
    assert f"+ write {CONF}: -kernel.yama.ptrace_scope = 1\n" in step, "ready for a kernel that has it"
    assert "= not applied now (no Yama)" in step and "sysctl -q -w" not in step


def test_a_missing_sysctl_or_an_odd_value_is_said_and_nothing_fails(tmp_path):
    no_sbin = "/usr/bin:/bin"  # Debian's sysctl is /usr/sbin/sysctl
    step = ptrace_step(tmp_path, "1", path=no_sbin)
    assert "! sysctl not found (apt-get install procps)" in step and "applies at the next boot" in step, step
    odd = ptrace_step(tmp_path / "odd", "banana")
    assert "unreadable or odd (banana): setting 1" in odd and "kernel.yama.ptrace_scope=1\n" in odd, odd


def pinned_versions() -> dict[str, str]:
    """ACTIONLINT, INFERNO, ACT -> the version deps.sh pins."""
    text = DEPS.read_text()
    return {k: re.search(rf"^{k}_VERSION=(\S+)$", text, re.M)[1] for k in ("ACTIONLINT", "INFERNO", "ACT")}


def test_deps_links_a_runners_tools_instead_of_building_them(tmp_path):
    """With HFT_TOOLS_DIR holding the pinned versions, `deps.sh --tools` links them: no go or
    cargo on the PATH, so a build would fail."""
    versions = pinned_versions()
    tools = tmp_path / "tools"
    (tools / "bin").mkdir(parents=True)
    fakes = {
        "actionlint": f"echo {versions['ACTIONLINT']}",
        "act": f"echo 'act version {versions['ACT'][1:]}'",
        **{f"inferno-{x}": "true" for x in ("flamegraph", "collapse-perf", "diff-folded")},
    }
    for name, body in fakes.items():
        (tools / "bin" / name).write_text(f"#!/bin/sh\n{body}\n")
        (tools / "bin" / name).chmod(0o755)
    (tools / "inferno.version").write_text(versions["INFERNO"] + "\n")
    env = {"PATH": "/usr/bin:/bin", "HFT_TOOLS_DIR": str(tools), "HOME": str(tmp_path)}
    out = tmp_path / "deps"
    r = subprocess.run([str(DEPS), "--tools", str(out)], env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    for name in fakes:
        assert os.readlink(out / "bin" / name) == str(tools / "bin" / name), name
    said = r.stdout + r.stderr
    assert f"actionlint from {tools}\n" in said and "go install" not in said, said
    stale = tools / "bin" / "actionlint"
    stale.write_text("#!/bin/sh\necho v0.0.1\n")  # another version: not taken, built instead
    (out / "bin" / "actionlint").unlink()
    r = subprocess.run([str(DEPS), "--tools", str(out)], env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode != 0 and f"go install actionlint {versions['ACTIONLINT']}" in r.stdout + r.stderr


def _stand_in_toolchain(tmp_path: Path, seconds: float = 0) -> tuple[dict[str, str], Path, Path]:
    """go and cargo stand-ins that log each build to builds.log, take `seconds`, and write a tool
    of the pinned version; deps.sh's environment with them first on PATH and the user cache."""
    versions = pinned_versions()
    fake_bin, builds = tmp_path / "fake-bin", tmp_path / "builds.log"
    fake_bin.mkdir()
    tools = {
        "actionlint": f"echo {versions['ACTIONLINT']}",
        "act": f"echo 'act version {versions['ACT'][1:]}'",
    }
    (fake_bin / "go").write_text(
        "#!/bin/sh\n"  # go install MODULE@VERSION: the tool's name is the module's last element
        f'echo "go $*" >>{builds}; sleep {seconds}\n'
        'name=$(basename "${2%@*}")\n'
        f'case $name in actionlint) body="{tools["actionlint"]}";; *) body="{tools["act"]}";; esac\n'
        'printf "#!/bin/sh\\n%s\\n" "$body" >"$GOBIN/$name" && chmod +x "$GOBIN/$name"\n'
    )
    (fake_bin / "cargo").write_text(
        "#!/bin/sh\n"  # cargo install --quiet --locked --root DIR inferno --version V
        f'echo "cargo $*" >>{builds}; sleep {seconds}\n'
        'mkdir -p "$5/bin"; for x in flamegraph collapse-perf diff-folded; do\n'
        '  printf "#!/bin/sh\\ntrue\\n" >"$5/bin/inferno-$x"; chmod +x "$5/bin/inferno-$x"; done\n'
    )
    for f in ("go", "cargo"):
        (fake_bin / f).chmod(0o755)
    cache = tmp_path / "cache"
    return (
        {"PATH": f"{fake_bin}:/usr/bin:/bin", "HOME": str(tmp_path), "HFT_USER_TOOLS": str(cache)},
        builds,
        cache,
    )


def test_the_tools_are_built_once_into_the_users_cache_and_linked_by_every_checkout(tmp_path):
    """Without a runner's HFT_TOOLS_DIR, the first checkout builds the pinned tools into the
    user's cache (HFT_USER_TOOLS) and links them; the next checkout links them without building."""
    env, builds, cache = _stand_in_toolchain(tmp_path)
    first = subprocess.run(
        [str(DEPS), "--tools", str(tmp_path / "one")], env=env, capture_output=True, text=True, timeout=60
    )
    assert first.returncode == 0, first.stdout + first.stderr
    assert len(builds.read_text().splitlines()) == 3, builds.read_text()
    assert (cache / "bin" / "act").is_file() and not (cache / "bin" / "act").is_symlink()
    second = subprocess.run(
        [str(DEPS), "--tools", str(tmp_path / "two")], env=env, capture_output=True, text=True, timeout=60
    )
    assert second.returncode == 0, second.stdout + second.stderr
    assert len(builds.read_text().splitlines()) == 3, "the second checkout built again"
    for name in ("actionlint", "act", "inferno-flamegraph"):
        for checkout in ("one", "two"):
            assert os.readlink(tmp_path / checkout / "bin" / name) == str(cache / "bin" / name)
    assert f"act from {cache}\n" in second.stdout, second.stdout


def test_two_checkouts_at_once_build_the_cache_once(tmp_path):
    """Two make deps into an empty user cache at the same moment: the second waits on the
    cache's lock and links what the first built (each build here takes 1 s, so without the lock
    both would build)."""
    env, builds, cache = _stand_in_toolchain(tmp_path, seconds=1)
    both = [
        subprocess.Popen(
            [str(DEPS), "--tools", str(tmp_path / name)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for name in ("one", "two")
    ]
    said = [p.communicate(timeout=60)[0] for p in both]
    assert [p.returncode for p in both] == [0, 0], said
    assert len(builds.read_text().splitlines()) == 3, builds.read_text()
    for checkout in ("one", "two"):
        assert os.readlink(tmp_path / checkout / "bin" / "act") == str(cache / "bin" / "act")


def _dry_run(target: str) -> list[str]:
    r = subprocess.run(["make", "-n", target], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return [line.strip() for line in r.stdout.splitlines() if "scripts/deps.sh" in line]


def test_make_bench_installs_only_its_part_and_make_test_everything():
    """make bench (issue 37: <= 5 min on a fresh machine) sets up through deps.sh --bench, which
    leaves out the browser, the linters, npm and act; make test and the CI build take all."""
    assert _dry_run("bench") == ["scripts/deps.sh --bench"]
    assert _dry_run("test")[0] == "scripts/deps.sh"
    assert "make deps build" in (ROOT / "scripts" / "ci" / "build").read_text()
    text = DEPS.read_text()
    bench = re.search(r"BENCH_APT_PACKAGES=\((.*?)\n\)", text, re.S).group(1)
    bench_packages = {w for line in bench.splitlines() for w in line.split("#")[0].split()}
    assert bench_packages >= {"build-essential", "libcurl4-openssl-dev", "python3-venv"}
    assert not bench_packages & {"chromium", "shellcheck", "clang-tidy", "valgrind", "wrk", "linux-perf"}
    full = subprocess.run(
        [str(DEPS), "--apt-packages"], capture_output=True, text=True, check=True
    ).stdout.split()
    assert bench_packages < set(full) and "chromium" in full
