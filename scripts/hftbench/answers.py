"""The gate's answers, one name each, and the words for "more runs would settle it". Plain
Python: the texts and the issue sync import them without numpy or scipy (they run on a bare
GitHub-hosted runner; test_verdict_text checks it)."""

REGRESSION = "regression"  # significant, and at least the threshold worse
IMPROVEMENT = "improvement"  # significant, and at least the threshold better
NO_CHANGE = "no_change"  # the whole interval lies within ±threshold, and it holds 1
# Significant, but the whole interval lies under the threshold: a change the gate lets
# through (exit 0) and says out loud, never as "no change" (five +5 % PRs are +28 %).
SLOWER = "slower"
FASTER = "faster"
INCONCLUSIVE = "inconclusive"  # none of the above: more runs could tell
# A comparison that cannot be judged: base failed orders or broke a round, or a gated series
# has no judged row. It fails the check (exit 1): what is not judged cannot be green.
INVALID = "invalid"
NOT_GATED = "not_gated"  # not tested (too few samples, one side only, reported only)

# Runs a side beyond which "about N would settle it" stops helping a reader: ab stops at 32,
# and an estimate of 1,563 only says the series is too noisy on this runner to decide.
SETTLE_IN_REACH = 200


def settle_text(runs: int) -> str:
    """What rules.rounds_to_settle's estimate tells a reader (in verdict_text's
    headline, which the history store keeps for the dashboard)."""
    if runs <= SETTLE_IN_REACH:
        return f"about {runs} runs a side would settle it"
    return (
        f"more than {SETTLE_IN_REACH} runs a side would be needed to settle it: out of reach, "
        "the series is too noisy on this runner (read its MDE)"
    )
