#!/usr/bin/env bash
# Runs test/chaos's seeded fault schedule against tokenspeed's own decode
# receiver (the v1 reference commit of ../reference.env unless COMMIT):
# chaos_test.go with refdriver.py as the four decode engine ranks, the
# suite's prefill process, seeds and invariants. Prints the run's figures
# (docs/benchmarks.md records them beside pdtopo's agent).
#
#   conformance/tokenspeed/chaos/run.sh TOKENSPEED_GIT_DIR [COMMIT [SEED...]]
#
# SEEDs default to 1; PDTOPO_CHAOS_DURATION (default 60s) is the run's length.
# Needs /usr/bin/python3 with numpy, pyzmq, requests and aiohttp (PYTHON
# picks another). Nothing of tokenspeed is kept: its modules are extracted
# into a temporary directory and removed afterwards; each run's rooms and
# logs stay in the /tmp/pdtopo-refchaos-* directory it prints.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
mirror=${1:?usage: run.sh TOKENSPEED_GIT_DIR [COMMIT [SEED...]]}
commit=${2:-}
shift $(( $# >= 2 ? 2 : 1 ))
seeds=("$@")
[ ${#seeds[@]} -gt 0 ] || seeds=(1)
env=$("$here/env.sh" "$mirror" $commit)
trap 'rm -rf "$env"' EXIT
echo "tokenspeed $(cat "$env/COMMIT")"
for seed in "${seeds[@]}"; do
  (cd "$root" && TOKENSPEED_CHAOS_ENV="$env" PDTOPO_CHAOS_SEED="$seed" \
    go test -count=1 -timeout 20m -run '^TestReferenceReceiverChaos$' -v ./conformance/tokenspeed/chaos/ |
    grep -E '^\s+(chaos|run)_test.go:[0-9]+: (seed|reference receiver|rooms.log|no room|engine rank)|^(--- |ok|FAIL)')
done
