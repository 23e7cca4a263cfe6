"""The pull request's code, built and served where it can neither write nor read anything of the harness.

A head commit brings code that runs on the runner: its build scripts (`build.rs`,
`.cargo/config.toml`'s rustc-wrapper and linker, proc-macros) and then its server. Run as the
harness's user in the job's environment, that code could rewrite the base checkout (scripts/,
the editable hftbench, .venv, bin/client-*), base's built server, $OUT, $RUNNER_TEMP and the
folder uploaded as the leg's artifact, read the job's tokens and the runner's credentials,
send them anywhere, and leave a process that lives past the verdict. So every head build and
head server runs under bubblewrap (`bwrap`):

- the whole filesystem read-only (`--ro-bind / /`, /tmp included: the harness's own files
  and scripts may live there); writable only what that build needs (its source tree, a plain
  folder exported from the clone with no .git (worktrees.py), its own scratch cargo target
  dir, home and TMPDIR) and a private /dev. What the build writes in its tree stays there:
  the harness runs nothing in it afterwards (no git, no tuning script: the run folders' git
  info is read from the clone by sha, the host fingerprint from the harness's checkout);
- what it must not read covered by an empty read-only tmpfs (`hidden`): /etc/hft-runner and
  /etc/hft-bench, $RUNNER_TEMP, the runner's own folder (the nearest folder above the job's
  workspace holding `.runner` or `.credentials`: its registration and key), the harness's
  output ($OUT, and ab's --out: base's side, the results), the job user's home ($HOME and
  the passwd one), and every path of `HFT_SANDBOX_HIDE` (colon-separated: an operator's or a
  test's own; a file there is covered by /dev/null, whose reads are refused). A path that does
  not exist is skipped. Inside those only what the command needs is bound back: its writable
  tree and scratch, a server's real binary, a build's cargo home (each entry but cargo's
  `credentials` and `credentials.toml`) and rustup home, read-only; and, where a hidden home
  holds the harness's own checkout (a local run), that checkout read-only;
- `--unshare-pid --die-with-parent`: when the command ends, or the harness kills it, every
  process it started dies with it (the kernel kills a pid namespace with its first process);
- `--clearenv`: a short allow-list (PATH, HOME=scratch, the cargo and rustup homes, read-only);
  no GITHUB_TOKEN, ACTIONS_RUNTIME_TOKEN or anything else of the job;
- no network: a build has a network namespace of its own (`--unshare-net`: only its own `lo`)
  and CARGO_NET_OFFLINE=true, its crates fetched beforehand by the harness (worktrees.py),
  so a build.rs or proc-macro can send nothing. The server has a network namespace of its own
  too. The client, outside, reaches it through the one socket the harness binds on the host's
  loopback and hands in as `--listen-fd` (server.py): a socket belongs to the namespace it
  was made in, so it still takes the host's connections. Only a server told to bind its own
  port (`--addr`: a build from before the flag, a base older than it, or a network scenario's
  server in its namespace) gets the host's network; `--help` and `--version` run without one
  too. A head without the flag is refused under `--require-sandbox` and named in the note
  otherwise (`isolate_network`);
- the kernel's surface narrowed (`hardening`): a user namespace of bwrap's own in which no
  other can be made (`--unshare-user --disable-userns`, bwrap 0.8.0 on: `unshare -U` fails
  inside), and a seccomp filter (`--seccomp FD`) refusing the calls a build or server has no
  use for: keys, ptrace, bpf, perf_event_open, userfaultfd, kexec and modules, mounts and
  namespaces once the sandbox is made, clone with a namespace flag, a personality other than
  Linux's, io_uring (hft/sandbox/seccomp.c, libseccomp, written by `make build` into
  build/sandbox/seccomp.bpf; a deny-list, SECURITY.md says why). Where bwrap is older or the
  filter is not built, the sandbox runs without that fence: the verdict's note names what is
  missing and the fix, and a warning says it once.

`HFT_SANDBOX`: `on` requires it, `off` switches it off (said in the verdict; refused with
`--require-sandbox`), unset = `auto`: used when it works; where it cannot start (no bwrap,
user namespaces refused) a CI job (`CI=true`) is refused with the fix, and a local run warns
once and runs unsandboxed. The verdict's "How this was decided" says which it was.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import os
import pwd
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ..errors import UsageError
from .server import LAUNCHER_MARK, LISTEN_FD, takes_listen_fd

ENV = "HFT_SANDBOX"
HIDE_ENV = "HFT_SANDBOX_HIDE"  # more paths to cover, colon-separated (module docstring)
FIX = (
    "install bubblewrap (`make deps`, or hft/runner/provision-host on a runner) and allow "
    "unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1, and on Ubuntu "
    "kernel.apparmor_restrict_unprivileged_userns=0)"
)
# The harness's own checkout (this file is scripts/hftbench/measure/sandbox.py in it).
HARNESS = Path(__file__).resolve().parents[3]
# The filter `make build` writes (hft/sandbox/seccomp.c): classic BPF for bwrap --seccomp.
SECCOMP = HARNESS / "build" / "sandbox" / "seccomp.bpf"
SECCOMP_FIX = "make deps (libseccomp-dev) then make build"
# bash, outside the sandbox, opens the filter on a free descriptor and hands its number to
# bwrap: `bash -c SECCOMP_OPEN hft-sandbox FILTER BWRAP ARGS...`.
SECCOMP_OPEN = 'exec {fd}<"$1" || exit 125; shift; exec "$1" --seccomp "$fd" "${@:2}"'
BASH = "/bin/bash"
# The runner's folders a job must never read (install-runner.sh): root's secrets, the public
# settings, and the marks of a runner's own folder (its registration, its key).
RUNNER_SECRETS = ("/etc/hft-runner", "/etc/hft-bench")
RUNNER_MARKS = (".runner", ".credentials")
CARGO_CREDENTIALS = ("credentials", "credentials.toml")
# What a build may see of the job's environment: the toolchain and its flags, both sides alike
# (base is built with the same list, so the two builds differ only by their code). Never a
# token: names with these words are dropped even when listed.
BUILD_ENV = (
    "PATH",
    "LANG",
    "LC_ALL",
    "TZ",
    "RUSTFLAGS",
    "CARGO_ENCODED_RUSTFLAGS",
    "RUSTUP_TOOLCHAIN",
    "CARGO_BUILD_JOBS",
    "CARGO_INCREMENTAL",
    "CARGO_NET_OFFLINE",
    "CC",
    "CXX",
)
SECRET_WORDS = ("TOKEN", "SECRET", "PASSWORD", "CREDENTIAL", "KEY")


@dataclass(frozen=True)
class Policy:
    """Whether the head runs sandboxed here, and the sentence the verdict says about it."""

    enabled: bool
    note: str  # ON_NOTE + hardening_note() (+ NET_NOTE or SHARED_NOTE), or "unsandboxed: <why>"
    required: bool = False  # --require-sandbox: a head the sandbox cannot isolate is refused

    def to_json(self) -> dict[str, object]:
        return {"head": "bubblewrap" if self.enabled else "none", "note": self.note}


ON_NOTE = (
    "the head was built and served in a bubblewrap sandbox: the filesystem read-only but for its "
    "own source tree and scratch dirs, the runner's folders, $RUNNER_TEMP, the harness's output and "
    "the home hidden, the build offline, no job token in its environment, its processes killed with it"
)
HARDENED_NOTE = "; nested user namespaces and the kernel calls of its seccomp filter refused"
NET_NOTE = "; its server had a network of its own, reached only through the socket the harness passed it"
SHARED_NOTE = "network shared: head's server has no --listen-fd"
NET_FIX = (
    "rebase the pull request onto a base whose server has --listen-fd (server/src/main.rs): the "
    "harness then binds the server's socket and the sandbox gives the server no network of its own"
)


def policy(*, required: bool = False) -> Policy:
    """Decide once per command (module docstring); UsageError naming the fix where a sandbox is
    required and cannot start."""
    mode = os.environ.get(ENV, "auto").strip().lower() or "auto"
    if mode not in ("on", "off", "auto"):
        raise UsageError(f"{ENV}={mode!r}: use on, off or auto")
    if mode == "off" and required:
        raise UsageError(f"--require-sandbox and {ENV}=off contradict each other: unset {ENV}")
    if mode == "off":
        return Policy(False, f"unsandboxed: {ENV}=off")
    problem = probe()
    if problem is None:
        if hardening().missing:
            _warn(
                f"warning: the head's sandbox cannot refuse {', '.join(hardening().missing)}; "
                "it runs without those fences (the verdict's note says so)"
            )
        return Policy(True, ON_NOTE + hardening_note(), required)
    if required or mode == "on" or os.environ.get("CI", "").lower() == "true":
        why = f"{ENV}=on" if mode == "on" else "--require-sandbox" if required else "CI=true"
        raise UsageError(
            f"the pull request's code must build and run in a sandbox ({why}), and none can start "
            f"here: {problem}. Fix: {FIX}; or set {ENV}=off to run it unsandboxed, outside CI"
        )
    _warn(
        f"warning: the head builds and runs UNSANDBOXED ({problem}); its code can write this "
        f"checkout and its output. Fix: {FIX}"
    )
    return Policy(False, f"unsandboxed: {problem}")


def isolate_network(box: Policy, server: Path) -> Policy:
    """`box` once the head's server is built (its launcher, `server`): a sandboxed head whose
    server takes --listen-fd runs with a network of its own (NET_NOTE); one without it would
    share the host's network, base's port included: refused under --require-sandbox, else
    said first in the note (SHARED_NOTE) and warned. An unsandboxed head is `box` as it is."""
    if not box.enabled:
        return box
    if takes_listen_fd(server):
        return dataclasses.replace(box, note=box.note + NET_NOTE)
    if box.required:
        raise UsageError(
            f"the head's server ({server}) has no {LISTEN_FD} (its --help does not list it), so it would "
            f"bind its own port on the network base's server shares, and --require-sandbox wants it "
            f"isolated. Fix: {NET_FIX}"
        )
    _warn(
        f"warning: the head's server has no {LISTEN_FD}: it runs on the shared network, where it "
        f"can reach base's port and any address. Fix: {NET_FIX}"
    )
    return dataclasses.replace(box, note=f"{SHARED_NOTE}; {box.note}")


@functools.cache
def _warn(message: str) -> None:
    print(f"hftbench: {message}", file=sys.stderr, flush=True)


@functools.cache
def probe() -> str | None:
    """None when bwrap can start a sandbox here, a network namespace of its own included, else why
    not (in words). Where it starts only without the hardening (`hardening`), that is left out
    and said in the note."""
    if shutil.which("bwrap") is None:
        return "bwrap (bubblewrap) is not installed"
    # With a network of its own, as a server handed its socket runs (a host or job unit that
    # refuses network namespaces is told here, not by a server that cannot start).
    problem = _try(wrap(["true"], writable=(), own_network=True))
    # A setuid bwrap, or a host that refuses the nested user namespace it makes: the sandbox
    # runs without that fence, and the note says so.
    unfenced = problem and hardening().disable_userns
    if unfenced and _try(wrap(["true"], writable=(), own_network=True, disable_userns=False)) is None:
        _userns_refused.append(f"bwrap could not start with --disable-userns: {problem}")
        hardening.cache_clear()
        return None
    return problem


def _try(cmd: list[str]) -> str | None:
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bwrap did not run ({exc})"
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["no message"])[-1]
        return f"bwrap could not start a sandbox ({last})"
    return None


@dataclass(frozen=True)
class Hardening:
    """What this host's sandbox refuses beyond the filesystem and the namespaces: a nested user
    namespace (bwrap --disable-userns, 0.8.0 on) and the calls of the seccomp filter (SECCOMP);
    `missing` says, in words, what it cannot refuse and why."""

    disable_userns: bool
    seccomp: Path | None
    missing: tuple[str, ...]


@functools.cache
def hardening() -> Hardening:
    missing = []
    try:
        usage = subprocess.run(
            [shutil.which("bwrap") or "bwrap", "--help"], capture_output=True, text=True, timeout=20
        ).stdout
    except (OSError, subprocess.TimeoutExpired):
        usage = ""
    userns = "--disable-userns" in usage and not _userns_refused
    if _userns_refused:
        missing.append(f"nested user namespaces ({_userns_refused[0]})")
    elif not userns:
        version = usage and _bwrap_version()
        missing.append(
            f"nested user namespaces ({version or 'this bwrap'} has no --disable-userns: 0.8.0 on has)"
        )
    seccomp = SECCOMP if SECCOMP.is_file() and SECCOMP.stat().st_size > 0 else None
    if seccomp is None:
        missing.append(f"the seccomp filter ({SECCOMP} not built: {SECCOMP_FIX})")
    elif not os.access(BASH, os.X_OK):  # what opens the filter for bwrap (SECCOMP_OPEN)
        seccomp = None
        missing.append(f"the seccomp filter ({BASH} not found: apt-get install bash)")
    return Hardening(userns, seccomp, tuple(missing))


_userns_refused: list[str] = []  # why bwrap could not start with --disable-userns (probe)


def _bwrap_version() -> str:
    with contextlib.suppress(OSError, subprocess.TimeoutExpired):
        bwrap = shutil.which("bwrap") or "bwrap"
        return subprocess.run([bwrap, "--version"], capture_output=True, text=True, timeout=20).stdout.strip()
    return ""


def hardening_note() -> str:
    """The note's words for `hardening`: what the sandbox refuses, or what it could not."""
    h = hardening()
    if not h.missing:
        return HARDENED_NOTE
    return f"; NOT refused here: {', '.join(h.missing)}"


