"""`hftbench pool --suite S`: the runners of bench-config/pool.yaml that take a suite, as the
CI matrix (legs=, max_parallel=). Runs on the hosted runner: no numpy."""

from __future__ import annotations

import json
import os
from dataclasses import asdict

from .. import paths, pool
from ..errors import UsageError
from . import flags
from .base import Command


class PoolCommand(Command):
    name = "pool"
    help = "the runners of the pool that take a suite: the CI matrix"
    description = pool.__doc__

    @classmethod
    def add_arguments(cls, p) -> None:
        p.add_argument("--suite", required=True, help="suite of bench-config/scenarios.yaml, e.g. pr")
        flags.add(p, cls, ("pool", "github_output"))

    def run(self) -> int:
        args = self.args
        runners = pool.load_pool(args.pool or paths.pool_file(self.root))
        legs = runners.legs(args.suite)
        lines = [
            f"legs={json.dumps([asdict(leg) for leg in legs])}",
            f"max_parallel={runners.max_parallel or len(legs)}",
        ]
        if args.github_output:
            target = os.environ.get("GITHUB_OUTPUT")
            if not target:
                raise UsageError("--github-output: $GITHUB_OUTPUT is not set (run it as a workflow step)")
            with open(target, "a") as out:
                out.write("\n".join(lines) + "\n")
        print("\n".join(lines))
        return 0
