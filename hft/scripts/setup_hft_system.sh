#!/usr/bin/env bash
# setup_hft_system.sh: inspect, apply and revert the run-time system tunings of the HFT
# client (seed 000 "setup_hft_system.sh"). Never reboots and never edits the boot loader:
# the boot-time settings (isolcpus, nohz_full, rcu_nocbs, THP at boot) are printed as advice.
#
#   --check [--json]     one line per knob: current value, recommended value, status
#   --apply              the temporary tunings (root); the previous values are saved first
#   --revert             put back every value --apply saved, then forget the saved state
#   --dry-run            with --apply / --revert (alone: --apply): print, change nothing
#   --hugepages N        2 MiB pages --apply reserves (default 64)
#
# A knob this machine does not have is "unavailable", never an error. The saved state is
# $HFT_STATE_DIR/tuning.state (default /var/lib/hft-bench), one "key<TAB>value" per line.
set -euo pipefail

PROG=setup_hft_system.sh
SYS=${HFT_SYSFS_ROOT:-}          # tests may point the knobs at a fake tree
STATE_DIR=${HFT_STATE_DIR:-/var/lib/hft-bench}
STATE_FILE=$STATE_DIR/tuning.state
HUGEPAGES=64

die() { printf '%s: %s\n' "$PROG" "$*" >&2; exit 2; }
log() { printf '%s: %s\n' "$PROG" "$*"; }

usage() {
  sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'
}

# ---- reading knobs ---------------------------------------------------------------------

THP_ENABLED=$SYS/sys/kernel/mm/transparent_hugepage/enabled
THP_DEFRAG=$SYS/sys/kernel/mm/transparent_hugepage/defrag
NR_HUGEPAGES=$SYS/proc/sys/vm/nr_hugepages
SWAPPINESS=$SYS/proc/sys/vm/swappiness
NUMA_BALANCING=$SYS/proc/sys/kernel/numa_balancing
SMT_CONTROL=$SYS/sys/devices/system/cpu/smt/control
CMDLINE=$SYS/proc/cmdline
CPU_DIR=$SYS/sys/devices/system/cpu
NODE_DIR=$SYS/sys/devices/system/node

# The word in brackets of a sysfs choice file: "always [madvise] never" -> madvise.
bracketed() { sed -n 's/.*\[\([^]]*\)\].*/\1/p' "$1"; }

governor_files() { compgen -G "$CPU_DIR/cpu[0-9]*/cpufreq/scaling_governor" || true; }

read_governor() {
  local files; files=$(governor_files)
  [ -n "$files" ] || { echo unavailable; return; }
  # shellcheck disable=SC2086
  cat $files | sort -u | paste -sd, -
}

read_turbo() {
  if [ -r "$CPU_DIR/intel_pstate/no_turbo" ]; then
    [ "$(cat "$CPU_DIR/intel_pstate/no_turbo")" = 1 ] && echo off || echo on
  elif [ -r "$CPU_DIR/cpufreq/boost" ]; then
    [ "$(cat "$CPU_DIR/cpufreq/boost")" = 1 ] && echo on || echo off
  else
    echo unavailable
  fi
}

read_file_or() { if [ -r "$1" ]; then cat "$1"; else echo "$2"; fi; }

read_thp() { if [ -r "$THP_ENABLED" ]; then bracketed "$THP_ENABLED"; else echo unavailable; fi; }
read_thp_defrag() { if [ -r "$THP_DEFRAG" ]; then bracketed "$THP_DEFRAG"; else echo unavailable; fi; }

# Swap devices in use, comma separated, or "off".
read_swap() {
  local devs
  devs=$(awk 'NR > 1 { print $1 }' "$SYS/proc/swaps" 2>/dev/null | paste -sd, -)
  echo "${devs:-off}"
}

# A kernel boot parameter's value, "" when absent.
boot_param() {
  tr ' ' '\n' <"$CMDLINE" 2>/dev/null | sed -n "s/^$1=//p" | tail -n 1
}

