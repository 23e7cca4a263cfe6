"""publish: what people read: report.md, plots, results.csv, the soak section, every verdict
text, main's regression issue. Stage 3: may import judge, measure and the top.

- `calibrate_text.py`    calibrate's calibration.md
- `creep_issue.py`       main's creep: creep.md and the creep issue (the marker, the action)
- `csvout.py`            results.csv
- `gab.py`               github-action-benchmark JSON of a run
- `plots.py`             PNG plots from the HDR histograms
- `regression_issue.py`  main's regression issue: the marker, the action (open, update, close), GitHub's API
- `report.py`            report.md of a run folder (write_all), with its table, host and comparison
- `report_net.py`        the network scenarios' part of report.md
- `rows.py`              one report row per scenario × client, its series' numbers
- `soak_plots.py`        the soak section's plots: percentiles and drift against time
- `soak_report.py`       the soak section of report.md; `soak_plots.py` its plots
- `verdict_extras.py`    the verdict text's bisect and profile sections
- `verdict_method.py`    the verdict text's method (by design) and what this runner guards
- `verdict_pool.py`      the verdict text's runners of a pool: who took part, what each saw, who is missing
- `verdict_text.py`      every verdict text (job summary, PR comment, issue body, console) from verdict.json
"""
