#!/usr/bin/env bash
# compare_performance.sh: the seed 001 comparison, measured in one run against one server:
#   1. latency at 1 connection, closed loop: standard C client vs HFT client vs the floor
#   2. throughput at --connections (default 50): standard C client vs HFT client vs wrk
# Prints two markdown tables with the improvement per row; keeps every result JSON in --out.
#
#   --orders N        measured orders of each latency run (default 20000)
#   --warmup W        warm-up orders (default 2000)
#   --connections C   connections of the throughput runs (default 50)
#   --tput-orders N   measured orders of each client's throughput run (default 100000)
#   --wrk-seconds S   wrk's run time (default 5)
#   --cpus LIST       passed to client-hft and hft-floor (default: theirs)
#   --out DIR         where the result JSONs go (default: a new folder under /tmp)
#   --bin DIR         where hft-server, client-c, client-hft, hft-floor are (default: <repo>/bin)
# The server is started by `hftbench serve` (scripts/hftbench/commands/serve.py), which runs this
# script again with HFTBENCH_SERVER_URL set and stops the server when it ends.
set -euo pipefail

PROG=compare_performance.sh
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=$ROOT/bin
ORDERS=20000 WARMUP=2000 CONNS=50 TPUT_ORDERS=100000 WRK_SECONDS=5 CPUS="" OUT=""

die() { printf '%s: %s\n' "$PROG" "$*" >&2; exit 2; }
usage() { sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; }

ARGS=("$@")
int_flag() { [[ $2 =~ ^[1-9][0-9]*$ ]] || die "$1 must be an integer >= 1 (got '$2'); pass e.g. $1 $3"; }

while [ $# -gt 0 ]; do
  case $1 in
    --orders) ORDERS=${2:-}; int_flag --orders "$ORDERS" 20000; shift ;;
    --warmup) WARMUP=${2:-}; [[ $WARMUP =~ ^[0-9]+$ ]] || die "--warmup must be an integer >= 0; pass e.g. --warmup 2000"; shift ;;
    --connections) CONNS=${2:-}; int_flag --connections "$CONNS" 50; shift ;;
    --tput-orders) TPUT_ORDERS=${2:-}; int_flag --tput-orders "$TPUT_ORDERS" 100000; shift ;;
    --wrk-seconds) WRK_SECONDS=${2:-}; int_flag --wrk-seconds "$WRK_SECONDS" 5; shift ;;
    --cpus) CPUS=${2:-}; [ -n "$CPUS" ] || die "--cpus needs a CPU list; pass e.g. --cpus 1"; shift ;;
    --out) OUT=${2:-}; [ -n "$OUT" ] || die "--out needs a folder; pass e.g. --out /tmp/compare"; shift ;;
    --bin) BIN=${2:-}; [ -d "$BIN" ] || die "--bin '$BIN' is not a folder; pass the folder of make build's binaries"; shift ;;
    -h | --help) usage; exit 0 ;;
    *) die "unknown flag '$1'; see --help" ;;
  esac
  shift
done

for exe in hft-server client-c client-hft hft-floor; do
  [ -x "$BIN/$exe" ] || die "$BIN/$exe missing: run 'make build' (or pass --bin)"
done
command -v wrk >/dev/null || die "wrk not found: run 'make deps' (apt-get install wrk)"
command -v jq >/dev/null || die "jq not found: run 'make deps' (apt-get install jq)"
OUT=${OUT:-$(mktemp -d /tmp/hft-compare.XXXXXX)}
mkdir -p "$OUT"
if [ -z "${HFTBENCH_SERVER_URL:-}" ]; then
  [ -x "$ROOT/.venv/bin/hftbench" ] || die "$ROOT/.venv/bin/hftbench missing: run 'make deps'"
  exec "$ROOT/.venv/bin/hftbench" serve --bin "$BIN" --log "$OUT/server.log" -- "$0" "${ARGS[@]}" --out "$OUT"
