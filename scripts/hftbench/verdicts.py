"""The gate's answers, one name each. Plain constants: the texts and the issue sync import
them without numpy or scipy (they run on a bare GitHub-hosted runner)."""

REGRESSION = "regression"  # significant, and at least the threshold worse
IMPROVEMENT = "improvement"  # significant, and at least the threshold better
NO_CHANGE = "no_change"  # the whole interval lies within ±threshold
INCONCLUSIVE = "inconclusive"  # none of the above: more runs could tell
NOT_GATED = "not_gated"  # not tested (too few samples, one side only, reported only)
