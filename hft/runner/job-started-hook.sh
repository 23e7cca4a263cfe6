#!/usr/bin/env bash
# job-started-hook.sh --repo OWNER/REPO [--protected main,release] [--api URL] [--token-file PATH]:
# the runner's own check before every job's first step, so this machine runs only the one
# repository's reviewed bench.yml, only for the events bench.yml runs on, and never code of
# another repository, whatever the repository's or the organization's settings say.
# actions/runner runs the script named by ACTIONS_RUNNER_HOOK_JOB_STARTED (the runner's
# .env, set by install-runner.sh) as `bash -e <path>`, as the runner user, with the runner's
# own environment plus the job's GITHUB_* / RUNNER_* variables (not the workflow's `env:`) and
# its event payload at GITHUB_EVENT_PATH; any exit other than 0 fails the job before its first
# step, and before its checkout (actions/runner docs/adrs/1751-runner-job-hooks.md,
# Runner.Worker/JobHookProvider.cs).
# Installed root-owned as /usr/local/lib/hft-runner/job-started-hook.sh; the path the runner
# runs, /usr/local/sbin/hft-job-started-hook.sh, is a root-owned line written by
# install-runner.sh that runs this with the repository (--repo) and the protected branches
# (--protected) given at install time. So both are pinned on the machine: neither a job's
# GITHUB_REPOSITORY nor its payload chooses them, and a repository of the same organization
# that the runner group lets in is still refused.
# Refused, every reason on stderr (the job's "Pre Job Hook" step shows them):
#   - no repository pinned (not installed by install-runner.sh --repo), or a bad --protected
#   - a job of another repository (GITHUB_REPOSITORY, and .repository.full_name of the payload)
#   - any workflow but <repo>/.github/workflows/bench.yml (GITHUB_WORKFLOW_REF)
#   - an event bench.yml does not run on (ALLOWED_EVENTS: its `on:`, checked by
#     scripts/tests/ci/test_job_started_hook.py against the workflow file)
#   - whatever the event, a payload naming a pull request whose code comes from another
#     repository (a fork, or any other repository): every .head.repo and .head_repository in
#     the payload (pull_request, pull_request_review, workflow_run, check_suite, ...), and a
#     pull request the payload names without saying where its head is (issue_comment)
#   - push and workflow_dispatch of a bench.yml that is not a protected branch's (the ref of
#     GITHUB_WORKFLOW_REF is not refs/heads/<protected>): a branch's own bench.yml is not
#     reviewed, and it can say `on: push` for itself
#   - pull_request into a branch that is not protected (.pull_request.base.ref), and one whose
#     bench.yml (at GITHUB_WORKFLOW_SHA, the merge commit the job runs the workflow from) is not
#     byte for byte the protected base branch's bench.yml (its tip, refs/heads/<base>); when the
#     hook cannot tell (no read token, the API unreachable, a file missing), it refuses too
#   - no readable JSON payload
# How the two bench.yml are compared: GET <api>/repos/<repo>/contents/.github/workflows/bench.yml
# ?ref=<sha> and ?ref=refs/heads/<base>, raw, with a read token the root loop mints for this job
# alone (contents: read on <repo> only; runner-loop.sh) and leaves in the job's fresh home
# (--token-file, given by the root-owned line). The hook deletes the file as soon as it has read
# it, before anything else, so no step of the job finds it; the loop revokes the token when the
# job ends. The job's checkout is not there yet at hook time, and the hook has no other token.
# Needs jq, curl, cmp, sha256sum (the runner loop uses the first two too).
set -euo pipefail

# bench.yml's `on:` (push, pull_request, workflow_dispatch; it has no schedule). Not
# pull_request_target: it runs a fork's pull request with the base's token and secrets.
ALLOWED_EVENTS="push pull_request workflow_dispatch"
BENCH_PATH=.github/workflows/bench.yml

reasons=()
refuse_now() {
  printf 'hft-bench job-started hook: refused: %s\n' "$@" >&2
  printf 'This runner runs only %s/%s as a protected branch (%s) has it, for %s, and never code of another repository (hft/runner/README.md).\n' \
    "${pinned:-OWNER/REPO}" "$BENCH_PATH" "${protected:-main}" "${ALLOWED_EVENTS// /, }" >&2
  exit 1
}

