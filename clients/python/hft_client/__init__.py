"""hft_client: the Python load client of hft-bench (asyncio + aiohttp).

# Layout

The client reads like every other client: args -> order stream + pacing -> workers ->
runner -> stats (merge) -> result (clients/README.md).

- ``args``    flags -> ``Config``; every bad value raises ``UsageError`` naming the flag and the fix
- ``order``   the order stream of clients/README.md: ``(seed, k)`` -> JSON body bytes
- ``pacing``  open-loop schedule and the sleep-then-spin wait for an intended send time
- ``worker``  one coroutine per connection running ``worker_loop`` over the tickets of the
              ``Phase`` (closed: the shared counter; open: the schedule), each recording into
              its own ``stats.Tally``; ``run_share`` runs one process's connections through
              the phases, one ``Watchdog`` applies --timeout-ms
- ``runner``  one worker process (event loop, aiohttp session) per core; shared closed-loop
              order counter; "ready" / "go" / "stop" / "done" over pipes
- ``stats``   each worker's ``Tally``, the merge of tallies, the latency summary in us (hdrh)
- ``result``  pure functions: merged histograms + counters -> the result document, ``.hlog``
- ``__main__`` the thin entry point: parse, check the server, run, write, exit status
"""

__version__ = "0.1.0"
