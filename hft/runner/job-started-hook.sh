#!/usr/bin/env bash
# job-started-hook.sh --repo OWNER/REPO: the runner's own check before every job's first step,
# so this machine runs only the one repository's bench.yml, only for the events bench.yml
# runs on, and never code of another repository, whatever the repository's or the
# organization's settings say.
# actions/runner runs the script named by ACTIONS_RUNNER_HOOK_JOB_STARTED (the runner's
# .env, set by install-runner.sh) as `bash -e <path>`, as the runner user, with the job's
# GITHUB_* variables and its event payload at GITHUB_EVENT_PATH; any exit other than 0 fails
# the job before its first step (actions/runner docs/adrs/1751-runner-job-hooks.md).
# Installed root-owned as /usr/local/lib/hft-runner/job-started-hook.sh; the path the runner
# runs, /usr/local/sbin/hft-job-started-hook.sh, is a root-owned line written by
# install-runner.sh that runs this with `--repo` the repository given at install time. So the
# repository is pinned on the machine: neither a job's GITHUB_REPOSITORY nor its payload
# chooses it, and a repository of the same organization that the runner group lets in is
# still refused.
# Refused, every reason on stderr (the job's "Pre Job Hook" step shows them):
#   - no repository pinned (not installed by install-runner.sh --repo)
#   - a job of another repository (GITHUB_REPOSITORY, and .repository.full_name of the payload)
#   - any workflow but <repo>/.github/workflows/bench.yml (GITHUB_WORKFLOW_REF)
#   - an event bench.yml does not run on (ALLOWED_EVENTS: its `on:`, checked by
#     scripts/tests/test_job_started_hook.py against the workflow file)
#   - whatever the event, a payload naming a pull request whose code comes from another
#     repository (a fork, or any other repository): every .head.repo and .head_repository in
#     the payload (pull_request, pull_request_review, workflow_run, check_suite, ...), and a
#     pull request the payload names without saying where its head is (issue_comment)
#   - no readable JSON payload
# Needs jq (the runner loop uses it too).
set -euo pipefail

# bench.yml's `on:` (push, pull_request, workflow_dispatch; it has no schedule). Not
# pull_request_target: it runs a fork's pull request with the base's token and secrets.
ALLOWED_EVENTS="push pull_request workflow_dispatch"

reasons=()
refuse_now() {
  printf 'hft-bench job-started hook: refused: %s\n' "$@" >&2
  printf 'This runner runs only %s/.github/workflows/bench.yml, for %s, and never code of another repository (hft/runner/README.md).\n' \
    "${pinned:-OWNER/REPO}" "${ALLOWED_EVENTS// /, }" >&2
  exit 1
}

pinned=""
while [ $# -gt 0 ]; do
  case $1 in
    --repo) pinned=${2-}; shift $(($# < 2 ? 1 : 2)) ;;
    *) refuse_now "unknown argument '$1' (job-started-hook.sh --repo OWNER/REPO)" ;;
  esac
done
name_re='^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$'
[[ $pinned =~ $name_re ]] ||
  refuse_now "no repository pinned ('$pinned'): install the hook with hft/runner/install-runner.sh --repo OWNER/REPO"

repo=${GITHUB_REPOSITORY:-}
[ "$repo" = "$pinned" ] ||
  reasons+=("repository '$repo' is not $pinned, the one repository this runner was installed for")
workflow=${GITHUB_WORKFLOW_REF:-}
# The ref part (after @) is the branch, tag or pull request merge ref the workflow file came from.
[[ $workflow == "$pinned/.github/workflows/bench.yml@"?* ]] ||
  reasons+=("workflow '$workflow' is not $pinned/.github/workflows/bench.yml")
event=${GITHUB_EVENT_NAME:-}
[[ " $ALLOWED_EVENTS " == *" $event "* ]] ||
  reasons+=("event '$event' is not one bench.yml runs on (${ALLOWED_EVENTS// /, })")

payload=${GITHUB_EVENT_PATH:-}
if [ ! -r "$payload" ]; then
  reasons+=("${event:-the} event without a readable payload (GITHUB_EVENT_PATH='$payload')")
elif ! command -v jq >/dev/null; then
  reasons+=("jq is not installed: cannot read the $event payload (apt-get install jq)")
elif ! base=$(jq -er '.repository.full_name // ""' "$payload" 2>/dev/null); then
  reasons+=("$event payload $payload is not JSON")
else
  [ "$base" = "$pinned" ] || reasons+=("$event payload of repository '$base', not $pinned")
  # Where each pull request the payload names takes its code from: OWNER/REPO, or "?" when
  # the payload does not say (a deleted fork's head.repo is null; an issue comment's
  # .issue.pull_request has no head at all). A workflow_run's pull_requests[].head.repo has
  # only a url: its OWNER/REPO is the url's tail.
  # shellcheck disable=SC2016  # jq's own $-variables
  heads=$(jq -r '
    def repo_name:
      if type == "object" then
        (.full_name // ((.url // "") | capture("/repos/(?<n>[^/]+/[^/]+)$") | .n) // "?")
      else "?" end;
    [ (.. | objects | select(has("head")) | .head | objects | select(has("repo")) | .repo | repo_name),
      (.. | objects | select(has("head_repository")) | .head_repository | repo_name),
      (if (.issue? | objects | has("pull_request")) then "?" else empty end)
    ] | unique | .[]' "$payload") || heads="?"
  while IFS= read -r head; do
    case $head in
      "" | "$pinned") ;;
      "?") reasons+=("$event names a pull request from a deleted or unknown head repository: its code could come from anywhere") ;;
      *) reasons+=("$event of a pull request from '$head', not $pinned: code of another repository (a fork) never runs here") ;;
    esac
  done <<<"$heads"
fi

[ ${#reasons[@]} -eq 0 ] || refuse_now "${reasons[@]}"
printf 'hft-bench job-started hook: %s of %s accepted\n' "$event" "$workflow" >&2
