#!/usr/bin/env bash
# What CI's `.ci/run` costs on this machine (docs/measurements.md, "CI timings"): a clean clone of
# this checkout's HEAD, CI=true, then `make lint`, `make test` and `make check`, each timed; every
# line of make test's output stamped with the seconds since it started, so the streams' steps
# can be read off (the build, the serial stream's steps, the passes' ends). BUSY=1 keeps one core
# busy meanwhile (`taskset -c 0` spinning, ended by its PID) and leaves make check out.
#
#   scripts/experiments/clean-clone.sh OUT        e.g. OUT=/tmp/cc-quiet; BUSY=1 ... OUT
#
# OUT/clone is the clone; OUT/lint.log, OUT/test.log (stamped), OUT/check.log; OUT/times the summary.
set -uo pipefail
[ $# -eq 1 ] || { echo "usage: [BUSY=1] clean-clone.sh OUT (a folder to create)" >&2; exit 2; }
out=$1
[ ! -e "$out" ] || { echo "clean-clone.sh: $out exists: name a new folder" >&2; exit 2; }
mkdir -p "$out"
out=$(cd "$out" && pwd)
git clone -q "$(git rev-parse --show-toplevel)" "$out/clone" || exit 1
cd "$out/clone" || exit 1
export CI=true
spin=""
if [ "${BUSY:-0}" = 1 ]; then
  taskset -c 0 sh -c 'while :; do :; done' &
  spin=$!
fi
tenths() { local us=${EPOCHREALTIME/./}; echo $((us / 100000)); } # no fork a line
stamp() {
  local start now line
  start=$(tenths)
  while IFS= read -r line; do
    now=${EPOCHREALTIME/./}
    now=$((now / 100000 - start))
    printf '%5d.%d %s\n' $((now / 10)) $((now % 10)) "$line"
  done
}
timed() { # NAME COMMAND...: runs it, its output to OUT/NAME.log; prints "NAME rc N S s"
  local name=$1 t0 rc
  shift
  t0=$(tenths)
  "$@" >"$out/$name.log" 2>&1
  rc=$?
  printf '%s rc %s %d s\n' "$name" "$rc" $((($(tenths) - t0) / 10))
}
stamped_make_test() { make test 2>&1 | stamp; }
{
  timed lint make lint
  timed test stamped_make_test
  [ -n "$spin" ] || timed check make check
  echo "head $(git rev-parse --short HEAD)${spin:+, one core busy}"
} >"$out/times" 2>&1
[ -z "$spin" ] || kill "$spin"
cat "$out/times"
