# shellcheck shell=bash
# Shared by the scripts in scripts/ci/: each workflow step is one of these scripts, so the
# same step runs on GitHub, under nektos/act (scripts/tests/test_workflows_act.py) and on a
# developer's machine.
# Outside GitHub, GITHUB_STEP_SUMMARY / GITHUB_OUTPUT may be unset: summaries then go to
# stdout and outputs are dropped.
set -euo pipefail

CI_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
HFTBENCH=${HFTBENCH:-$CI_ROOT/.venv/bin/hftbench}
# The hidden marker that finds the one sticky pull-request comment.
# shellcheck disable=SC2034  # used by the scripts that source this file
STICKY_MARKER='<!-- hft-bench-verdict -->'

log() { printf '%s: %s\n' "${0##*/}" "$*" >&2; }
die() { printf '%s: error: %s\n' "${0##*/}" "$*" >&2; exit 2; }

# summary FILE: append a markdown file to the job summary.
summary() {
  if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then cat "$1" >>"$GITHUB_STEP_SUMMARY"; else cat "$1"; fi
}

# output NAME VALUE: a step output (no newlines in VALUE).
output() {
  if [ -n "${GITHUB_OUTPUT:-}" ]; then printf '%s=%s\n' "$1" "$2" >>"$GITHUB_OUTPUT"; fi
}

# pool_placement: a leg of the pool (bench.yml's matrix) runs with the placement the pool sets
# for its runner (POOL_SERVER_CPUS / POOL_CLIENT_CPUS), else with the runner's own.
pool_placement() {
  if [ -n "${POOL_SERVER_CPUS:-}" ]; then export HFTBENCH_SERVER_CPUS=$POOL_SERVER_CPUS; fi
  if [ -n "${POOL_CLIENT_CPUS:-}" ]; then export HFTBENCH_CLIENT_CPUS=$POOL_CLIENT_CPUS; fi
}

# copy_calibration OUT: the runner's calibration record ($HFTBENCH_CALIBRATION) beside a
# leg's verdict.json, for the hosted combine job (its weights and guards, once its sha256
# matches pool.yaml's calibration_sha256 for the runner); nothing when the runner has none.
copy_calibration() {
  if [ -n "${HFTBENCH_CALIBRATION:-}" ]; then
    cp "$HFTBENCH_CALIBRATION" "$1/calibration.json" \
      || die "HFTBENCH_CALIBRATION=$HFTBENCH_CALIBRATION is not readable: install it with install-runner.sh --calibration (hft/runner/README.md)"
  fi
}

# need_token: GITHUB_TOKEN and GITHUB_REPOSITORY set, the token fit for a curl config line.
need_token() {
  : "${GITHUB_TOKEN:?GITHUB_TOKEN is required}" "${GITHUB_REPOSITORY:?GITHUB_REPOSITORY is required}"
  [[ $GITHUB_TOKEN =~ ^[A-Za-z0-9_.-]+$ ]] || die "GITHUB_TOKEN is not a token (letters, digits, _ . -): it goes into a curl config line"
}

# gh_api METHOD PATH [JSON_BODY_FILE]: GitHub's REST API ($GITHUB_API_URL, default
# api.github.com) with GITHUB_TOKEN. The token is only sent in a header, never printed, and
# never an argument of curl (ps shows those to every user of the machine): curl reads it from a
# config on stdin (-K -).
gh_api() {
  local args=(-fsS -K - -X "$1" -H 'Accept: application/vnd.github+json')
  [ $# -ge 3 ] && args+=(-H 'Content-Type: application/json' --data-binary "@$3")
  printf 'header = "Authorization: Bearer %s"\n' "$GITHUB_TOKEN" | curl "${args[@]}" "${GITHUB_API_URL:-https://api.github.com}$2"
}

need_hftbench() {
  [ -x "$HFTBENCH" ] || die "$HFTBENCH not found: run 'make deps' (it installs scripts/ as the hftbench console script)"
}

# is_uint NAME VALUE: workflow_dispatch inputs are free text; accept digits only.
is_uint() { [[ $2 =~ ^[0-9]+$ ]] || die "input $1 must be a whole number (got '$2')"; }
is_number() { [[ $2 =~ ^[0-9]+([.][0-9]+)?$ ]] || die "input $1 must be a number (got '$2')"; }

# A new run folder's path, named as hftbench names them (paths.fresh_dir): the folder name
# is the run_id of the history store, so every run needs its own, even two started in the
# same second on two runners: run_<UTC second>_<6 random hex digits>.
new_run_dir() { printf '%s/run_%s_%s' "$1" "$(date -u +%Y%m%dT%H%M%SZ)" "$(od -An -N3 -tx1 /dev/urandom | tr -d ' \n')"; }

# run_dir PATH: PATH itself when it is a run folder, else the one run_*/ folder under PATH
# or PATH/runs/ (an artifact downloaded with or without its runs/ level).
run_dir() {
  if [ -f "$1/results.json" ]; then printf '%s' "$1"; return; fi
  local found=()
  for f in "$1"/run_*/results.json "$1"/runs/run_*/results.json; do
    [ -f "$f" ] && found+=("$f")
  done
  if [ ${#found[@]} -ne 1 ]; then
    die "$1 holds ${#found[@]} run folders (run_*/ or runs/run_*/ with results.json); expected exactly one"
  fi
  dirname "${found[0]}"
}

# reuse_prebuilt: link bin/, .venv and gh-pages/node_modules of $HFT_CI_PREBUILT (a checkout
# of the same commit where `make deps build` ran) into this one; only the act tests set it.
reuse_prebuilt() {
  local d
  for d in bin .venv gh-pages/node_modules; do
    [ -e "$HFT_CI_PREBUILT/$d" ] || die "HFT_CI_PREBUILT=$HFT_CI_PREBUILT lacks $d: run 'make deps build' there"
    [ -e "$CI_ROOT/$d" ] || ln -s "$HFT_CI_PREBUILT/$d" "$CI_ROOT/$d"
  done
}

# The harness: what judges a pull request (bench.yml checks these out from the base).
HARNESS_PATHS=(.github bench-config scripts clients Makefile)
# harness_changes BASE HEAD: the harness files HEAD changes since the merge base with BASE,
# one a line (git diff --name-only BASE...HEAD).
harness_changes() {
  git -C "$CI_ROOT" diff --name-only "$1...$2" -- "${HARNESS_PATHS[@]}"
}

# take_token: move the job's token (GITHUB_TOKEN, optional) out of the environment into
# CI_TOKEN, a shell variable no command started afterwards inherits; authed_git uses it.
take_token() {
  CI_TOKEN=${GITHUB_TOKEN:-}
  unset GITHUB_TOKEN
}
# authed_git ARGS...: git with CI_TOKEN (take_token) as an HTTP header for the GitHub server
# only, passed through git's environment, never as an argument (which any process of the
# machine could read). Without a token: plain git (a public repository, a local remote).
authed_git() {
  if [ -n "${CI_TOKEN:-}" ]; then
    GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0="http.${GITHUB_SERVER_URL:-https://github.com}/.extraheader" \
      GIT_CONFIG_VALUE_0="AUTHORIZATION: basic $(printf 'x-access-token:%s' "$CI_TOKEN" | base64 -w0)" git "$@"
  else
    git "$@"
  fi
}