read_isolcpus() {
  local v; v=$(read_file_or "$CPU_DIR/isolated" "")
  [ -n "$v" ] || v=$(boot_param isolcpus)
  echo "${v:-none}"
}
read_nohz_full() {
  local v; v=$(read_file_or "$CPU_DIR/nohz_full" "")
  v=${v//[[:space:]]/}
  [ "$v" = "(null)" ] && v=""
  [ -n "$v" ] || v=$(boot_param nohz_full)
  echo "${v:-none}"
}
read_rcu_nocbs() { local v; v=$(boot_param rcu_nocbs); echo "${v:-none}"; }

read_smt() { read_file_or "$SMT_CONTROL" unavailable; }

read_irqbalance() {
  if pgrep -x irqbalance >/dev/null 2>&1; then echo running
  elif command -v irqbalance >/dev/null 2>&1; then echo stopped
  else echo "not installed"; fi
}

read_numa_nodes() { { compgen -G "$NODE_DIR/node[0-9]*" || true; } | wc -l; }

# ---- the knobs: name, current value, recommended value, kind ---------------------------
# kind: runtime (--apply changes it), report (advice only), boot (kernel command line).

KNOBS=(governor turbo thp thp_defrag hugepages swappiness swap numa_balancing
       isolcpus nohz_full rcu_nocbs smt irqbalance numa_nodes)

# CPUs to isolate at boot: every online CPU but the first (kept for housekeeping).
isolate_list() {
  local n; n=$(getconf _NPROCESSORS_ONLN)
  if [ "$n" -le 1 ]; then echo ""; elif [ "$n" -eq 2 ]; then echo 1; else echo "1-$((n - 1))"; fi
}

current() {
  case $1 in
    governor) read_governor ;;
    turbo) read_turbo ;;
    thp) read_thp ;;
    thp_defrag) read_thp_defrag ;;
    hugepages) read_file_or "$NR_HUGEPAGES" unavailable ;;
    swappiness) read_file_or "$SWAPPINESS" unavailable ;;
    swap) read_swap ;;
    numa_balancing) read_file_or "$NUMA_BALANCING" unavailable ;;
    isolcpus) read_isolcpus ;;
    nohz_full) read_nohz_full ;;
    rcu_nocbs) read_rcu_nocbs ;;
    smt) read_smt ;;
    irqbalance) read_irqbalance ;;
    numa_nodes) read_numa_nodes ;;
  esac
}

recommended() {
  case $1 in
    governor) echo performance ;;
    turbo) echo off ;;
    thp | thp_defrag) echo never ;;
    hugepages) echo "$HUGEPAGES" ;;
    swappiness) echo 1 ;;
    swap) echo off ;;
    numa_balancing) echo 0 ;;
    isolcpus | nohz_full | rcu_nocbs) local l; l=$(isolate_list); echo "${l:-none}" ;;
    smt) echo off ;;
    irqbalance) echo stopped ;;
    numa_nodes) echo "-" ;;
  esac
}

kind() {
  case $1 in
    governor | thp | thp_defrag | hugepages | swappiness | swap | numa_balancing | irqbalance) echo runtime ;;
    isolcpus | nohz_full | rcu_nocbs) echo boot ;;
    *) echo report ;;
  esac
}

# tuned | not tuned | unavailable | info
status_of() {
  local name=$1 cur=$2 rec=$3
  case $cur in unavailable | notsupported | notimplemented | "not installed") echo unavailable; return ;; esac
  [ "$name" = numa_nodes ] && { echo info; return; }
  if [ "$name" = hugepages ]; then
    [ "$cur" -ge "$rec" ] && echo tuned || echo "not tuned"
    return
  fi
  if [ "$name" = governor ]; then
    [ "$cur" = performance ] && echo tuned || echo "not tuned"
    return
  fi
  [ "$cur" = "$rec" ] && echo tuned || echo "not tuned"
}

# ---- --check ---------------------------------------------------------------------------

