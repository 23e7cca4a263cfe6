#!/usr/bin/env bash
# Throughput of POST /order as a fraction of GET /health's, on one hft-server in one run.
#
# Starts bin/hft-server on a free loopback port and runs wrk (2 threads, 50 connections)
# against GET /health and POST /order (server/bench/order.lua) in alternating legs, so
# both see the same machine noise. Prints each leg and the ratio
# sum(order req/s) / sum(health req/s). Total time is about 4 + 2 x rounds x duration s.
#
# Usage: server/bench/wrk_ratio.sh [--duration S] [--rounds N] [--workers N]
#                                  [--server PATH] [--min-ratio R]
#   --duration S   seconds per wrk leg, 1..60 (default 5)
#   --rounds N     health+order pairs, 1..10 (default 3)
#   --workers N    passed to hft-server --workers (default: the server's default)
#   --server PATH  server binary (default: bin/hft-server; `make build-rust` builds it)
#   --min-ratio R  exit 1 when the ratio is below R (default 0: report only)
# Exit: 0 done, 1 ratio below --min-ratio or an order answer was not 2xx, 2 could not run.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
duration=5
rounds=3
workers=""
server="$root/bin/hft-server"
min_ratio=0
threads=2
connections=50

die() {
  echo "wrk_ratio.sh: $*" >&2
  exit 2
}

is_uint() { [[ "$1" =~ ^[0-9]+$ ]]; }

while (($#)); do
  case "$1" in
    --duration) duration="${2:-}"; shift 2 ;;
    --rounds) rounds="${2:-}"; shift 2 ;;
    --workers) workers="${2:-}"; shift 2 ;;
    --server) server="${2:-}"; shift 2 ;;
    --min-ratio) min_ratio="${2:-}"; shift 2 ;;
    -h | --help) sed -n '2,17p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument '$1'; see --help" ;;
  esac
done

if ! { is_uint "$duration" && ((duration >= 1 && duration <= 60)); }; then
  die "--duration must be an integer from 1 to 60 (got '$duration')"
fi
if ! { is_uint "$rounds" && ((rounds >= 1 && rounds <= 10)); }; then
  die "--rounds must be an integer from 1 to 10 (got '$rounds')"
fi
if [[ -n "$workers" ]] && ! { is_uint "$workers" && ((workers >= 1)); }; then
  die "--workers must be an integer >= 1 (got '$workers')"
fi
[[ "$min_ratio" =~ ^[0-9]*\.?[0-9]+$ ]] || die "--min-ratio must be a number like 0.8 (got '$min_ratio')"
command -v wrk >/dev/null || die "wrk is not installed; run 'make deps' (apt-get install wrk)"
command -v curl >/dev/null || die "curl is not installed; apt-get install curl"
[[ -x "$server" ]] || die "no server binary at $server; run 'make build-rust' or pass --server PATH"

work="$(mktemp -d)"
server_pid=""
cleanup() {
  if [[ -n "$server_pid" ]] && kill -0 "$server_pid" 2>/dev/null; then
    kill -TERM "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

server_args=(--addr 127.0.0.1:0)
[[ -z "$workers" ]] || server_args+=(--workers "$workers")
"$server" "${server_args[@]}" >"$work/stdout" 2>"$work/server.log" &
server_pid=$!

base=""
for _ in $(seq 100); do
  line="$(head -n 1 "$work/stdout" 2>/dev/null || true)"
  if [[ "$line" =~ ^hft-server\ listening\ on\ (http://127\.0\.0\.1:[0-9]+)$ ]]; then
    base="${BASH_REMATCH[1]}"
    break
  fi
  kill -0 "$server_pid" 2>/dev/null || die "the server exited at startup: $(cat "$work/server.log")"
  sleep 0.1
done
[[ -n "$base" ]] || die "the server printed no startup line within 10 s"

# One wrk leg; prints "<requests/s> <non-2xx answers>".
leg() {
  local url="$1" out
  shift
  out="$(timeout $((duration + 15)) wrk -t"$threads" -c"$connections" -d"${duration}s" \
    --timeout 2s "$@" "$url")" || die "wrk failed against $url: $out"
  awk '/^Requests\/sec:/ { rps = $2 }
       /Non-2xx or 3xx responses:/ { bad = $NF }
       END { if (rps == "") exit 1; printf "%s %d\n", rps, bad + 0 }' <<<"$out" ||
    die "could not read Requests/sec from wrk's output: $out"
}

# Warm-up, not recorded: first connections, page faults, the allocator's first growth.
timeout 20 wrk -t"$threads" -c"$connections" -d2s "$base/health" >/dev/null ||
  die "wrk warm-up against $base/health failed"
timeout 20 wrk -t"$threads" -c"$connections" -d2s -s "$here/order.lua" "$base/order" >/dev/null ||
  die "wrk warm-up against $base/order failed"

echo "hft-server at $base; wrk -t$threads -c$connections, ${duration}s legs, $rounds rounds (after a 2 s warm-up of each)"
printf '%-6s %-8s %14s %10s\n' round endpoint requests/s non-2xx
health_sum=0
order_sum=0
bad_orders=0
for round in $(seq "$rounds"); do
  # Alternate which endpoint goes first, so a drift in machine load hits both alike.
  if ((round % 2)); then legs=(health order); else legs=(order health); fi
  for endpoint in "${legs[@]}"; do
    if [[ "$endpoint" == health ]]; then
      result="$(leg "$base/health")"
      read -r rps bad <<<"$result"
      health_sum="$(awk -v a="$health_sum" -v b="$rps" 'BEGIN { printf "%.2f", a + b }')"
    else
      # Same starting state every leg: empty books, zeroed /stats.
      curl -fsS -X POST "$base/stats/reset" >/dev/null || die "POST /stats/reset failed"
      result="$(leg "$base/order" -s "$here/order.lua")"
      read -r rps bad <<<"$result"
      order_sum="$(awk -v a="$order_sum" -v b="$rps" 'BEGIN { printf "%.2f", a + b }')"
      bad_orders=$((bad_orders + bad))
    fi
    printf '%-6s %-8s %14s %10s\n' "$round" "$endpoint" "$rps" "$bad"
  done
done

ratio="$(awk -v o="$order_sum" -v h="$health_sum" 'BEGIN { printf "%.3f", o / h }')"
echo "stats after the last order leg: $(curl -fsS "$base/stats")"
echo "mean req/s: health $(awk -v s="$health_sum" -v n="$rounds" 'BEGIN { printf "%.0f", s / n }')," \
  "order $(awk -v s="$order_sum" -v n="$rounds" 'BEGIN { printf "%.0f", s / n }')"
echo "ratio order/health: $ratio"
if ((bad_orders > 0)); then
  echo "wrk_ratio.sh: $bad_orders order answers were not 2xx; see the server log" >&2
  exit 1
fi
if awk -v r="$ratio" -v m="$min_ratio" 'BEGIN { exit !(r < m) }'; then
  echo "wrk_ratio.sh: ratio $ratio is below --min-ratio $min_ratio" >&2
  exit 1
fi
