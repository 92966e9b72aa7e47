#!/usr/bin/env bash
# Drives pkg/kvwire against a prefill fleet built from tokenspeed's own code
# (its bootstrap server, its prefill managers' parsing, validation and
# planning; fleet.py), for every pair of layouts.py or the ones named:
#
#   hack/contractwire/interop.sh TOKENSPEED_GIT_DIR [COMMIT] [PAIR...]
#
# Needs python3 with numpy, pyzmq, requests and aiohttp (PYTHON picks one).
# Fails on any disagreement, or when the fleet saw a write outside a decode
# arena.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
mirror=${1:?usage: interop.sh TOKENSPEED_GIT_DIR [COMMIT] [PAIR...]}
commit=${2:-f4d8ec6e}
shift $(( $# >= 2 ? 2 : 1 ))
env=$("$here/tokenspeed-env.sh" "$mirror" "$commit")
work=$(mktemp -d)
trap 'rm -rf "$env" "$work"' EXIT
(cd "$root" && go build -o "$work/interop" ./hack/contractwire/interop)
pairs=("$@")
if [ ${#pairs[@]} -eq 0 ]; then
  pairs=($(cd "$root/pkg/kvwire/testdata/contract" && ls *-*.json | sed 's/\.json$//'))
fi
status=0
for pair in "${pairs[@]}"; do
  mkfifo "$work/stdin.$pair"
  PYTHONPATH="$env:$here" PDTOPO_HOST=127.0.0.1 "${PYTHON:-python3}" "$here/fleet.py" "$pair" "$work/ready.$pair" \
    < "$work/stdin.$pair" > "$work/events.$pair" 2> "$work/log.$pair" &
  fleet=$!
  exec 3> "$work/stdin.$pair"
  for _ in $(seq 300); do [ -f "$work/ready.$pair" ] && break; sleep 0.1; done
  addr=$(sed 's/.*"bootstrap": "\([^"]*\)".*/\1/' "$work/ready.$pair")
  if ! "$work/interop" -vectors "$root/pkg/kvwire/testdata/contract/$pair.json" -bootstrap "$addr"; then
    status=1; tail -20 "$work/log.$pair" >&2
  fi
  exec 3>&-
  wait "$fleet" || true
  if grep -q '"write_outside_arena"\|"write_unregistered"' "$work/events.$pair"; then
    echo "interop $pair: the fleet saw writes outside a decode arena:" >&2
    grep '"write_' "$work/events.$pair" >&2; status=1
  fi
  if ! grep -q '"event": "writes", .*"sessions": {"' "$work/events.$pair"; then
    echo "interop $pair: no prefill rank wrote anything" >&2; status=1
  fi
done
exit $status
