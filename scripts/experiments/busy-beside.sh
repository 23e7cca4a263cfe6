#!/usr/bin/env bash
# What a step of make test's serial stream meets on a CI machine with a core busy (issue 37):
# runs COMMAND RUNS times while a busy loop at normal priority holds CPU 0 and IDLE busy loops
# under SCHED_IDLE stand in for the streams beside it (the parallel pass, cargo's build). Prints
# each run's exit status and the count that failed; the loops are ended by their PIDs.
#
#   scripts/experiments/busy-beside.sh RUNS IDLE COMMAND [ARGS...]
#   e.g. scripts/experiments/busy-beside.sh 4 3 clients/hft/tests/run_integration.sh build/hft/san bin
set -uo pipefail
[ $# -gt 2 ] || { echo "usage: busy-beside.sh RUNS IDLE COMMAND [ARGS...]" >&2; exit 2; }
runs=$1 idle=$2
shift 2
loops=()
trap '[ ${#loops[@]} -eq 0 ] || kill "${loops[@]}" 2>/dev/null' EXIT
taskset -c 0 sh -c 'while :; do :; done' &
loops+=($!)
for _ in $(seq "$idle"); do
  chrt --idle 0 sh -c 'while :; do :; done' &
  loops+=($!)
done
failed=0
for run in $(seq "$runs"); do
  "$@"
  rc=$?
  echo "busy-beside: run $run of $runs: exit $rc" >&2
  [ "$rc" -eq 0 ] || failed=$((failed + 1))
done
echo "busy-beside: $failed of $runs runs failed (a busy loop on CPU 0, $idle SCHED_IDLE loops)" >&2
[ "$failed" -eq 0 ]
