# shellcheck shell=bash
# Shared by scripts/ci/: the steps that must stay shell (tokens, the git push, installing), so
# they run alike on GitHub, under nektos/act and by hand. Every job's own logic is an hftbench
# command (scripts/ci/hftbench). Outside GitHub, GITHUB_OUTPUT may be unset: outputs are dropped.
set -euo pipefail

CI_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
HFTBENCH=${HFTBENCH:-$CI_ROOT/.venv/bin/hftbench}
# shellcheck disable=SC2034  # the hidden marker of the one sticky comment (sticky-comment)
STICKY_MARKER='<!-- hft-bench-verdict -->'

log() { printf '%s: %s\n' "${0##*/}" "$*" >&2; }
die() { printf '%s: error: %s\n' "${0##*/}" "$*" >&2; exit 2; }
# output NAME VALUE: a step output (no newlines in VALUE).
output() { if [ -n "${GITHUB_OUTPUT:-}" ]; then printf '%s=%s\n' "$1" "$2" >>"$GITHUB_OUTPUT"; fi; }

# need_token: GITHUB_TOKEN and GITHUB_REPOSITORY set, the token fit for a curl config line.
need_token() {
  : "${GITHUB_TOKEN:?GITHUB_TOKEN is required}" "${GITHUB_REPOSITORY:?GITHUB_REPOSITORY is required}"
  [[ $GITHUB_TOKEN =~ ^[A-Za-z0-9_.-]+$ ]] || die "GITHUB_TOKEN is not a token (letters, digits, _ . -): it goes into a curl config line"
}
# gh_api METHOD PATH [JSON_BODY_FILE]: GitHub's REST API ($GITHUB_API_URL) with GITHUB_TOKEN, sent
# only in a header read from a config on stdin (-K -), never an argument (ps shows those to all).
gh_api() {
  local args=(-fsS -K - -X "$1" -H 'Accept: application/vnd.github+json')
  [ $# -ge 3 ] && args+=(-H 'Content-Type: application/json' --data-binary "@$3")
  printf 'header = "Authorization: Bearer %s"\n' "$GITHUB_TOKEN" | curl "${args[@]}" "${GITHUB_API_URL:-https://api.github.com}$2"
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

# take_token: the job's token (GITHUB_TOKEN, optional) out of the environment into CI_TOKEN, a
# shell variable no command started afterwards inherits. authed_git ARGS...: git with it as an
# HTTP header for the GitHub server only, through git's environment, never as an argument.
take_token() { CI_TOKEN=${GITHUB_TOKEN:-}; unset GITHUB_TOKEN; }
authed_git() {
  if [ -z "${CI_TOKEN:-}" ]; then git "$@"; return; fi
  GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0="http.${GITHUB_SERVER_URL:-https://github.com}/.extraheader" \
    GIT_CONFIG_VALUE_0="AUTHORIZATION: basic $(printf 'x-access-token:%s' "$CI_TOKEN" | base64 -w0)" git "$@"
}
