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
    from . import processes, result, worker

    factory, loop_name = processes.event_loop_factory()
    with asyncio.Runner(loop_factory=factory) as runner:
        reason = runner.run(worker.check_reachable(cfg))
    if reason is not None:
        host, port = cfg.host_port
        fix = "start bin/hft-server or pass --url"
        line = f"{args.PROG}: cannot connect to {host}:{port} ({reason}); {fix}"
        print(line, file=sys.stderr, flush=True)
        return 2
    # The check's event loop is closed before the worker processes fork.
    outcome = processes.run(cfg)
    stats = outcome.shares
    latency = worker.merge([s.latency for s in stats])
    open_loop = cfg.rate is not None
    uncorrected = worker.merge([s.uncorrected for s in stats]) if open_loop else None
    pacing = worker.merge([s.pacing for s in stats]) if open_loop else None
    kinds = {k: sum(s.errors[k] for s in stats) for k in worker.ERROR_KINDS}
    doc = result.build_result(
        cfg,
        started_wall_ns=outcome.started_wall_ns,
        duration_s=outcome.duration_s,
        ok=sum(w.ok for w in stats),
        error_kinds=kinds,
        latency=latency,
        uncorrected=uncorrected,
        pacing=pacing,
        interrupted=outcome.interrupted,
        extra={
            **result.library_versions(),
            "event_loop": loop_name,
            "workers": cfg.connections,  # one coroutine per connection
            "processes": outcome.processes,  # event loops, one per core (processes.py)
        },
    )
    hlog = None
    if cfg.output is not None:
        hlog = result.hlog_text(outcome.started_wall_ns, outcome.duration_s, latency, uncorrected)
    result.write_outputs(doc, cfg.output, hlog)
    return result.exit_status(doc)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