def hidden(extra: Iterable[Path] = ()) -> list[Path]:
    """The existing paths a sandbox covers with an empty tmpfs (a file: with /dev/null, whose
    reads it refuses): the runner's secrets and settings (/etc/hft-runner, /etc/hft-bench),
    $RUNNER_TEMP, the runner's own folder (runner_folder), the harness's output ($OUT and
    `extra`: ab's --out), the job user's home ($HOME and the passwd one) and what
    HFT_SANDBOX_HIDE names (colon-separated). Resolved; never /; one inside another dropped."""
    names: list[str | Path | None] = [*RUNNER_SECRETS, os.environ.get("RUNNER_TEMP"), runner_folder()]
    names += [os.environ.get("OUT"), *extra, *_homes()]
    names += os.environ.get(HIDE_ENV, "").split(":")
    paths = []
    for name in names:
        if not name:
            continue
        path = _real(name)
        if path != Path("/") and path.exists() and path not in paths:
            paths.append(path)
    return [p for p in paths if not any(p != q and p.is_relative_to(q) for q in paths)]


def runner_folder() -> Path | None:
    """The GitHub runner's folder this job runs from: the nearest folder above the job's workspace
    (or this process's folder) that holds the runner's `.runner` or `.credentials` (its
    registration and its key: /var/lib/hft-runner/jobs/<job>/runner under install-runner.sh).
    None outside a runner."""
    for start in (os.environ.get("GITHUB_WORKSPACE"), os.environ.get("RUNNER_WORKSPACE"), os.getcwd()):
        if not start:
            continue
        here = _real(start)
        for folder in (here, *here.parents):
            if folder != Path("/") and any((folder / mark).exists() for mark in RUNNER_MARKS):
                return folder
    return None


