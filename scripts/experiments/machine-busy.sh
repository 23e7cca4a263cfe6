#!/usr/bin/env bash
# How busy the whole machine was while a command ran (issue 37: what a stream leaves idle for
# another at low priority): wall seconds, and the CPU-seconds busy and idle across all CPUs, from
# /proc/stat read before and after. The command's exit status is passed on.
#
#   scripts/experiments/machine-busy.sh COMMAND [ARGS...]
#   e.g. scripts/experiments/machine-busy.sh .venv/bin/pytest -m "measuring or act" -q
set -uo pipefail
[ $# -gt 0 ] || { echo "usage: machine-busy.sh COMMAND [ARGS...]" >&2; exit 2; }
ticks=$(getconf CLK_TCK)
read_stat() { awk '/^cpu /{idle=$5+$6; busy=0; for (i=2;i<=NF;i++) busy+=$i; print busy-idle, idle}' /proc/stat; }
read -r busy0 idle0 < <(read_stat)
start=$(date +%s.%N)
"$@"
rc=$?
end=$(date +%s.%N)
read -r busy1 idle1 < <(read_stat)
awk -v s="$start" -v e="$end" -v b=$((busy1 - busy0)) -v i=$((idle1 - idle0)) -v t="$ticks" -v n="$(nproc)" \
  'BEGIN { w = e - s; printf "machine-busy: %.1f s wall, %.0f of %.0f CPU-seconds busy (%d CPUs), %.0f idle\n", w, b/t, (b+i)/t, n, i/t }' >&2
exit "$rc"
