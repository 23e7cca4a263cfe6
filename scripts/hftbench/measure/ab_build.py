"""ab's build step: each side's server built in its exported tree (worktrees.py), the head's
in the sandbox where there is one (sandbox.py), the clients linked beside it (cell.py), then
two checks of what was built: whether each server takes the harness's socket (--listen-fd),
and whether a head that changes server/ serves base's very binary. commands/ab.py runs it
before any round, on its Job (BuildJob says what of it this step reads and sets)."""

from __future__ import annotations

import dataclasses
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from . import sandbox, worktrees
from . import server as server_mod
from .cell import link_clients
from .rig import Rig
from .server import takes_listen_fd
from .worktrees import build_server


class BuildJob(Protocol):
    """What the build step reads of ab's Job, and what it sets (builds, scratch, sandboxing)."""

    repo: Path  # the repository holding both commits
    root: Path  # this checkout: its target/ab is the shared cargo target dir
    out: Path  # ab's folder: base/, head/
    rig: Rig  # its plan's clients are linked beside each server
    clients_bin: Path
    sha: dict[str, str]  # side -> commit
    build_cmd: str
    build_timeout_s: float | None
    sandboxing: sandbox.Policy
    scratch: Path | None
    builds: dict[str, float]  # side -> build wall time (s)

    def side_bin(self, side: str) -> Path: ...


def build(job: BuildJob, say: Callable[[str], None]) -> None:
    """Build each side's server in its exported tree (an A/A builds once and copies)."""
    target = job.root / "target" / "ab"
    for side in ("base", "head"):
        (job.out / side).mkdir(parents=True, exist_ok=True)
        if side == "head" and job.sha["head"] == job.sha["base"]:
            job.side_bin("head").mkdir(exist_ok=True)
            shutil.copy2(job.side_bin("base") / "hft-server", job.side_bin("head") / "hft-server")
            job.builds["head"] = 0.0
        else:
            if side == "head" and job.sandboxing.enabled:  # seeded from the target base just built
                job.scratch = sandbox.scratch_for(target, seed="cargo" in job.build_cmd)
            how = "" if side == "base" else " in the sandbox" if job.scratch else f" ({job.sandboxing.note})"
            say(f"building {side} {job.sha[side][:10]}{how} …")
            job.builds[side] = build_server(
                job.repo,
                job.sha[side],
                job.out / side,
                job.build_cmd,
                target,
                scratch=job.scratch,
                timeout_s=job.build_timeout_s,
            )
            if side == "base" and job.sandboxing.enabled:  # both sides serve alike (an A/A copies it)
                sandbox.serve_inside(job.out / "base")
        link_clients(job.clients_bin, job.side_bin(side), job.rig.plan.clients)
    isolate_servers(job, say)
    same_server(job, say)
    plan = job.rig.plan
    say(
        f"built in {sum(job.builds.values()):.0f} s; measuring "
        f"{', '.join(s.name for s in plan.scenarios)} × {', '.join(plan.clients)}"
    )


def isolate_servers(job: BuildJob, say: Callable[[str], None]) -> None:
    """Each side's server is handed a socket the harness binds (--listen-fd, server.py) where its
    build knows the flag, and in the sandbox then has a network of its own. A head without it
    is refused under --require-sandbox, and named in the sandbox note otherwise; a base from
    before the flag binds its own port, as it always did, and the run says so."""
    job.sandboxing = sandbox.isolate_network(job.sandboxing, job.side_bin("head") / "hft-server")
    if not takes_listen_fd(job.side_bin("base") / "hft-server"):
        say(
            f"base {job.sha['base'][:10]}'s server has no --listen-fd (its commit predates it): it binds "
            "its own port on the host's network, as before"
        )


def same_server(job: BuildJob, say: Callable[[str], None]) -> None:
    """A head whose pull request changes server/ and yet serves base's very binary (a build
    script that copies it, say) would compare base with itself: the sandbox note names it, and
    the verdict's method text with it. The binaries behind the launchers are compared."""
    if job.sha["head"] == job.sha["base"]:
        return
    digests = {
        s: server_mod.sha256(server_mod.real_binary(job.side_bin(s) / "hft-server")) for s in ("base", "head")
    }
    changed = worktrees.git_output(
        job.repo, "diff", "--name-only", job.sha["base"], job.sha["head"], "--", "server/"
    )
    if digests["base"] != digests["head"] or not changed:
        return
    note = (
        f"head serves base's binary: its hft-server is byte-identical to base's (sha256 "
        f"{digests['base'][:12]}) though the pull request changes server/ ({len(changed.splitlines())} files)"
    )
    say(f"warning: {note}")
    job.sandboxing = dataclasses.replace(job.sandboxing, note=f"{note}; {job.sandboxing.note}")
