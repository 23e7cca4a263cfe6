#!/usr/bin/env bash
# actions/checkout with a ref, under act: the repository act runs in ($ACT_REPO, a clone whose
# origin is the test's bare repository) copied into the workspace (or its `path`), then REF
# checked out detached there, as actions/checkout does. Each checkout is recorded in
# $ACT_ARTIFACTS/../checkouts.jsonl (job, ref, the commit checked out) for the test to read.
#   env: ACT_REPO, REF, DEST (optional path under the workspace), PERSIST (must be false)
set -euo pipefail
: "${ACT_REPO:?ACT_REPO (the repository act runs in) is required}" "${REF:?the stand-in is only for a ref}"
[ "${PERSIST:-true}" = false ] || { echo "checkout: persist-credentials must be false" >&2; exit 1; }
dest=$GITHUB_WORKSPACE${DEST:+/$DEST}
mkdir -p "$dest"
cp -a "$ACT_REPO/." "$dest/"
git -C "$dest" checkout -q --detach "$REF"
commit=$(git -C "$dest" rev-parse HEAD)
printf '{"job": "%s", "ref": "%s", "commit": "%s"}\n' "$GITHUB_JOB" "$REF" "$commit" \
  >>"$ACT_ARTIFACTS/../checkouts.jsonl"
echo "checkout (act stand-in): $commit into ${dest#"$GITHUB_WORKSPACE"}/"