json_str() {
  local s=$1
  s=${s//\\/\\\\}; s=${s//\"/\\\"}; s=${s//$'\t'/ }; s=${s//$'\n'/ }
  printf '"%s"' "$s"
}

check_json() {
  local first=1 name cur rec
  printf '{\n  "schema_version": 1,\n  "tool": "setup_hft_system.sh",\n'
  printf '  "kernel": %s,\n' "$(json_str "$(uname -r)")"
  printf '  "cpus_online": %s,\n' "$(getconf _NPROCESSORS_ONLN)"
  printf '  "knobs": {\n'
  for name in "${KNOBS[@]}"; do
    cur=$(current "$name"); rec=$(recommended "$name")
    [ $first = 1 ] || printf ',\n'
    first=0
    printf '    %s: {"value": %s, "recommended": %s, "status": %s, "kind": %s}' \
      "$(json_str "$name")" "$(json_str "$cur")" "$(json_str "$rec")" \
      "$(json_str "$(status_of "$name" "$cur" "$rec")")" "$(json_str "$(kind "$name")")"
  done
  printf '\n  },\n  "saved_state": %s\n}\n' "$([ -f "$STATE_FILE" ] && echo true || echo false)"
}

check_table() {
  local name cur rec
  printf '%-15s %-22s %-14s %-12s %s\n' knob current recommended status kind
  printf '%-15s %-22s %-14s %-12s %s\n' --------------- ---------------------- -------------- ------------ -------
  for name in "${KNOBS[@]}"; do
    cur=$(current "$name"); rec=$(recommended "$name")
    printf '%-15s %-22s %-14s %-12s %s\n' "$name" "$cur" "$rec" "$(status_of "$name" "$cur" "$rec")" "$(kind "$name")"
  done
  [ -f "$STATE_FILE" ] && printf '\nsaved state: %s (run --revert to restore it)\n' "$STATE_FILE"
  boot_advice
}

boot_advice() {
  local l; l=$(isolate_list)
  printf '\nBoot-time settings (not applied by this script; edit the boot loader yourself, then reboot):\n'
  if [ -n "$l" ]; then
    printf '  kernel command line: isolcpus=%s nohz_full=%s rcu_nocbs=%s transparent_hugepage=never\n' "$l" "$l" "$l"
    printf '  then pin the client with: bin/client-hft --cpus %s\n' "$l"
  else
    printf '  one CPU only: nothing to isolate; transparent_hugepage=never\n'
  fi
  printf '  SMT off: "nosmt" on the kernel command line (or echo off > /sys/devices/system/cpu/smt/control)\n'
  printf '  turbo: disable in firmware or intel_pstate/no_turbo for a steady clock (costs peak speed)\n'
}

# ---- --apply / --revert ----------------------------------------------------------------

DRY=0

run() { # run CMD...: do it, or print it under --dry-run
  if [ $DRY = 1 ]; then log "would run: $*"; else "$@"; fi
}

write_knob() { # write_knob PATH VALUE
  if [ $DRY = 1 ]; then log "would write '$2' to $1"; return 0; fi
  if ! printf '%s\n' "$2" >"$1" 2>/dev/null; then
    log "warning: cannot write '$2' to $1 (read-only here); left as is"
    return 1
  fi
  log "wrote '$2' to $1"
}

saved() { [ -f "$STATE_FILE" ] && awk -F'\t' -v k="$1" '$1 == k { print $2; found = 1 } END { exit !found }' "$STATE_FILE"; }

save() { # save KEY VALUE: remember the value before the first change (a second --apply keeps the first)
  [ $DRY = 1 ] && return 0
  saved "$1" >/dev/null && return 0
  mkdir -p "$STATE_DIR"
  printf '%s\t%s\n' "$1" "$2" >>"$STATE_FILE"
}

set_knob() { # set_knob KEY PATH VALUE: save the old value, write the new one
  local key=$1 path=$2 value=$3 old
  [ -e "$path" ] || { log "$key: unavailable on this machine ($path missing)"; return 0; }
  old=$(if [ "${key#thp}" != "$key" ]; then bracketed "$path"; else cat "$path"; fi)
  [ "$old" = "$value" ] && { log "$key: already $value"; return 0; }
  save "$key:$path" "$old"
  write_knob "$path" "$value" || true
}

need_root() {
  [ $DRY = 1 ] && return 0
  [ "$(id -u)" -eq 0 ] || [ -n "$SYS" ] || die "$1 needs root: run 'sudo $0 $1' (or add --dry-run to see what it would do)"
}

apply() {
  need_root --apply
  local f
  for f in $(governor_files); do set_knob "governor" "$f" performance; done
  [ -n "$(governor_files)" ] || log "governor: unavailable on this machine (no cpufreq)"
  set_knob thp "$THP_ENABLED" never
  set_knob thp_defrag "$THP_DEFRAG" never
  set_knob swappiness "$SWAPPINESS" 1
  set_knob numa_balancing "$NUMA_BALANCING" 0
  if [ -e "$NR_HUGEPAGES" ] && [ "$(cat "$NR_HUGEPAGES")" -lt "$HUGEPAGES" ]; then
    set_knob hugepages "$NR_HUGEPAGES" "$HUGEPAGES"
  else
    log "hugepages: $(read_file_or "$NR_HUGEPAGES" unavailable) reserved, nothing to do"
  fi
  local swap; swap=$(read_swap)
  if [ "$swap" != off ]; then
    save swap "$swap"
    run swapoff -a
  else
    log "swap: already off"
  fi
  if [ "$(read_irqbalance)" = running ]; then
    save irqbalance running
    if command -v systemctl >/dev/null && systemctl is-active -q irqbalance 2>/dev/null; then
      run systemctl stop irqbalance
    else
      run pkill -x irqbalance
    fi
  else
    log "irqbalance: $(read_irqbalance), nothing to do"
  fi
  [ $DRY = 1 ] || [ ! -f "$STATE_FILE" ] || log "previous values saved in $STATE_FILE; undo with --revert"
  boot_advice
}

revert() {
  need_root --revert
  [ -f "$STATE_FILE" ] || { log "nothing to revert: no saved state at $STATE_FILE"; return 0; }
  local key value path failed=0
  while IFS=$'\t' read -r key value; do
    case $key in
      swap)
        local dev
        for dev in ${value//,/ }; do run swapon "$dev" || failed=1; done ;;
      irqbalance)
        if command -v systemctl >/dev/null && systemctl cat irqbalance >/dev/null 2>&1; then
          run systemctl start irqbalance || failed=1
        else
          run irqbalance || failed=1
        fi ;;
      *:*)
        path=${key#*:}
        write_knob "$path" "$value" || failed=1 ;;
      *) log "warning: unknown saved key '$key' in $STATE_FILE; skipped" ;;
    esac
  done <"$STATE_FILE"
  [ $DRY = 1 ] && return 0
  if [ $failed = 0 ]; then
    rm -f "$STATE_FILE"
    log "reverted; $STATE_FILE removed"
  else
    die "some values could not be restored; $STATE_FILE kept, fix the cause and re-run --revert"
  fi
}

