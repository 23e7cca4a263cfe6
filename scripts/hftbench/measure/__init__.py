"""measure: running the server and the clients, and what a run records. Stage 1: imports
only the shared vocabulary (the package's top), never judge, publish, store or commands.

- `ab_build.py`      ab's build step: each side's server built, clients linked, two checks of them
- `capacity.py`      this runner's capacity, and the rate of the load series (a share of it)
- `cell.py`          one cell: a client run once, its timeout, result validation, the /stats cross-check
- `cgroup_parsing.py` the cgroup files read (pure): layout, cpu.stat, memory, limits from the environment
- `duet.py`          one duet round: both builds' servers at once, one client-hft interleaving orders
- `fingerprint.py`   host fingerprint, git state, tool versions, the runner id
- `lateness.py`      open loop's send lateness pooled over repeats, and when a generator fell behind (pure)
- `netcells.py`      the cells of the network scenarios, each over its path
- `netpath.py`       a network scenario's path: the server in its own namespace, veths, hft-linkem
- `placement.py`     which CPUs the server and the clients run on (--server-cpus / --client-cpus)
- `plan.py`          what a run will do: suite, scenarios and clients resolved against bench-config and bin/
- `proc_sampler.py`  the server's RSS, CPU and connections during a soak, from /proc
- `procs.py`         start a child and wait for its ready line (server, floor, linkem); stop it
- `profile.py`       ab's differential profile of head against base (perf, flame graph)
- `progress.py`      the progress bar with ETA, or plain lines under CI / --quiet
- `run.py`           a run: a plan's cells in order, files written as they arrive (run_plan)
- `server.py`        start / stop `bin/hft-server` on a free port, health, /stats, /stats/reset
- `sandbox.py`       where a pull request's build and server run: bwrap, nothing of the harness writable
- `worktrees.py`     a commit exported from the clone (no .git), its server built (ab, bisect); git_cmd
"""
