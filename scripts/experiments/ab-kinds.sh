#!/usr/bin/env bash
# The gate against the kinds of change it must see (issue 35), each as `hftbench ab --suite pr`
# of this checkout against itself with the head's server given a calibration knob, and the
# A/A with none. Prints one line per run: kind, status, exit code, seconds measuring, and each
# gated row's verdict and change. The figures of docs/measurements.md ("The verdict against
# the kinds of change") come from it.
#
#   scripts/experiments/ab-kinds.sh OUT RUNS [KIND ...]
#   BUSY=1 scripts/experiments/ab-kinds.sh ...   with a busy loop pinned on CPU 0 (the client's)
#
# KIND: aa | delay | stall | after | contention (default: all five).
set -euo pipefail
out=${1:?usage: ab-kinds.sh OUT RUNS [KIND ...]}
runs=${2:?usage: ab-kinds.sh OUT RUNS [KIND ...]}
shift 2
kinds=("$@")
[ ${#kinds[@]} -gt 0 ] || kinds=(aa delay stall after contention)
root=$(git rev-parse --show-toplevel)
hftbench="$root/.venv/bin/hftbench"
declare -A FLAGS=(
  [aa]=""
  [delay]="--inject-delay-us 4"
  [stall]="--inject-stall-us 50 --inject-stall-every 50"
  [after]="--inject-after-reply-us ${AFTER_US:-30}"
  [contention]="--inject-contention-us ${CONTENTION_US:-40}"
)
busy_pid=
if [ "${BUSY:-0}" = 1 ]; then
  taskset -c 0 sh -c 'while :; do :; done' &
  busy_pid=$!
  trap 'kill "$busy_pid" 2>/dev/null || true' EXIT
fi
mkdir -p "$out"
for i in $(seq 1 "$runs"); do
  for kind in "${kinds[@]}"; do
    dir="$out/$kind-$i"
    code=0
    "$hftbench" ab --base HEAD --head HEAD --suite pr --quiet --out "$dir" \
      --head-server-flags "${FLAGS[$kind]}" > "$dir.log" 2>&1 || code=$?
    "$root/.venv/bin/python" - "$dir/verdict.json" "$kind" "$code" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
rows = [f"{r['scenario']}/{r['metric']}={r['verdict']}({100 * (r['ratio'] - 1):+.1f}%)"
        for r in doc["results"] if r["gated"] and r.get("ratio") is not None and r["metric"] != "errors"]
ab = doc.get("ab") or {}
print(sys.argv[2], doc["status"], f"exit={sys.argv[3]}", f"measured={ab.get('measure_s', '?')}s",
      f"rounds={ab.get('rounds_per_side', '?')}", " ".join(rows), flush=True)
PY
  done
done
