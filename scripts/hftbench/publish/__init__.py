"""publish: what people read: report.md, plots, results.csv, the soak section, every verdict
text, main's regression issue. Stage 3: may import judge, measure and the top.

- `bisect_text.py`       the verdict text's bisect section (culprit or range, steps); bisect's console
- `calibrate_text.py`    calibrate's calibration.md
- `check_run.py`         the verdict as a check run: success, neutral (inconclusive), failure
- `creep_issue.py`       main's creep: creep.md and the creep issue (the marker, the action)
- `csvout.py`            results.csv
- `gab.py`               github-action-benchmark JSON of a run
- `method_text.py`       the verdict text's method (by design), what this runner guards and could not see
- `plots.py`             PNG plots from the HDR histograms
- `pool_text.py`         the verdict text's runners of a pool: who took part, what each saw, who is missing
- `profile_text.py`      the verdict text's profile section: the differential flame graph, the top functions
- `regression_issue.py`  main's regression issue: the marker, the action (open, update, close), GitHub's API
- `report.py`            report.md of a run folder (write_all), with its table, host and comparison
- `report_net.py`        the network scenarios' part of report.md
- `rows.py`              one report row per scenario × client, its series' numbers
- `soak_plots.py`        the soak section's plots: percentiles and drift against time
- `soak_report.py`       the soak section of report.md; `soak_plots.py` its plots
- `store_text.py`        a verdict reduced to the history store's copy, its dashboard rows rendered
- `verdict_text.py`      every verdict text (job summary, PR comment, issue body, console) from verdict.json
- `verdict_cells.py`     a verdict row as its table's cells, the columns by name (the store keeps them)
"""
