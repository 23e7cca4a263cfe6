#!/usr/bin/env bash
# More, shorter rounds in the same time (issue 35): the gate's unit is the round (Student's t
# over rounds), so its MDE falls with the rounds' count twice, through the standard error and
# through t's quantile at alpha / looks / family. Measures A/A duets of suite pr at the
# scenarios' own orders and at half of them, and prints the median MDE of each series × metric
# for draws of K1 rounds of the first pool and K2 rounds of the second (equal measuring time
# when K2 = 2 K1), and how long each pool's rounds took.
#
#   scripts/experiments/round-size.sh OUT [ROUNDS (32)] [K1 (8)] [K2 (16)]
set -euo pipefail
out=${1:?usage: round-size.sh OUT [ROUNDS] [K1] [K2]}
rounds=${2:-32}
k1=${3:-8}
k2=${4:-16}
root=$(git rev-parse --show-toplevel)
hftbench="$root/.venv/bin/hftbench"
mkdir -p "$out"
only_aa=(--slow-runs 0 --stall-runs 0 --after-runs 0 --contention-runs 0 --solo-runs 0 --suite pr)
measure() { # measure NAME ROUNDS [FLAGS...]
  local name=$1 n=$2 start
  shift 2
  start=$(date +%s)
  "$hftbench" calibrate "${only_aa[@]}" --runs "$n" --out "$out/$name" "$@" >"$out/$name.log" 2>&1
  echo "$name: $n A/A rounds measured in $(($(date +%s) - start)) s"
}
measure full "$rounds"
measure half "$((2 * rounds))" --orders 25000
mde() { # mde NAME K
  "$hftbench" calibrate --from "$out/$1" --k "$2" >/dev/null 2>&1
  "$root/.venv/bin/python" - "$out/$1/calibration.json" "$1" "$2" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
mde = doc["tallies"]["aa"]["mde"]
cover = {f"{g['series']} {g['metric']}": g.get("coverage") for g in doc["guards"]}
cells = [f"{k}={100 * (v - 1):+.2f}% (coverage {cover.get(k)})" for k, v in mde.items()]
print(f"{sys.argv[2]} k={sys.argv[3]} flagged={doc['tallies']['aa']['flagged']}:", "; ".join(cells))
PY
}
mde full "$k1"
mde half "$k1"
mde half "$k2"
