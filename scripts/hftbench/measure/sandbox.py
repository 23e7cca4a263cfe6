"""The pull request's code, built and served where it cannot write anything of the harness.

A head commit brings code that runs on the runner: its build scripts (`build.rs`,
`.cargo/config.toml`'s rustc-wrapper and linker, proc-macros) and then its server. Run as the
harness's user in the job's environment, that code could rewrite the base checkout (scripts/,
the editable hftbench, .venv, bin/client-*), base's built server, $OUT, $RUNNER_TEMP and the
folder uploaded as the leg's artifact, read the job's tokens, and leave a process that lives
past the verdict. So every head build and head server runs under bubblewrap (`bwrap`):

- the whole filesystem read-only (`--ro-bind / /`, /tmp included: the harness's own files
  and scripts may live there); writable only what that build needs (its source tree, a plain
  folder exported from the clone with no .git (worktrees.py), its own scratch cargo target
  dir, home and TMPDIR) and a private /dev. What the build writes in its tree stays there:
  the harness runs nothing in it afterwards (no git, no tuning script: the run folders' git
  info is read from the clone by sha, the host fingerprint from the harness's checkout);
- `--unshare-pid --die-with-parent`: when the command ends, or the harness kills it, every
  process it started dies with it (the kernel kills a pid namespace with its first process);
- `--clearenv`: a short allow-list (PATH, HOME=scratch, the cargo and rustup homes, read-only);
  no GITHUB_TOKEN, ACTIONS_RUNTIME_TOKEN or anything else of the job;
- the server has a network namespace of its own (`--unshare-net`: only its own `lo`, no
  route out, no port of the host's, base's included). The client, outside, reaches it through
  the one socket the harness binds on the host's loopback and hands in as `--listen-fd`
  (server.py): a socket belongs to the namespace it was made in, so it still takes the host's
  connections. Only a server told to bind its own port (`--addr`: a build from before the
  flag, a base older than it, or a network scenario's server in its namespace) gets the
  host's network; `--help` and `--version` run without one too. A head without the flag is
  refused under `--require-sandbox` and named in the note otherwise (`isolate_network`).
  Builds share the network (cargo fetches beforehand).

`HFT_SANDBOX`: `on` requires it, `off` switches it off (said in the verdict; refused with
`--require-sandbox`), unset = `auto`: used when it works; where it cannot start (no bwrap,
user namespaces refused) a CI job (`CI=true`) is refused with the fix, and a local run warns
once and runs unsandboxed. The verdict's "How this was decided" says which it was.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from ..errors import UsageError
from .server import LAUNCHER_MARK, LISTEN_FD, takes_listen_fd

ENV = "HFT_SANDBOX"
FIX = (
    "install bubblewrap (`make deps`, or hft/runner/provision-host on a runner) and allow "
    "unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1, and on Ubuntu "
    "kernel.apparmor_restrict_unprivileged_userns=0)"
)
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
    note: str  # ON_NOTE (+ NET_NOTE or SHARED_NOTE), or "unsandboxed: <why>" (HFT_SANDBOX=off, ...)
    required: bool = False  # --require-sandbox: a head the sandbox cannot isolate is refused

    def to_json(self) -> dict[str, object]:
        return {"head": "bubblewrap" if self.enabled else "none", "note": self.note}


ON_NOTE = (
    "the head was built and served in a bubblewrap sandbox: the filesystem read-only but for its "
    "own source tree and scratch dirs, no job token in its environment, its processes killed with it"
)
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
        return Policy(True, ON_NOTE, required)
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
    not (in words)."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return "bwrap (bubblewrap) is not installed"
    try:
        # With a network of its own, as a server handed its socket runs (a host or job unit that
        # refuses network namespaces is told here, not by a server that cannot start).
        proc = subprocess.run(
            wrap(["true"], writable=(), own_network=True), capture_output=True, text=True, timeout=20
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bwrap did not run ({exc})"
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["no message"])[-1]
        return f"bwrap could not start a sandbox ({last})"
    return None


def wrap(
    cmd: list[str],
    *,
    writable: tuple[Path, ...],
    readonly: tuple[Path, ...] = (),
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    own_network: bool = False,
) -> list[str]:
    """`cmd` under bwrap: everything read-only but `writable` (bound read-write) and a private
    /dev, `readonly` read-only again inside those; its own pid namespace, and with
    `own_network` its own network namespace (a loopback of its own, nothing else); the
    environment is exactly `env`. Descriptors it inherits open (not close-on-exec) stay open
    in `cmd`: bwrap passes them through."""
    # `env -i`: bwrap's own environment must be empty too, as its pid 1 in the sandbox keeps
    # it (readable in /proc/1/environ from inside); --clearenv only clears the command's.
    args = [
        "/usr/bin/env",
        "-i",
        shutil.which("bwrap") or "/usr/bin/bwrap",
        "--die-with-parent",
        "--unshare-pid",
        "--unshare-ipc",
        "--new-session",
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
    ]
    if own_network:
        args.append("--unshare-net")
    if os.geteuid() == 0:  # bwrap keeps root's capabilities unless told (one could remount /)
        args += ["--cap-drop", "ALL"]
    for path in writable:
        args += ["--bind", str(path), str(path)]
    for path in readonly:
        args += ["--ro-bind", str(path), str(path)]
    args.append("--clearenv")
    for name, value in (env or {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}).items():
        args += ["--setenv", name, value]
    args += ["--chdir", str(cwd or "/"), "--", *cmd]
    return args


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


def server_launcher(real: Path, launcher: Path) -> None:
    """Write `launcher`, an executable that runs `real` (the head's built server) in the
    sandbox with the arguments it is given. Every caller that starts a side's bin/hft-server
    (runs, duets, profiles, --version / --help) then runs the head's inside without knowing it;
    the server reads no environment, so it gets only PATH and a HOME that does not exist.
    It runs in a network namespace of its own (its own `lo`, nothing else: served through the
    socket server.py passes as --listen-fd, or asked --help / --version) unless told to bind a
    port itself (`--addr`: a build from before --listen-fd, or a network scenario's server,
    which binds in the namespace it is started in): then in the host's."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": "/nonexistent", "LANG": "C.UTF-8"}
    shared = shlex.join(wrap([str(real.resolve())], writable=(), env=env))
    own = shlex.join(wrap([str(real.resolve())], writable=(), env=env, own_network=True))
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
    server_launcher(real, side_dir / "bin" / "hft-server")


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