pinned="" protected=main api=https://api.github.com token_file=""
while [ $# -gt 0 ]; do
  case $1 in
    --repo) pinned=${2-}; shift $(($# < 2 ? 1 : 2)) ;;
    --protected) protected=${2-}; shift $(($# < 2 ? 1 : 2)) ;;
    --api) api=${2-}; shift $(($# < 2 ? 1 : 2)) ;;
    --token-file) token_file=${2-}; shift $(($# < 2 ? 1 : 2)) ;;
    *) refuse_now "unknown argument '$1' (job-started-hook.sh --repo OWNER/REPO [--protected main,release] [--api URL] [--token-file PATH])" ;;
  esac
done

# The read token first: read, then deleted, whatever follows, so no step of this job finds it.
token=""
if [ -n "$token_file" ]; then
  if [ -r "$token_file" ]; then token=$(head -c 200 "$token_file" | tr -d '\n'); fi
  if [ -e "$token_file" ] && ! rm -f "$token_file" 2>/dev/null; then
    printf 'hft-bench job-started hook: note: could not delete %s (the loop revokes its token when the job ends)\n' "$token_file" >&2
  fi
fi

name_re='^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$'
[[ $pinned =~ $name_re ]] ||
  refuse_now "no repository pinned ('$pinned'): install the hook with hft/runner/install-runner.sh --repo OWNER/REPO"
# Branch names as a comma list; no '..', no leading '/' or '-', nothing a URL or a glob reads.
branch_list='^[A-Za-z0-9_][A-Za-z0-9_./-]*(,[A-Za-z0-9_][A-Za-z0-9_./-]*)*$'
[[ $protected =~ $branch_list && $protected != *..* ]] ||
  refuse_now "--protected '$protected' is not a comma list of branch names like main,release (install-runner.sh --protected)"
IFS=, read -r -a protected_branches <<<"$protected"
is_protected() {
  local b
  for b in "${protected_branches[@]}"; do [ "$1" = "$b" ] && return 0; done
  return 1
}

repo=${GITHUB_REPOSITORY:-}
[ "$repo" = "$pinned" ] ||
  reasons+=("repository '$repo' is not $pinned, the one repository this runner was installed for")
workflow=${GITHUB_WORKFLOW_REF:-}
# The ref part (after @) is the branch, tag or pull request merge ref the workflow file came from.
workflow_ok=false
if [[ $workflow == "$pinned/$BENCH_PATH@"?* ]]; then
  workflow_ok=true
else
  reasons+=("workflow '$workflow' is not $pinned/$BENCH_PATH")
fi
workflow_ref=${workflow#"$pinned/$BENCH_PATH@"}
event=${GITHUB_EVENT_NAME:-}
[[ " $ALLOWED_EVENTS " == *" $event "* ]] ||
  reasons+=("event '$event' is not one bench.yml runs on (${ALLOWED_EVENTS// /, })")

# push and workflow_dispatch run the bench.yml of the ref they name: only a protected branch's.
if $workflow_ok && { [ "$event" = push ] || [ "$event" = workflow_dispatch ]; }; then
  if [[ $workflow_ref != refs/heads/* ]] || ! is_protected "${workflow_ref#refs/heads/}"; then
    reasons+=("$event runs the bench.yml of '$workflow_ref', not of a protected branch ($protected): a branch's own bench.yml is not reviewed")
  fi
fi

payload=${GITHUB_EVENT_PATH:-}
pr_base=""
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
  if [ "$event" = pull_request ]; then
    pr_base=$(jq -r '.pull_request.base.ref // "" | strings' "$payload" 2>/dev/null) || pr_base=""
    if ! is_protected "$pr_base"; then
      reasons+=("pull_request into '$pr_base', not into a protected branch ($protected): only a protected branch's reviewed bench.yml runs here")
      pr_base=""
    fi
  fi
fi

# fetch_bench REF FILE: bench.yml at REF, raw bytes into FILE; curl's error on stderr. The token
# goes to curl in a config on stdin (never an argument that ps shows); -q: no ~/.curlrc.
fetch_bench() {
  printf 'header = "Authorization: Bearer %s"\n' "$token" |
    curl -q -fsS --max-time 30 -K - -o "$2" -H 'Accept: application/vnd.github.raw+json' \
      -H 'X-GitHub-Api-Version: 2022-11-28' "$api/repos/$pinned/contents/$BENCH_PATH?ref=$1"
}
# said FILE: curl's error, on one line.
said() {
  local text
  text=$(tr '\n' ' ' <"$1")
  printf '%s' "${text% }"
}

# A pull request into a protected branch runs only that branch's bench.yml, byte for byte. Asked
# only when nothing else refused the job (no fork's pull request reaches the API).
if [ ${#reasons[@]} -eq 0 ] && [ "$event" = pull_request ]; then
  sha=${GITHUB_WORKFLOW_SHA:-}
  cannot="cannot tell whether the bench.yml of this pull_request (workflow sha '$sha') is $pr_base's"
  if [[ ! $sha =~ ^([0-9a-f]{40}|[0-9a-f]{64})$ ]]; then
    reasons+=("$cannot: GITHUB_WORKFLOW_SHA is not a commit sha")
  elif [ -z "$token" ]; then
    reasons+=("$cannot: no read token (the loop leaves one per job in ${token_file:-the --token-file}; the GitHub App needs Contents: Read-only, hft/runner/README.md 'The GitHub App')")
  elif [[ ! $token =~ ^[A-Za-z0-9_]+$ ]]; then
    reasons+=("$cannot: the read token in $token_file is malformed")
  elif ! command -v curl >/dev/null || ! command -v cmp >/dev/null; then
    reasons+=("$cannot: curl or cmp is not installed (apt-get install curl diffutils)")
  elif ! tmp=$(mktemp -d); then
    reasons+=("$cannot: no temporary folder (mktemp -d failed)")
  else
    trap 'rm -rf "$tmp"' EXIT
    if ! fetch_bench "$sha" "$tmp/head.yml" 2>"$tmp/err"; then
      reasons+=("$cannot: $api answered for $BENCH_PATH at $sha: $(said "$tmp/err")")
    elif ! fetch_bench "refs/heads/$pr_base" "$tmp/base.yml" 2>"$tmp/err"; then
      reasons+=("$cannot: $api answered for $BENCH_PATH at refs/heads/$pr_base: $(said "$tmp/err")")
    elif ! cmp -s "$tmp/head.yml" "$tmp/base.yml"; then
      reasons+=("the bench.yml of this pull_request (workflow sha $sha, sha256 $(sha256sum <"$tmp/head.yml" | cut -c1-12)) is not $pr_base's (sha256 $(sha256sum <"$tmp/base.yml" | cut -c1-12)): a pull request runs here only with its base's reviewed bench.yml; merge a bench.yml change first, then its pull requests run with it")
    fi
  fi
fi

[ ${#reasons[@]} -eq 0 ] || refuse_now "${reasons[@]}"
printf 'hft-bench job-started hook: %s of %s accepted\n' "$event" "$workflow" >&2
