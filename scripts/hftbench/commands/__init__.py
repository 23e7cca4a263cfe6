"""commands: one module per subcommand, each a Command (base.py) whose flags shared with other
commands are declared once (flags.py) and whose configuration is loaded once. Stage 5: may
import every stage; cli.py registers them.

- `ab.py`                `ab`: both refs built in worktrees, interleaved rounds, looks, the verdict
- `base.py`              the Command base: name, help, shared flags, `run`; the root and configuration
                         worked out once; `close`, the end of a verdict's command
- `bisect.py`            `bisect`: the first slower commit (its pure decisions: judge/bisect_steps.py)
- `calibrate.py`         `calibrate`: measured false-alarm and detection rates of this runner (its analysis:
                         judge/calibration_draws.py)
- `check_run.py`         `check-run`: verdict.json as a check run (publish/check_run.py; no numpy)
- `check_runner.py`      `check-runner`: is this host tuned for benchmarking
- `combine.py`           `combine`: a pool's legs read and judged together (judge/pooled.py), one verdict
- `compare.py`           `compare`: two sets of runs, or a run against the store's baseline
- `export_gab.py`        `export-gab`: github-action-benchmark JSON (publish/gab.py)
- `flags.py`             the flags several commands share, declared once; the typed options built from them
- `history.py`           `history add | baseline | changepoints`
- `pool.py`              `pool`: the pool's runners that take a suite, as the CI matrix (no numpy)
- `regression_issue.py`  `regression-issue`: open, update or close main's regression issue (no numpy)
- `report.py`            `report`: report.md, results.csv and plots of a run folder
- `run.py`               `run`: a suite's plan measured (measure/run.py), then its report
- `serve.py`             `serve`: a command run against a fresh server (the shell drivers)
- `verdict_text.py`      `verdict-text`: a verdict.json as summary, comment or issue body (no numpy)
"""
