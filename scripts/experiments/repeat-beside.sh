#!/usr/bin/env bash
# A serial-pass test's failure rate under make test's conditions (issue 37): runs COMMAND N
# times, one after another, while make test's parallel pass (test-python under $BESIDE) runs
# over and over beside it, and with BUSY=1 one core kept busy as in the busy clean clones.
# Prints one line per run (exit status, seconds) and the count that failed; each run's output
# is kept in OUTDIR/run-I.log; `{i}` in an argument becomes the run's number (pytest's
# `--basetemp OUTDIR/tmp-{i}` keeps every run's folders, e.g. a bisect.json). The loops are
# ended by their PIDs (the parallel pass's by its process group).
#
#   [BUSY=1] scripts/experiments/repeat-beside.sh N OUTDIR COMMAND [ARGS...]
#   e.g. scripts/experiments/repeat-beside.sh 20 /tmp/pp .venv/bin/pytest -q \
#          --basetemp /tmp/pp/tmp-{i} scripts/tests/ci/test_ci_push_path.py -k flags_a_slowdown
set -uo pipefail
[ $# -gt 2 ] || { echo "usage: [BUSY=1] repeat-beside.sh N OUTDIR COMMAND [ARGS...]" >&2; exit 2; }
n=$1 out=$2
shift 2
mkdir -p "$out"
root=$(git rev-parse --show-toplevel)
# shellcheck disable=SC2016  # $(BESIDE) is make's variable, expanded by make
read -ra beside <<<"${BESIDE:-$(make -s -C "$root" --eval 'print-beside: ; @echo $(BESIDE)' print-beside)}"
# The parallel pass loops in its own process group (setsid), so that ending the group by its
# PID ends make, pytest and its workers with it.
# shellcheck disable=SC2016  # expanded by the inner shell
setsid bash -c 'i=0; while :; do i=$((i + 1)); "${@:3}" make -s -C "$1" test-python >"$2/beside-$i.log" 2>&1; done' \
  loop "$root" "$out" "${beside[@]}" &
group=$!
busy=
if [ "${BUSY:-0}" = 1 ]; then
  taskset -c 0 sh -c 'while :; do :; done' &
  busy=$!
fi
# shellcheck disable=SC2317  # called by the trap
stop() { kill -- "-$group" 2>/dev/null; [ -z "$busy" ] || kill "$busy" 2>/dev/null; }
trap stop EXIT
failed=0
for i in $(seq "$n"); do
  start=$(date +%s.%N)
  args=()
  for a in "$@"; do args+=("${a//\{i\}/$i}"); done
  "${args[@]}" >"$out/run-$i.log" 2>&1
  rc=$?
  [ "$rc" -eq 0 ] || failed=$((failed + 1))
  awk -v i="$i" -v rc="$rc" -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "run %d: exit %d, %.1f s\n", i, rc, e - s }'
done
echo "repeat-beside: $failed of $n failed (BUSY=${BUSY:-0}); logs in $out"
[ "$failed" -eq 0 ]
