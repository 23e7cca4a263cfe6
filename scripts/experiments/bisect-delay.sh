#!/usr/bin/env bash
# `hftbench bisect` over five commits, the third of which slows every order by 4 µs (the
# default of hft-server's --inject-delay-us turned from 0 to 4 in its code), as bisect
# measures a push to main. Figures: docs/measurements.md ("bisect places a 4 µs delay").
#
#   scripts/experiments/bisect-delay.sh OUT
set -euo pipefail
out=${1:?usage: bisect-delay.sh OUT}
root=$(git rev-parse --show-toplevel)
repo="$out/repo"
mkdir -p "$out"
git clone -q --no-local "$root" "$repo"
cd "$repo"
git config user.email bisect@example.invalid
git config user.name bisect
good=$(git rev-parse HEAD)
for i in 1 2 3 4 5; do
  if [ "$i" = 3 ]; then
    perl -0pi -e 's/default_value_t = 0, value_name = "N"\)\]\n    inject_delay_us/default_value_t = 4, value_name = "N")]\n    inject_delay_us/' server/src/main.rs
    grep -B1 'inject_delay_us: u64' server/src/main.rs | grep -q 'default_value_t = 4'
    git commit -q -am "commit $i: every order 4 us slower"
  else
    echo "commit $i" >> bisect-notes.txt
    git add bisect-notes.txt
    git commit -q -m "commit $i: no change to the server"
  fi
done
bad=$(git rev-parse HEAD)
culprit=$(git rev-parse HEAD~2)
cd "$root"
code=0
.venv/bin/hftbench bisect --repo "$repo" --good "$good" --bad "$bad" --suite pr \
  --series latency-1c/hft --metric p50_us --out "$out/bisect" --quiet || code=$?
.venv/bin/python - "$out/bisect/bisect.json" "$culprit" "$code" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
found = (doc.get("culprit") or {}).get("sha")
print(f"status={doc['status']} exit={sys.argv[3]} steps={len(doc.get('steps', []))} "
      f"culprit={str(found)[:10]} expected={sys.argv[2][:10]} placed={'yes' if found == sys.argv[2] else 'no'}")
PY
