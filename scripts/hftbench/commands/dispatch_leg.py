"""`hftbench dispatch-leg [--check]`: a run started by hand (bench.yml's dispatch-bench job).
The workflow_dispatch inputs arrive as environment variables (never pasted into a script), are
checked, and become `hftbench run` flags; the run folder is OUT/runs/run_*/, listed in
OUT/manifest.json for publish, and its report goes to the job's step summary.

  --check   only check the inputs and what they need of the runner (bench.yml's first step,
            before the build: it needs only python3, so a bad run fails at once)

Inputs: OUT, SUITE (default stress; soak = the 10-minute soak and its drift), CLIENTS, ORDERS,
CONNECTIONS, RATE, DURATION, REPEATS.
"""

from __future__ import annotations

import os
import pwd
import re
import sys
from collections.abc import Mapping
from pathlib import Path

from .. import ci_job, manifest
from ..errors import UsageError
from .base import Command

UINT = re.compile(r"^[0-9]+$")
NUMBER = re.compile(r"^[0-9]+([.][0-9]+)?$")
# input -> (run flag, its pattern, what it must be)
INPUTS = {
    "ORDERS": ("--orders", UINT, "a whole number"),
    "CONNECTIONS": ("--connections", UINT, "a whole number"),
    "RATE": ("--rate", NUMBER, "a number"),
    "DURATION": ("--duration", NUMBER, "a number"),
    "REPEATS": ("--repeat", UINT, "a whole number"),
}


def run_flags(env: Mapping[str, str], uid: int, user: str) -> list[str]:
    """The inputs as `hftbench run` flags, or UsageError naming the input and what it must be."""
    suite = env.get("SUITE") or "stress"
    if not re.fullmatch(r"[a-z0-9-]+", suite):
        raise UsageError(f"input suite must be a suite name of bench-config/scenarios.yaml (got '{suite}')")
    # The network suite builds network namespaces, veth pairs and a link emulator: root only
    # (netpath.py). The runner's jobs run as a user without them, on purpose: refused at once,
    # not after a 10-minute build.
    if suite == "network" and uid != 0:
        raise UsageError(
            "suite network needs root (network namespaces and veths: CAP_SYS_ADMIN, CAP_NET_ADMIN), which "
            f"the runner's job user {user} lacks by design; run it on the runner machine by hand: "
            "sudo .venv/bin/hftbench run --suite network (hft/runner/README.md)"
        )
    flags = ["--suite", suite, "--quiet"]
    clients = env.get("CLIENTS", "")
    if clients:
        if not re.fullmatch(r"[a-z]+(,[a-z]+)*", clients):
            raise UsageError(f"input clients must be a comma list like rust,c,go (got '{clients}')")
        flags += ["--clients", clients]
    for name, (flag, pattern, must) in INPUTS.items():
        value = env.get(name, "")
        if value:
            if not pattern.match(value):
                raise UsageError(f"input {name.lower()} must be {must} (got '{value}')")
            flags += [flag, value]
    return flags


def this_user() -> tuple[int, str]:
    uid = os.geteuid()
    try:
        return uid, pwd.getpwuid(uid).pw_name
    except KeyError:
        return uid, str(uid)


class DispatchLegCommand(Command):
    name = "dispatch-leg"
    help = "CI: a run by hand (bench.yml dispatch-bench): the inputs checked, then hftbench run"
    raw_description = True

    @classmethod
    def add_arguments(cls, p) -> None:
        p.add_argument("--check", action="store_true", help="only check the inputs (before the build)")

    def run(self) -> int:
        flags = run_flags(os.environ, *this_user())
        if self.args.check:
            self.say(f"inputs checked: hftbench run {' '.join(flags)}")
            return 0
        from ..measure.run import new_run_dir
        from .run import RunCommand

        out = Path(ci_job.required(os.environ, "OUT", "output folder")).absolute()
        run = new_run_dir(out / "runs")
        run.rmdir()  # `hftbench run --out` creates it
        self.say(f"hftbench run {' '.join(flags)} --out {run}")
        code = RunCommand.invoke([*flags, "--out", str(run)])
        if (run / "report.md").is_file():
            ci_job.summary((run / "report.md").read_text())
        if (run / "results.json").is_file():
            entries = manifest.Manifest()
            entries.add(run, manifest.RUN, out)
            entries.write(out)
        if code != 0:
            print(
                f"hftbench dispatch-leg: hftbench run exited {code}; the run folder keeps what was measured",
                file=sys.stderr,
            )
            return 2
        return 0
