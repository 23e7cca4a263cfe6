"""hftbench: the hft-bench orchestrator (ARCHITECTURE.md, Contracts 3 and 4).

# Layout

One module per stage or subcommand; `cli.py` only parses flags and dispatches.

- `cli.py`          the `hftbench` entry point and the subcommand registry
- `paths.py`        where the repository, `bin/` and `bench-config/` are
- `roster.py`       `bench-config/clients.yaml`: the load clients, one line each (errors name file:line)
- `config.py`       load and validate `bench-config/scenarios.yaml` (errors name file:line)
- `schema.py`       validate a client result against `bench-config/schema/result.schema.json`
- `results.py`      typed view of a results folder (results.json + per-client JSON); read by the gate
- `server.py`       start / stop `bin/hft-server` on a free port, health, /stats, /stats/reset
- `procs.py`        start a child and wait for its ready line (server, floor, linkem); stop it
- `serve.py`        `serve` subcommand: a command run against a fresh server (the shell drivers)
- `errors.py`       the exceptions the CLI turns into an exit status and one message; SIGTERM as Ctrl-C
- `placement.py`    which CPUs the server and the clients run on (--server-cpus / --client-cpus)
- `plan.py`         what a run will do: suite, scenarios and clients resolved against bench-config and bin/
- `cell.py`         one cell: a client run once, its timeout, result validation, the /stats cross-check
- `netpath.py`      a network scenario's path: the server in its own namespace, veths, hft-linkem
- `netcells.py`     the cells of the network scenarios, each over its path
- `proc_sampler.py` the server's RSS, CPU and connections during a soak, from /proc
- `progress.py`     the progress bar with ETA, or plain lines under CI / --quiet
- `run.py`          the `run` subcommand: scenario × client loop, files written as they arrive
- `fingerprint.py`  host fingerprint, git state, tool versions, the runner id
- `metrics.py`      the metric vocabulary, declared once: name, key, quantile, label, unit, direction
- `series.py`       a scenario × client over its repeats: pooled quantiles, Σ ok / Σ duration throughput
- `samples.py`      which percentiles a sample count supports (pure)
- `lateness.py`     open loop's send lateness pooled over repeats, and when a generator fell behind (pure)
- `rows.py`         one report row per scenario × client, its series' numbers
- `report.py`       `report` subcommand: report.md
- `report_net.py`   the network scenarios' part of report.md
- `drift.py`        a soak's drift: last tenth against first tenth (pure)
- `soak_report.py`  the soak section of report.md; `soak_plots.py` its plots
- `plots.py`        PNG plots from the HDR histograms
- `csvout.py`       results.csv
- `check_runner.py` `check-runner` subcommand: is this host tuned for benchmarking
- `stats.py`        the gate's statistics, pure functions (permutation test, expanded bootstrap, Holm)
- `verdicts.py`     the gate's answers (REGRESSION, NO_CHANGE, ...), plain constants
- `verdict_rules.py` from the statistics to a verdict: MDE, runs to settle, classify, RegressionCheck
- `compare_gates.py` bench-config/gates.yaml: gated metrics, thresholds, sample rules
- `compare_sides.py` one side of a comparison (run folders or the history store)
- `designs.py`      how base and head were measured (unpaired runs, paired rounds, duet) and each one's test
- `paired.py`       the paired designs' statistics: sign-flip test and bootstrap over pairs (pure)
- `family.py`       a comparison's tests as one family: Holm, the MDE, each metric's verdict
- `compare.py`      `compare` subcommand: every series × metric tested, one verdict
- `strata.py`       a pool's test: each runner's test of a series × metric added up, a stratum each (pure)
- `combine.py`      `combine` subcommand: a pool's legs judged together, one verdict
- `pool.py`         `pool` subcommand: bench-config/pool.yaml's runners, the CI matrix of a suite
- `verdict_text.py` every verdict text (job summary, PR comment, issue body, console) from verdict.json
- `mdsafe.py`       outside names made inert in markdown and issue titles
- `verdict_extras.py` the verdict text's bisect and profile sections
- `verdict_method.py` the verdict text's method (by design) and what this runner guards
- `verdict_pool.py` the verdict text's runners of a pool: who took part, what each saw, who is missing
- `duet.py`         one duet round: both builds' servers at once, one client-hft interleaving orders
- `capacity.py`     this runner's capacity, and the rate of the load series (a share of it)
- `calibration.py`  a runner's calibration record: the series × metrics it guards, read by the gate
- `calibrate_text.py` calibrate's calibration.md
- `regression_issue.py` `regression-issue` subcommand: one GitHub issue per regression on main
- `rounds.py`       ab's and bisect's rounds, looks and time budget: flags and checks, once
- `worktrees.py`    a commit checked out into a worktree, its server built (ab, bisect)
- `ab.py`           `ab` subcommand: both refs built in worktrees, interleaved runs, the verdict
- `profile.py`      ab's differential profile of head against base (perf, flame graph)
- `bisect.py`       `bisect` subcommand: the first slower commit; `bisect_steps.py` its pure decisions
- `calibrate.py`    `calibrate` subcommand: measured false-alarm and detection rates
- `fsio.py`         atomic file writes (every file hftbench writes whole goes through it)
- `history_entry.py` one commit's runs as one history-store entry
- `history_store.py` the gh-pages history store: shards and index, add, read, baselines (only stores)
- `history.py`      `history add | baseline | changepoints` subcommands
- `changepoints.py` E-divisive means with a permutation test (pure)
- `gab.py`          `export-gab` subcommand: github-action-benchmark JSON
"""

__version__ = "0.1.0"