# ---- flags -----------------------------------------------------------------------------

main() {
  local action="" json=0
  [ $# -gt 0 ] || { usage; exit 2; }
  while [ $# -gt 0 ]; do
    case $1 in
      --check) action=check ;;
      --json) json=1 ;;
      --apply) action=apply ;;
      --revert) action=revert ;;
      --dry-run) DRY=1 ;;
      --hugepages)
        [ $# -ge 2 ] || die "--hugepages needs a number; pass e.g. --hugepages 64"
        HUGEPAGES=$2; shift ;;
      --hugepages=*) HUGEPAGES=${1#*=} ;;
      -h | --help) usage; exit 0 ;;
      *) die "unknown flag '$1'; see --help" ;;
    esac
    shift
  done
  [[ $HUGEPAGES =~ ^[0-9]+$ ]] || die "--hugepages must be an integer >= 0 (got '$HUGEPAGES'); pass e.g. --hugepages 64"
  [ -n "$action" ] || { [ $DRY = 1 ] && action=apply; }
  [ $json = 0 ] || [ "$action" = check ] || die "--json goes with --check; pass --check --json"
  case $action in
    check) if [ $json = 1 ]; then check_json; else check_table; fi ;;
    apply) apply ;;
    revert) revert ;;
    *) die "say what to do: --check, --apply, --revert or --dry-run" ;;
  esac
}

main "$@"