fi
URL=$HFTBENCH_SERVER_URL
HFT_FLAGS=()
[ -z "$CPUS" ] || HFT_FLAGS=(--cpus "$CPUS")

run() { # run NAME CMD...: a bounded client run into $OUT/NAME.json; exit 1 (some failed) is reported, not fatal
  local name=$1 rc=0; shift
  printf '%s: %s\n' "$PROG" "$name" >&2
  timeout 600 "$@" --output "$OUT/$name.json" 2>"$OUT/$name.err" || rc=$?
  [ "$rc" -le 1 ] || die "$name failed (exit $rc): $(cat "$OUT/$name.err")"
  [ "$rc" = 0 ] || printf '%s: warning: %s had failed orders: %s\n' "$PROG" "$name" "$(jq -c .error_kinds "$OUT/$name.json")" >&2
}

LAT=(--url "$URL" --orders "$ORDERS" --warmup "$WARMUP" --connections 1 --scenario latency-1c)
TPUT=(--url "$URL" --orders "$TPUT_ORDERS" --warmup "$WARMUP" --connections "$CONNS" --scenario "throughput-${CONNS}c")
run floor "$BIN/hft-floor" --orders "$ORDERS" --warmup "$WARMUP" --connections 1 --scenario latency-1c "${HFT_FLAGS[@]}"
run c_1c "$BIN/client-c" "${LAT[@]}"
run hft_1c "$BIN/client-hft" "${LAT[@]}" "${HFT_FLAGS[@]}"
run c_tput "$BIN/client-c" "${TPUT[@]}"
run hft_tput "$BIN/client-hft" "${TPUT[@]}" "${HFT_FLAGS[@]}"

# wrk: the same server, --connections connections, requests cycling over real order bodies.
PY=$ROOT/.venv/bin/python
[ -x "$PY" ] || PY=python3
"$PY" - "$OUT/orders.lua" <<'EOF'
import sys
M = (1 << 64) - 1
def mix(z):
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M
    return z ^ (z >> 31)
