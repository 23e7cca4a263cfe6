#!/usr/bin/env bash
# The stand-in's step: what the real action does with auto-push false (see ../README.md).
set -euo pipefail
jq -nc --arg name "$NAME" --arg tool "$TOOL" --arg file "$FILE" --arg auto_push "$AUTO_PUSH" \
  --arg token_given "$TOKEN_GIVEN" --arg summary "$SUMMARY_ALWAYS" \
  --arg skip_fetch "$SKIP_FETCH" \
  '{name: $name, tool: $tool, file: $file, auto_push: $auto_push, token_given: $token_given, summary_always: $summary, skip_fetch: $skip_fetch}' \
  >>"$ACT_ARTIFACTS/../benchmark-action.jsonl"
[ "$AUTO_PUSH" = false ] || { echo "stand-in: only auto-push: false is modelled" >&2; exit 1; }
[ -s "$FILE" ] || { echo "github-action-benchmark: $FILE is empty or missing" >&2; exit 1; }
sha=$(git rev-parse HEAD)
if [ "$SKIP_FETCH" = true ]; then  # as the action: work on the local branch, which must exist
  git rev-parse -q --verify refs/heads/gh-pages >/dev/null || { echo "github-action-benchmark: no local gh-pages branch (skip-fetch-gh-pages)" >&2; exit 1; }
elif ! git rev-parse -q --verify refs/heads/gh-pages >/dev/null; then
  git fetch -q origin +refs/heads/gh-pages:refs/heads/gh-pages
fi
work=$(mktemp -d)
git worktree add -q "$work/pages" gh-pages
mkdir -p "$work/pages/$DIR"
data=$work/pages/$DIR/data.js
entry=$(jq -nc --arg name "$NAME" --arg tool "$TOOL" --arg sha "$sha" --rawfile text "$FILE" \
  '{name: $name, tool: $tool, commit: $sha, bytes: ($text | length)}')
if [ -f "$data" ]; then old=$(sed 's/^window.BENCHMARK_DATA = //' "$data"); else old='{"entries": {}}'; fi
jq --argjson e "$entry" '.entries[$e.name] += [$e]' <<<"$old" | sed '1s/^/window.BENCHMARK_DATA = /' >"$data"
[ -f "$work/pages/$DIR/index.html" ] || echo '<script src="https://cdn.jsdelivr.net/npm/chart.js@2.9.2/dist/Chart.min.js"></script>' >"$work/pages/$DIR/index.html"
git -C "$work/pages" add -A
git -C "$work/pages" -c user.name=github-action-benchmark -c user.email=gab@localhost commit -qm "add $NAME ($TOOL) benchmark result for $sha"
git worktree remove "$work/pages"
rm -rf "$work"
[ "$SUMMARY_ALWAYS" != true ] || echo "### $NAME: benchmark result for $sha" >>"$GITHUB_STEP_SUMMARY"