def _homes() -> list[str]:
    """The job user's home: $HOME (a runner job's own, fresh) and its passwd entry's."""
    homes = [os.environ.get("HOME", "")]
    with contextlib.suppress(KeyError):
        homes.append(pwd.getpwuid(os.getuid()).pw_dir)
    return [h for h in homes if h]


def toolchain(env: dict[str, str]) -> tuple[tuple[Path, ...], tuple[Path, ...]]:
    """(hidden, read-only) for a build with `env` (build_env): its cargo home covered and each
    entry of it bound back read-only but cargo's credentials (`credentials`,
    `credentials.toml`: a registry token), and its rustup home read-only; those that exist."""
    hide, readonly = [], []
    cargo = Path(os.path.realpath(env["CARGO_HOME"])) if env.get("CARGO_HOME") else None
    if cargo is not None and cargo.is_dir():
        hide.append(cargo)
        readonly += [e for e in sorted(cargo.iterdir()) if e.name not in CARGO_CREDENTIALS]
    rustup = Path(os.path.realpath(env["RUSTUP_HOME"])) if env.get("RUSTUP_HOME") else None
    if rustup is not None and rustup.is_dir():
        readonly.append(rustup)
    return tuple(hide), tuple(readonly)


def wrap(
    cmd: list[str],
    *,
    writable: tuple[Path, ...],
    readonly: tuple[Path, ...] = (),
    hide: tuple[Path, ...] = (),
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    own_network: bool = False,
    disable_userns: bool | None = None,
) -> list[str]:
    """`cmd` under bwrap: everything read-only but `writable` (bound read-write) and a private
    /dev, `readonly` read-only again inside those; what `hidden(hide)` names covered by an
    empty, read-only tmpfs first (`writable` and `readonly` are bound back inside it); its own
    pid namespace, and with `own_network` its own network namespace (a loopback of its own,
    nothing else); a user namespace in which it can make no other (`disable_userns`, default:
    where bwrap can) and the seccomp filter where it is built (`hardening`); the environment is
    exactly `env`. Descriptors it inherits open (not close-on-exec) stay open in `cmd`: bwrap
    passes them through."""
    fences = hardening()
    userns = fences.disable_userns if disable_userns is None else disable_userns
    args = [
        shutil.which("bwrap") or "/usr/bin/bwrap",
        "--die-with-parent",
        "--unshare-pid",
        "--unshare-ipc",
        "--new-session",
    ]
    if userns:  # --disable-userns needs a user namespace of bwrap's own (root's too)
        args += ["--unshare-user", "--disable-userns"]
    args += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    if own_network:
        args.append("--unshare-net")
    if os.geteuid() == 0:  # bwrap keeps root's capabilities unless told (one could remount /)
        args += ["--cap-drop", "ALL"]
    args += _mounts(writable, readonly, hidden(hide))
    args.append("--clearenv")
    for name, value in (env or {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}).items():
        args += ["--setenv", name, value]
    args += ["--chdir", str(cwd or "/"), "--", *cmd]
    # `env -i`: bwrap's own environment must be empty too, as its pid 1 in the sandbox keeps
    # it (readable in /proc/1/environ from inside); --clearenv only clears the command's.
    if fences.seccomp is None:
        return ["/usr/bin/env", "-i", *args]
    # bwrap reads the filter from a descriptor: bash opens it on a free one (>= 10, never the
    # socket a server is handed) outside the sandbox, and bwrap closes it once read.
    return ["/usr/bin/env", "-i", BASH, "-c", SECCOMP_OPEN, "hft-sandbox", str(fences.seccomp), *args]


