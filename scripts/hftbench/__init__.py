"""hftbench: the hft-bench orchestrator (ARCHITECTURE.md, Contracts 3 and 4).

# Layout

One module per stage or subcommand; `cli.py` only parses flags and dispatches.

- `cli.py`          the `hftbench` entry point and the subcommand registry
- `paths.py`        where the repository, `bin/` and `bench-config/` are
- `config.py`       load and validate `bench-config/scenarios.yaml` (errors name file:line)
- `schema.py`       validate a client result against `bench-config/schema/result.schema.json`
- `results.py`      typed view of a results folder (results.json + per-client JSON); read by the gate
- `server.py`       start / stop `bin/hft-server` on a free port, health, /stats, /stats/reset
- `runner.py`       one client invocation: timeout, result validation, the /stats cross-check
- `run.py`          the `run` subcommand: scenario × client loop, files written as they arrive
- `fingerprint.py`  host fingerprint, git state, tool versions
- `samples.py`      which percentiles a sample count supports (pure)
- `report.py`       `report` subcommand: report.md
- `plots.py`        PNG plots from the HDR histograms
- `csvout.py`       results.csv
- `check_runner.py` `check-runner` subcommand: is this host tuned for benchmarking
"""

__version__ = "0.1.0"
