"""judge: from runs to a verdict: the statistics, the designs, the gates, the rules, the
session of looks, drift, change points. Stage 2: may import measure and the top, never
publish, store or commands.

Student's t and the normal come from scipy.special (stdtr, stdtrit, ndtr, ndtri: the functions
scipy.stats' t and norm call, so the numbers are the same): importing scipy.stats costs about
0.5 s more, paid by every CLI call. Only the Mann-Whitney test and Theil-Sen import it, inside
the function.

- `bisect_steps.py`   bisect's pure decisions: its target, the step's verdict, the next commit, the steps left
- `calibration.py`    a runner's calibration record: the series × metrics it guards, read by the gate
- `calibration_draws.py` calibrate's analysis: draws of k rounds per kind compared and tallied
- `calibration_shapes.py` calibration.json's parts as TypedDicts: tallies, evidence, guard rows, the record
- `changepoints.py`   E-divisive means with a permutation test (pure)
- `clustered.py`      the paired designs' inference: each round's log ratio, Student's t over rounds (pure)
- `creep.py`          main's pushes chained back to a fixed reference: small slowdowns added up
- `compare.py`        every series × metric tested, one verdict (Comparison -> verdict.Verdict)
- `rows.py`           one series' rows, each metric judged by its kind (quantile, CPU, memory, failures …)
- `hidden.py`         what a design hides: the price of duet, what of each injected kind survives it
- `gates.py`          bench-config/gates.yaml: gated metrics, thresholds, sample rules
- `sides.py`          one side of a comparison: its runs as series (run folders or a store's entries)
- `designs.py`        how base and head were measured (unpaired runs, paired rounds, duet) and each one's test
- `drift.py`          a soak's drift: last tenth against first tenth (pure)
- `family.py`         the family of tests: each row (verdict.MetricResult), Holm, the MDE, the verdict
- `legcheck.py`       a pool leg's artifact checked against what the base knows (combine trusts no leg)
- `paired.py`         why pairs; the pooled log ratio; sign-flip test and bootstrap over blocks (pure)
- `pooled.py`         a pool's legs as one test: each runner a stratum (strata.py), one family
- `rounds.py`         ab's and bisect's rounds, looks and time budget, checked once (flags: commands/flags.py)
- `rules.py`          from the statistics to a verdict: MDE, runs to settle, classify, RegressionCheck
- `session.py`        one measuring session (ab, bisect, calibrate): rounds in memory, looks, when to stop
- `stats.py`          the gate's statistics, pure functions (permutation test, expanded bootstrap, Holm)
- `strata.py`         a pool's test: each runner's test of a series × metric added up, a stratum each (pure)
"""
