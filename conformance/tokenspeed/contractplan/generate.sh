#!/usr/bin/env bash
# Regenerates the cache-contract planner's golden vectors (CONTRACT_PLAN_VECTORS
# of ../reference.env) from tokenspeed's own code: extracts the engine's
# python/ tree at COMMIT into a temporary directory and runs generate.py on it,
# writing the layouts, refusals and decode cases and the 400 random pairs
# (seed 11) the repository holds.
#
#   conformance/tokenspeed/contractplan/generate.sh TOKENSPEED_GIT_DIR [COMMIT [GENERATE_ARGS...]]
#
# COMMIT defaults to the cache-contract reference commit; GENERATE_ARGS,
# when given, replace the default outputs (e.g. --random 2000 --seed 7
# --random-out /tmp/contract-random-2000.json.gz). Needs python3 with numpy
# and torch (the engine's recipes/plan.py imports it; PYTHON picks one).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
. "$here/../reference.env"
mirror=${1:?usage: generate.sh TOKENSPEED_GIT_DIR [COMMIT [GENERATE_ARGS...]]}
commit=${2:-$TOKENSPEED_CACHE_CONTRACT_COMMIT}
shift $(( $# >= 2 ? 2 : 1 ))
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
git -C "$mirror" archive "$commit" python | tar -x -C "$work"
out="$root/$CONTRACT_PLAN_VECTORS"
if [ $# -eq 0 ]; then
  set -- --out "$out" --random 400 --seed 11 --random-out "$out/random-pairs.json.gz"
fi
"${PYTHON:-/usr/bin/python3}" "$here/generate.py" --tokenspeed "$work/python" "$@"
