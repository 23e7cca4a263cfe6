"""Entry point: parse flags, check the server, run, write the result, exit 0 / 1 / 2."""

import asyncio
import os
import sys

from . import args


def main(argv: list[str]) -> int:
    try:
        cfg = args.parse_args(argv)
        if cfg.output is not None:
            os.makedirs(os.path.dirname(os.path.abspath(cfg.output)), exist_ok=True)
    except args.UsageError as err:
        args.print_usage_error(err)
        return 2
    except OSError as err:
        msg = f"--output {cfg.output!r}: {err.strerror}; pass a writable path"
        args.print_usage_error(args.UsageError(msg))
        return 2
    # Imported after the flags are checked: aiohttp and hdrh take ~0.3 s to import, and a
    # bad flag should exit 2 at once.
    from . import result, runner, worker

    factory, loop_name = runner.event_loop_factory()
    with asyncio.Runner(loop_factory=factory) as loop_runner:
        reason = loop_runner.run(worker.check_reachable(cfg))
    if reason is not None:
        host, port = cfg.host_port
        fix = "start bin/hft-server or pass --url"
        line = f"{args.PROG}: cannot connect to {host}:{port} ({reason}); {fix}"
        print(line, file=sys.stderr, flush=True)
        return 2
    # The check's event loop is closed before the worker processes fork.
    outcome = runner.run(cfg)
    tally = outcome.tally  # merged by the stats stage
    doc = result.build_result(
        cfg,
        started_wall_ns=outcome.started_wall_ns,
        duration_s=outcome.duration_s,
        ok=tally.ok,
        error_kinds=tally.errors,
        latency=tally.latency,
        uncorrected=tally.uncorrected,
        pacing=tally.pacing,
        lateness=tally.lateness,
        interrupted=outcome.interrupted,
        extra={
            **result.library_versions(),
            "event_loop": loop_name,
            "workers": cfg.connections,  # one coroutine per connection
            "processes": outcome.processes,  # event loops, one per core (runner.py)
        },
    )
    hlog = None
    if cfg.output is not None:
        hlog = result.hlog_text(outcome.started_wall_ns, outcome.duration_s, tally.latency, tally.uncorrected)
    result.write_outputs(doc, cfg.output, hlog)
    return result.exit_status(doc)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
