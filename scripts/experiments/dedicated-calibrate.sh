#!/usr/bin/env bash
# Calibrates the gate on a machine with cores to spare, the tuned runner's shape (issue 35):
# the duet's two servers on the last CPU (with HFTBENCH_DUET_SPLIT=1 each on one of the last
# two), client-hft busy-polling on CPU 1, hftbench on the others. The figures of
# docs/measurements.md "On 16 cores" come from it.
#
#   scripts/experiments/dedicated-calibrate.sh OUT [SECONDS [calibrate flags ...]]
#
# OUT gets machine.txt (what the machine is and how it was placed), calibrate.log,
# calibration.json and calibration.md, and pool.tar.gz (every round: `hftbench calibrate
# --from` and scripts/experiments/aa-pool.py re-read it anywhere). calibrate is stopped after
# SECONDS (default 420); the rounds measured by then are judged with --from, so a slow machine
# still leaves a calibration of what it measured. Without flags: 40 A/A rounds, 12 of each
# kind of change and 4 solo runs of each server.
# HFTBENCH_SERVER_CPUS / HFTBENCH_CLIENT_CPUS, where set (a tuned runner), are kept. PYTHON
# names the interpreter (default: the checkout's .venv, else python3).
set -uo pipefail
out=${1:?usage: dedicated-calibrate.sh OUT [SECONDS [calibrate flags ...]]}
budget=${2:-420}
shift $(($# < 2 ? $# : 2))
flags=("$@")
[ ${#flags[@]} -gt 0 ] || flags=(--runs 40 --slow-runs 12 --stall-runs 12 --after-runs 12
  --contention-runs 12 --solo-runs 4)
# the analysis flags, for judging a stopped calibrate's rounds with --from
analysis=()
for ((i = 0; i < ${#flags[@]}; i++)); do
  case ${flags[i]} in
    --k | --comparisons | --looks | --bootstrap | --permutations) analysis+=("${flags[i]}" "${flags[i + 1]:-}") ;;
  esac
done
root=$(cd "$(dirname "$0")/../.." && pwd)
py=${PYTHON:-$root/.venv/bin/python}
[ -x "$py" ] || py=$(command -v python3)
export PYTHONPATH="$root/scripts${PYTHONPATH:+:$PYTHONPATH}" HFTBENCH_ROOT="$root"
mkdir -p "$out"
work=$(mktemp -d)

online=$(cat /sys/devices/system/cpu/online)
last=$(($(nproc --all) - 1))
if [ "$last" -lt 3 ]; then
  echo "dedicated-calibrate: $((last + 1)) CPUs; it needs 4 (two servers, the client, hftbench)" >&2
  exit 2
fi
export HFTBENCH_SERVER_CPUS=${HFTBENCH_SERVER_CPUS:-$((last - 1))-$last}
export HFTBENCH_CLIENT_CPUS=${HFTBENCH_CLIENT_CPUS:-1}
# hftbench and its analysis on the CPUs nobody measures on
own=0
[ "$last" -lt 4 ] || own="0,2-$((last - 2))"
{
  echo "date: $(date -u +%FT%TZ)"
  echo "cpus online: $online; isolated: $(cat /sys/devices/system/cpu/isolated 2>/dev/null || echo unknown)"
  echo "model: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)"
  echo "kernel: $(uname -r); governor: $(cat /sys/devices/system/cpu/cpu0/cpufreq/scaling_governor 2>/dev/null || echo none)"
  echo "autogroup: $(cat /proc/sys/kernel/sched_autogroup_enabled 2>/dev/null || echo none)"
  echo "servers: $HFTBENCH_SERVER_CPUS (split: ${HFTBENCH_DUET_SPLIT:-0}); client: $HFTBENCH_CLIENT_CPUS; hftbench: $own"
  echo "python: $("$py" -c 'import sys, numpy, scipy; print(sys.version.split()[0], "numpy", numpy.__version__, "scipy", scipy.__version__)')"
  echo "calibrate ${flags[*]} (stopped after ${budget} s)"
  timeout 60 taskset -c "$own" "$py" -m hftbench check-runner 2>&1 | head -40
} > "$out/machine.txt" 2>&1
cat "$out/machine.txt"

start=$(date +%s)
timeout --signal=INT --kill-after=20 "$budget" taskset -c "$own" \
  "$py" -m hftbench calibrate --suite pr --out "$work/cal" "${flags[@]}" > "$out/calibrate.log" 2>&1
code=$?
echo "calibrate: exit $code after $(($(date +%s) - start)) s" | tee -a "$out/calibrate.log"
if [ ! -f "$work/cal/calibration.json" ] && [ -d "$work/cal/aa" ]; then
  echo "calibrate stopped before its analysis: judging the rounds it measured (--from)" | tee -a "$out/calibrate.log"
  taskset -c "$own" "$py" -m hftbench calibrate --from "$work/cal" --out "$work/from" "${analysis[@]}" >> "$out/calibrate.log" 2>&1
  # Fewer A/A rounds than a look's k (a budget too short for the counts asked): judge them at
  # the k they reach and say so, rather than leave the machine's minutes unread.
  have=$(sed -n 's/.*A\/A needs >= k = [0-9]* rounds, have \([0-9]*\).*/\1/p' "$out/calibrate.log" | tail -1)
  if [ ! -f "$work/from/calibration.json" ] && [ -n "$have" ] && [ "$have" -ge 2 ]; then
    echo "only $have A/A rounds: judged at --k $have, not the gate's k (its coverage and MDE are for $have-round looks; a kind with fewer rounds gets its effects, no tally)" |
      tee -a "$out/calibrate.log"
    taskset -c "$own" "$py" -m hftbench calibrate --from "$work/cal" --out "$work/from" "${analysis[@]}" --k "$have" \
      >> "$out/calibrate.log" 2>&1
  fi
  cp "$work/from/calibration.json" "$work/from/calibration.md" "$out/" 2>/dev/null
else
  cp "$work/cal/calibration.json" "$work/cal/calibration.md" "$out/" 2>/dev/null
fi
tar czf "$out/pool.tar.gz" -C "$work" cal
tail -60 "$out/calibration.md" 2>/dev/null || tail -30 "$out/calibrate.log"
rm -rf "$work"