def _mounts(writable: tuple[Path, ...], readonly: tuple[Path, ...], hide: list[Path]) -> list[str]:
    """bwrap's mount options, shallowest path first, so what is bound inside a covered folder
    (or a read-only path inside a writable one) is mounted after it and shows; the hiding tmpfs
    made read-only last, once bwrap has made its mount points in it. The harness's own
    checkout, where a hidden home holds it (a local run), is bound back read-only: base's
    code, which the pull request has anyway, and the tools a local run's tests start."""
    bound = {_real(p) for p in (*writable, *readonly)}
    hide = [h for h in hide if h not in bound]  # bound back whole: nothing of it to cover
    homes = {_real(h) for h in _homes()}
    if any(HARNESS.is_relative_to(h) for h in hide if h in homes) and HARNESS not in readonly:
        readonly = (HARNESS, *readonly)
    mounts: list[tuple[Path, list[str]]] = []
    for path in hide:
        cover = ["--tmpfs", str(path)] if path.is_dir() else ["--ro-bind", "/dev/null", str(path)]
        mounts.append((path, cover))
    # Bound at their real paths: a link on the way could lie in a covered folder.
    mounts += [(p, ["--bind", str(p), str(p)]) for p in map(_real, writable)]
    mounts += [(p, ["--ro-bind", str(p), str(p)]) for p in map(_real, readonly)]
    mounts.sort(key=lambda m: len(m[0].parts))  # stable: covers, then writable, then read-only
    args = [a for _, m in mounts for a in m]
    return args + [a for p in hide if p.is_dir() for a in ("--remount-ro", str(p))]


