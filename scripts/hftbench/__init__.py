"""hftbench: the hft-bench orchestrator (docs/architecture.md, Contracts 3 and 4).

# Layout

Packages in stage order; a module imports only from its own stage or an earlier one
(scripts/tests/repo/test_structure.py checks it, with no import cycle):

- the top: the shared vocabulary, below;
- `measure/`  running the server and the clients (its own map in measure/__init__.py);
- `judge/`    from runs to a verdict;
- `publish/`  reports, plots and every verdict text;
- `store/`    the gh-pages history store;
- `commands/` one module per subcommand on a Command base;
- `bisect_record.py` bisect's record (bisect.json, verdict.json's `bisect`): the culprit or the range
- `cli.py`    the entry point, above them all.

The top:

- `absent.py`      ABSENT: a key a typed JSON record does not have (unlike None, a key written as null)
- `answers.py`     the gate's answers (REGRESSION, NO_CHANGE, ...), the words for "more runs would settle it"
- `cli.py`         the `hftbench` entry point: the registry of subcommands (commands/), each imported for real
- `config.py`      load and validate `bench-config/scenarios.yaml` (errors name file:line)
- `design_names.py` the designs' names (duet, paired-rounds, unpaired), declared once
- `errors.py`      the exceptions the CLI turns into an exit status and one message; SIGTERM as Ctrl-C
- `fsio.py`        atomic file writes (every file hftbench writes whole goes through it)
- `histograms.py`  the clients' HDR histograms as the gate reads them: one layout, a shared grid, quantiles
- `mdsafe.py`      outside names made inert in markdown and issue titles
- `metrics.py`     the metric vocabulary, declared once: name, key, quantile, label, unit, direction
- `paths.py`       where the repository, `bin/` and `bench-config/` are
- `pool.py`        `bench-config/pool.yaml`: the pool's runners and the suites each takes
- `profile_record.py` verdict.json's `profile`: ab's differential flame graph and top functions
- `results.py`     typed view of a results folder (results.json + per-client JSON); read by the gate
- `results_shapes.py` results.json's recorded parts as types (fingerprint, git, server, scenarios, link)
- `roster.py`      `bench-config/clients.yaml`: the load clients, one line each (errors name file:line)
- `samples.py`     which percentiles a sample count supports (pure)
- `schema.py`      validate a client result against `bench-config/schema/result.schema.json`
- `series.py`      a scenario × client over its repeats: pooled quantiles, Σ ok / Σ duration throughput
- `store_shapes.py` the history store's JSON files as types (index, shard, entry, change points)
- `stored_verdict.py` the history store's copy of a verdict (StoredVerdict), as the dashboard reads it
- `verdict.py`     verdict.json as one type (Verdict, its rows and sections): to_json, from_json
- `yamlfile.py`     bench-config's YAML read: a missing file or bad syntax names file:line and the fix
"""

import os

# One BLAS thread, set before anything imports numpy: the judge's matrix products are small
# (runs x buckets), and OpenBLAS's second thread spins between them. On 2 CPUs it doubled
# test_compare's and test_stats' CPU for the same wall time (16.7 -> 31.5 CPU-s, 2026-11-29),
# and it takes a CPU from whatever runs beside. Where the caller set it, theirs stands.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

__version__ = "0.1.0"
