#!/usr/bin/env bash
# What make test's stream beside the serial one (test-beside) does when the serial stream leaves
# it nothing (issue 37): runs COMMAND under $BESIDE (by default the Makefile's: `chrt --idle 0`,
# else `nice -n 19`) while busy loops at normal priority take every CPU for ON seconds of every
# PERIOD. A test that fails here keeps a clock and belongs in the serial stream (conftest.py:
# measuring). The busy loops are ended by their PIDs.
#
#   scripts/experiments/starve-beside.sh ON PERIOD COMMAND [ARGS...]
#   e.g. scripts/experiments/starve-beside.sh 8 12 .venv/bin/pytest -m "not measuring and not act" -n 2
set -uo pipefail
[ $# -gt 2 ] || { echo "usage: starve-beside.sh ON PERIOD COMMAND [ARGS...]" >&2; exit 2; }
on=$1 period=$2
shift 2
loops=()
stop_loops() { [ ${#loops[@]} -eq 0 ] || kill "${loops[@]}" 2>/dev/null; loops=(); }
starve() {
  trap 'stop_loops; exit 0' TERM
  while :; do
    for _ in $(seq "$(nproc)"); do sh -c 'while :; do :; done' & loops+=($!); done
    sleep "$on" & wait $!
    stop_loops
    sleep $((period - on)) & wait $!
  done
}
starve &
starver=$!
root=$(git rev-parse --show-toplevel)
# shellcheck disable=SC2016  # $(BESIDE) is make's variable, expanded by make
read -ra beside <<<"${BESIDE:-$(make -s -C "$root" --eval 'print-beside: ; @echo $(BESIDE)' print-beside)}"
"${beside[@]}" "$@"
rc=$?
kill -TERM "$starver"
wait "$starver"
exit "$rc"