def _real(path: str | Path) -> Path:
    return Path(os.path.realpath(path))


def build_env(home: Path, target: Path, tmp: Path | None = None) -> dict[str, str]:
    """A build's environment, the same for both sides: BUILD_ENV from this process's, the cargo
    and rustup homes resolved before HOME is replaced (they stay read-only in a sandbox), a
    scratch HOME, the target dir, and TMPDIR where /tmp is read-only (a sandbox)."""
    env = {k: v for k, v in os.environ.items() if k in BUILD_ENV and not any(w in k for w in SECRET_WORDS)}
    real_home = Path(os.environ.get("HOME") or Path.home())
    env["CARGO_HOME"] = os.environ.get("CARGO_HOME") or str(real_home / ".cargo")
    env["RUSTUP_HOME"] = os.environ.get("RUSTUP_HOME") or str(real_home / ".rustup")
    env.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
    env.update(HOME=str(home), CARGO_TARGET_DIR=str(target), **({"TMPDIR": str(tmp)} if tmp else {}))
    return env


def server_launcher(real: Path, launcher: Path, hide: tuple[Path, ...] = ()) -> None:
    """Write `launcher`, an executable that runs `real` (the head's built server) in the
    sandbox with the arguments it is given. Every caller that starts a side's bin/hft-server
    (runs, duets, profiles, --version / --help) then runs the head's inside without knowing it;
    the server reads no environment, so it gets only PATH and a HOME that does not exist.
    It runs in a network namespace of its own (its own `lo`, nothing else: served through the
    socket server.py passes as --listen-fd, or asked --help / --version) unless told to bind a
    port itself (`--addr`: a build from before --listen-fd, or a network scenario's server,
    which binds in the namespace it is started in): then in the host's. What `hidden(hide)`
    names is covered (`hide`: the harness's output, where `real` lies: it alone is bound back)."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": "/nonexistent", "LANG": "C.UTF-8"}
    box = {"writable": (), "readonly": (real.resolve(),), "hide": hide, "env": env}
    shared = shlex.join(wrap([str(real.resolve())], **box))
    own = shlex.join(wrap([str(real.resolve())], **box, own_network=True))
    launcher.parent.mkdir(parents=True, exist_ok=True)
    launcher.write_text(
        f"#!/bin/sh\n{LAUNCHER_MARK}{real.resolve()}\n"
        "# Told to bind a port itself (--addr), on the host's network; else a network of\n"
        "# its own: only its own lo, and the socket it is handed (--listen-fd).\n"
        'for arg in "$@"; do\n'
        f'  case "$arg" in --addr|--addr=*) exec {shared} "$@" ;; esac\n'
        "done\n"
        f'exec {own} "$@"\n'
    )
    launcher.chmod(0o755)


def serve_inside(side_dir: Path) -> None:
    """Make side_dir/bin/hft-server (a trusted build: base's) a launcher of itself in the
    sandbox, so both sides of a comparison serve alike: the same pid namespace, environment
    and launcher in front of each server, and the head's isolation no difference between them."""
    real = side_dir / "sandboxed" / "hft-server"
    real.parent.mkdir(exist_ok=True)
    shutil.move(side_dir / "bin" / "hft-server", real)
    server_launcher(real, side_dir / "bin" / "hft-server", hide=(side_dir.parent,))


def scratch_for(shared_target: Path, seed: bool = True) -> Path:
    """A fresh scratch folder for sandboxed builds (target/, home/, tmp/), beside the shared
    target dir; with `seed`, its target is a copy of the shared one (dependencies need not
    compile again; cargo's fingerprints decide what is fresh). The caller removes it
    (remove_scratch)."""
    root = shared_target.parent / "sandbox"
    root.mkdir(parents=True, exist_ok=True)
    scratch = Path(
        subprocess.run(
            ["mktemp", "-d", f"{root}/build.XXXXXX"], capture_output=True, text=True, check=True
        ).stdout.strip()
    )
    if seed and shared_target.is_dir():
        copy = ["cp", "-a", "--reflink=auto", str(shared_target), str(scratch / "target")]
        subprocess.run(copy, check=True)
    (scratch / "target").mkdir(exist_ok=True)
    (scratch / "home").mkdir()
    return scratch


def remove_scratch(scratch: Path | None) -> None:
    if scratch is not None:
        shutil.rmtree(scratch, ignore_errors=True)
