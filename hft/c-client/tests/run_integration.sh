#!/usr/bin/env bash
# run_integration.sh SAN_BUILD BIN: the sanitized client-hft and hft-floor against a real
# bin/hft-server (port 0, small bounded runs), then the plain build under valgrind.
# Every run is bounded by --orders / --duration and by `timeout`.
# The server is started by `hftbench serve` (scripts/hftbench/serve.py), which runs this
# script again with HFTBENCH_SERVER_URL set and stops the server when it ends.
set -euo pipefail
SAN=$1
BIN=$2
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
VG_BUILD=$ROOT/build/hft/valgrind

fail() { printf 'run_integration: FAIL: %s\n' "$*" >&2; exit 1; }
pass() { printf 'run_integration: ok: %s\n' "$*"; }

if [ -z "${HFTBENCH_SERVER_URL:-}" ]; then
  [ -x "$ROOT/.venv/bin/hftbench" ] || fail "$ROOT/.venv/bin/hftbench missing: run make deps"
  exec "$ROOT/.venv/bin/hftbench" serve --bin "$BIN" -- "$0" "$@"
fi
URL=$HFTBENCH_SERVER_URL
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# check NAME EXPECTED_RC CMD...: run, compare the exit status, keep stderr for the caller.
check_rc() {
  local name=$1 want=$2; shift 2
  local rc=0
  timeout 120 "$@" >"$TMP/$name.out" 2>"$TMP/$name.err" || rc=$?
  [ "$rc" = "$want" ] || fail "$name: exit $rc, expected $want; stderr: $(cat "$TMP/$name.err")"
}

# expect_ok NAME ORDERS: the result JSON has every order ok and the client/mode it should.
expect_ok() {
  local json=$TMP/$1.json orders=$2 client=${3:-hft}
  [ "$(jq -r .client "$json")" = "$client" ] || fail "$1: client is not $client"
  [ "$(jq .ok "$json")" = "$orders" ] || fail "$1: ok=$(jq .ok "$json"), expected $orders"
  [ "$(jq .errors "$json")" = 0 ] || fail "$1: errors in $(jq -c .error_kinds "$json")"
  jq -e '.extra.tuning | keys == ["affinity","hugepages","mlockall","numa","rt_priority"]' "$json" >/dev/null ||
    fail "$1: extra.tuning has not the documented keys"
  jq -e '.latency_us.p50 > 0 and .histogram.data[0:5] == "HISTF"' "$json" >/dev/null || fail "$1: no latency"
  if [ -x "$ROOT/.venv/bin/python" ]; then
    "$ROOT/.venv/bin/python" - "$json" "$ROOT/bench-config/schema/result.schema.json" <<'EOF' || fail "$1: schema"
import json, sys, jsonschema
v = jsonschema.Draft202012Validator(json.load(open(sys.argv[2])), format_checker=jsonschema.FormatChecker())
errors = [e.message for e in v.iter_errors(json.load(open(sys.argv[1])))]
sys.exit(print(errors) or 1 if errors else 0)
EOF
  fi
  pass "$1 ($orders orders, p50 $(jq .latency_us.p50 "$json") us)"
}

C="$SAN/client-hft"
check_rc closed1 0 "$C" --url "$URL" --orders 300 --warmup 30 --connections 1 --output "$TMP/closed1.json"
expect_ok closed1 300
[ -s "$TMP/closed1.hlog" ] || fail "closed1: no .hlog beside the JSON"
# Several connections on one CPU: the epoll path, and odd counts over two workers.
check_rc closed4 0 "$C" --url "$URL" --orders 400 --warmup 40 --connections 4 --cpus 0 --output "$TMP/closed4.json"
expect_ok closed4 400
check_rc closed5 0 "$C" --url "$URL" --orders 333 --warmup 7 --connections 5 --no-busy-poll --output "$TMP/closed5.json"
expect_ok closed5 333
check_rc open4 0 "$C" --url "$URL" --orders 300 --warmup 20 --connections 4 --rate 3000 --output "$TMP/open4.json"
expect_ok open4 300
jq -e '.mode == "open" and .uncorrected_latency_us.p50 > 0' "$TMP/open4.json" >/dev/null || fail "open4: not open loop"
check_rc duration 0 "$C" --url "$URL" --duration 0.3 --warmup 10 --connections 2 --output "$TMP/duration.json"
[ "$(jq .ok "$TMP/duration.json")" -gt 0 ] || fail "duration: no order"
pass "duration ($(jq .ok "$TMP/duration.json") orders in $(jq .duration_s "$TMP/duration.json") s)"
# --interval-s: the collector thread flips the workers' recorders while they record.
check_rc interval 0 "$C" --url "$URL" --duration 0.5 --warmup 10 --connections 3 --rate 2000 --interval-s 0.1 \
  --output "$TMP/interval.json"
[ "$(grep -c '^[0-9]' "$TMP/interval.hlog")" -ge 5 ] || fail "interval: fewer than 5 interval lines"
pass "interval ($(grep -c '^[0-9]' "$TMP/interval.hlog") intervals)"
check_rc floor 0 "$SAN/hft-floor" --orders 300 --warmup 30 --connections 2 --output "$TMP/floor.json"
expect_ok floor 300 floor

# Failures: one stderr line and exit 2.
check_rc badflag 2 "$C" --cpus 3-1
grep -q -- "--cpus" "$TMP/badflag.err" || fail "badflag: message does not name --cpus"
check_rc refused 2 "$C" --url http://127.0.0.1:9 --orders 10
grep -q "cannot connect" "$TMP/refused.err" || fail "refused: $(cat "$TMP/refused.err")"
# AddressSanitizer cannot lock its shadow memory, so mlockall is unavailable here: --strict refuses.
check_rc strict 2 "$C" --url "$URL" --orders 10 --strict
grep -q -- "--strict: tuning mlockall" "$TMP/strict.err" || fail "strict: $(cat "$TMP/strict.err")"
pass "bad flag, unreachable server and --strict exit 2"

# valgrind: the plain build (no -march=native: valgrind does not know AVX-512).
make --no-print-directory -C "$ROOT/hft/c-client" MODE=release ARCH= BUILD="$VG_BUILD" \
  "$VG_BUILD/client-hft" "$VG_BUILD/hft-floor" >/dev/null
VG=(valgrind -q --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite --show-leak-kinds=definite)
check_rc vg_client 0 "${VG[@]}" "$VG_BUILD/client-hft" --url "$URL" --orders 200 --warmup 20 --connections 3 \
  --output "$TMP/vg_client.json"
expect_ok vg_client 200
check_rc vg_open 0 "${VG[@]}" "$VG_BUILD/client-hft" --url "$URL" --orders 100 --warmup 10 --connections 1 \
  --rate 1000 --output "$TMP/vg_open.json"
expect_ok vg_open 100
check_rc vg_interval 0 "${VG[@]}" "$VG_BUILD/client-hft" --url "$URL" --orders 100 --warmup 10 --connections 2 \
  --rate 1000 --interval-s 0.1 --output "$TMP/vg_interval.json"
expect_ok vg_interval 100
check_rc vg_floor 0 "${VG[@]}" "$VG_BUILD/hft-floor" --orders 200 --warmup 20 --connections 2 \
  --output "$TMP/vg_floor.json"
expect_ok vg_floor 200 floor
pass "valgrind clean"
