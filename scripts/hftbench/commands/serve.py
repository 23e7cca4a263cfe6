"""`hftbench serve [--bin DIR] [--log PATH] [--server-flag F] [--server-cpus LIST] -- COMMAND [ARG...]`

Starts bin/hft-server on a free port (server.Server, the one way the suite starts it), runs
COMMAND with HFTBENCH_SERVER_URL (http://127.0.0.1:PORT) and HFTBENCH_SERVER_PID in its
environment, stops the server, and exits with COMMAND's status. Shell drivers
(hft/scripts/compare_performance.sh, clients/hft/tests/run_integration.sh) run themselves
under it, so no script polls the server's log for its listening line.

Exit status: COMMAND's; 2 when the server does not start (the message names the binary,
its exit status and the last lines of its log) or COMMAND cannot be run.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path

from .. import paths
from ..errors import UsageError
from ..measure import placement as placement_mod
from ..measure.server import Server, ServerError
from . import flags
from .base import Command

URL_VAR = "HFTBENCH_SERVER_URL"
PID_VAR = "HFTBENCH_SERVER_PID"


class ServeCommand(Command):
    name = "serve"
    help = "run a command against a fresh hft-server"

    @classmethod
    def add_arguments(cls, p) -> None:
        flags.add(p, cls, ("bin",))
        p.add_argument(
            "--log",
            type=Path,
            help="the server's log (default: a temporary file, kept only when the server fails)",
        )
        flags.add(p, cls, ("server_flag", "server_cpus"))
        p.add_argument(
            "argv",
            nargs=argparse.REMAINDER,
            metavar="-- COMMAND",
            help="the command to run against the server",
        )

    def run(self) -> int:
        args = self.args
        command = args.argv[1:] if args.argv[:1] == ["--"] else args.argv
        if not command:
            example = "hftbench serve -- curl $HFTBENCH_SERVER_URL/health"
            raise UsageError(f"no command to run: pass it after --, e.g. `{example}`")
        bins = (args.bins or paths.bin_dir(self.root)).resolve()
        cpus = placement_mod.resolve(args.server_cpus, None).server
        scratch = None if args.log else Path(tempfile.mkdtemp(prefix="hftbench-serve-"))
        server = Server(bins / "hft-server", args.log or scratch / "server.log", args.server_flag, cpus=cpus)
        try:
            server.start()
        except ServerError as exc:
            server.stop()
            raise UsageError(str(exc)) from None  # the log stays: the message names it
        assert server.proc is not None
        env = {**os.environ, URL_VAR: server.url, PID_VAR: str(server.proc.pid)}
        # SIGTERM (a cancelled job, `timeout`) ends the command, then the server, as Ctrl-C does.
        previous = signal.signal(signal.SIGTERM, signal.default_int_handler)
        try:
            return subprocess.run(command, env=env, check=False).returncode
        except OSError as exc:
            raise UsageError(
                f"cannot run {command[0]!r} ({exc.strerror}): pass a command on PATH or a path"
            ) from None
        finally:
            signal.signal(signal.SIGTERM, previous)
            server.stop()
            if scratch is not None:
                shutil.rmtree(scratch, ignore_errors=True)
