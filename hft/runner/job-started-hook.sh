#!/usr/bin/env bash
# job-started-hook.sh: the runner's own check before every job's first step, so this
# machine runs only this repository's bench.yml and never a fork's pull request, whatever
# the repository's or the organization's settings say.
# actions/runner runs the script named by ACTIONS_RUNNER_HOOK_JOB_STARTED (the runner's
# .env, set by install-runner.sh) as `bash -e <path>`, as the runner user, with the job's
# GITHUB_* variables and its event payload at GITHUB_EVENT_PATH; any exit other than 0 fails
# the job before its first step (actions/runner docs/adrs/1751-runner-job-hooks.md).
# Installed root-owned (/usr/local/sbin/hft-job-started-hook.sh), so no job can change it.
# Refused, with the reason on stderr (the job's "Pre Job Hook" step shows it):
#   - any workflow but <GITHUB_REPOSITORY>/.github/workflows/bench.yml (GITHUB_WORKFLOW_REF)
#   - a pull_request or pull_request_target whose head repository is not the base repository
#     (.pull_request.head.repo.full_name vs .repository.full_name): a fork's code
# Needs jq (the runner loop uses it too).
set -euo pipefail

refuse() {
  printf 'hft-bench job-started hook: refused: %s\n' "$*" >&2
  printf 'This runner runs only %s/.github/workflows/bench.yml, and no fork pull request (hft/runner/README.md).\n' \
    "${GITHUB_REPOSITORY:-OWNER/REPO}" >&2
  exit 1
}

repo=${GITHUB_REPOSITORY:-}
[[ $repo =~ ^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$ ]] || refuse "GITHUB_REPOSITORY is '$repo', not OWNER/REPO"
workflow=${GITHUB_WORKFLOW_REF:-}
# The ref part (after @) is the branch, tag or pull request merge ref the workflow file came from.
[[ $workflow == "$repo/.github/workflows/bench.yml@"?* ]] \
  || refuse "workflow '$workflow' is not $repo/.github/workflows/bench.yml"

event=${GITHUB_EVENT_NAME:-}
case $event in
  pull_request | pull_request_target)
    payload=${GITHUB_EVENT_PATH:-}
    [ -r "$payload" ] || refuse "$event event without a readable payload (GITHUB_EVENT_PATH='$payload')"
    command -v jq >/dev/null || refuse "jq is not installed: cannot read the $event payload (apt-get install jq)"
    head=$(jq -r '.pull_request.head.repo.full_name // ""' "$payload") \
      || refuse "$event payload $payload is not JSON"
    base=$(jq -r '.repository.full_name // ""' "$payload")
    [ -n "$head" ] || refuse "$event from a deleted or unknown head repository"
    [ "$base" = "$repo" ] || refuse "$event into '$base', not $repo"
    [ "$head" = "$base" ] || refuse "$event from the fork '$head' into $base: a fork's code never runs here"
    ;;
  "") refuse "GITHUB_EVENT_NAME is not set" ;;
esac
printf 'hft-bench job-started hook: %s of %s accepted\n' "$event" "$workflow" >&2