bodies = []
for k in range(256):  # the order stream of seed 1 (clients/README.md), a fixed timestamp
    x = mix((1 + (k + 1) * 0x9E3779B97F4A7C15) & M)
    r = (x >> 32) % 100
    pt, tif = ("market", "ioc") if r < 5 else ("limit", "rod") if r < 75 else ("limit", "ioc") if r < 95 else ("limit", "fok")
    cents = 10000 + 5 * ((x >> 16) % 21 - 10)
    bodies.append('{"buy_sell":"%s","symbol":%d,"price":%d.%02d,"quantity":%d,"market_type":"common","price_type":"%s","time_in_force":"%s","order_type":"stock","user_def":"hftbench","client_timestamp":"2026-11-22T00:00:00.000000Z"}' % (
        "buy" if ((x >> 8) & 1) == 0 else "sell", [2330, 2317, 2454, 2308, 2412, 2881, 2882, 1301][x % 8],
        cents // 100, cents % 100, ((x >> 24) % 10 + 1) * 100, pt, tif))
with open(sys.argv[1], "w") as f:
    f.write("local bodies = {\n" + ",\n".join("[[%s]]" % b for b in bodies) + "\n}\n")
    f.write('local reqs, i = {}, 0\n'
            'init = function(args)\n'
            '  for n, b in ipairs(bodies) do reqs[n] = wrk.format("POST", "/order", {["Content-Type"] = "application/json"}, b) end\n'
            'end\n'
            'request = function() i = i % #reqs + 1; return reqs[i] end\n')
EOF
printf '%s: wrk\n' "$PROG" >&2
WRK_THREADS=$(( $(getconf _NPROCESSORS_ONLN) < CONNS ? $(getconf _NPROCESSORS_ONLN) : CONNS ))
wrk -t "$WRK_THREADS" -c "$CONNS" -d "${WRK_SECONDS}s" -s "$OUT/orders.lua" --latency "$URL/order" >"$OUT/wrk.txt"
WRK_RPS=$(awk '/^Requests\/sec:/ { print $2 }' "$OUT/wrk.txt")
WRK_BAD=$(awk '/Non-2xx or 3xx responses:/ { print $NF }' "$OUT/wrk.txt")
[ -n "$WRK_RPS" ] || die "wrk printed no Requests/sec: $(cat "$OUT/wrk.txt")"

# ---- the tables ----
get() { jq -r "$2 // \"null\"" "$OUT/$1.json"; }
ms() { awk -v v="$1" 'BEGIN { if (v == "null") print "-"; else printf "%.3f ms", v / 1000 }'; }
rps() { awk -v v="$1" 'BEGIN { printf "%\047.0f req/s", v }'; }
# change BASE NEW LOWER_IS_BETTER: "↓ 12.3%" / "↑ 4.0%" / "≈ same" (within 0.5%)
change() {
  awk -v a="$1" -v b="$2" 'BEGIN {
    if (a == "null" || b == "null" || a == 0) { print "-"; exit }
    d = (b - a) / a * 100
    if (d > -0.5 && d < 0.5) print "≈ same"; else if (d < 0) printf "↓ %.1f%%\n", -d; else printf "↑ %.1f%%\n", d }'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "null" || b == "null" || b == 0) print "-"; else printf "%.2f×\n", a / b }'; }

echo "## Latency, 1 connection, closed loop ($ORDERS orders, $WARMUP warm-up), one server, one run"
echo
echo "| metric | standard C (client-c) | HFT (client-hft) | change | floor (hft-floor) | HFT / floor |"
echo "|---|---|---|---|---|---|"
for f in min mean p50 p90 p99 p999 max stddev; do
  c=$(get c_1c ".latency_us.$f") h=$(get hft_1c ".latency_us.$f") fl=$(get floor ".latency_us.$f")
  printf '| %s | %s | %s | %s | %s | %s |\n' "$f" "$(ms "$c")" "$(ms "$h")" "$(change "$c" "$h")" "$(ms "$fl")" "$(ratio "$h" "$fl")"
done
c=$(get c_1c .throughput_rps) h=$(get hft_1c .throughput_rps) fl=$(get floor .throughput_rps)
printf '| throughput | %s | %s | %s | %s | %s |\n' "$(rps "$c")" "$(rps "$h")" "$(change "$c" "$h")" "$(rps "$fl")" "$(ratio "$h" "$fl")"
echo
echo "## Throughput, $CONNS connections, closed loop ($TPUT_ORDERS orders each; wrk for ${WRK_SECONDS} s)"
echo
echo "| metric | standard C (client-c) | HFT (client-hft) | change | wrk | HFT / wrk |"
echo "|---|---|---|---|---|---|"
c=$(get c_tput .throughput_rps) h=$(get hft_tput .throughput_rps)
printf '| throughput | %s | %s | %s | %s | %s |\n' "$(rps "$c")" "$(rps "$h")" "$(change "$c" "$h")" "$(rps "$WRK_RPS")" "$(ratio "$h" "$WRK_RPS")"
for f in p50 p99; do
  c=$(get c_tput ".latency_us.$f") h=$(get hft_tput ".latency_us.$f")
  w=$(awk -v f="$f" '$1 == (f == "p50" ? "50%" : "99%") { v = $2; u = v; sub(/[0-9.]+/, "", u); sub(/[a-z]+$/, "", v);
        print (u == "ms" ? v * 1000 : u == "s" ? v * 1e6 : v) }' "$OUT/wrk.txt")
  printf '| %s | %s | %s | %s | %s | - |\n' "$f" "$(ms "$c")" "$(ms "$h")" "$(change "$c" "$h")" "$(ms "${w:-null}")"
done
echo
echo "errors: client-c $(get c_1c .errors)/$(get c_tput .errors), client-hft $(get hft_1c .errors)/$(get hft_tput .errors), floor $(get floor .errors), wrk non-2xx ${WRK_BAD:-0}"
echo "HFT tuning: $(jq -c .extra.tuning "$OUT/hft_1c.json")"
echo "results: $OUT"
