#!/usr/bin/env bash
# Drives pdtopo against a prefill fleet built from tokenspeed's own code (its
# bootstrap server, its prefill managers' parsing, validation and planning;
# fleet.py), for every pair of layouts.py or the ones named, twice per pair:
#
#  1. pkg/kvwire alone (interop/): the bytes of every message;
#  2. the receiver agent through the Python adapter (adapter.py): the plans
#     `pdtopo plan` makes of the pair, cmd/receiver-agent serving its decode
#     ranks, clients/python/pdtopo_agent driven as tokenspeed's decode
#     executor drives its receiver, with the engine's own contract and
#     manifest objects; and an agent whose plan was made for another
#     prefill contract, which must refuse the fleet.
#
#   conformance/tokenspeed/contractwire/interop.sh TOKENSPEED_GIT_DIR [COMMIT] [PAIR...]
#
# COMMIT defaults to the cache-contract reference commit (../reference.env).
#
# Needs python3 with numpy, pyzmq, requests and aiohttp (PYTHON picks one).
# Fails on any disagreement, or when the fleet saw a write outside a decode
# arena.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
. "$here/../reference.env"
mirror=${1:?usage: interop.sh TOKENSPEED_GIT_DIR [COMMIT] [PAIR...]}
commit=${2:-$TOKENSPEED_CACHE_CONTRACT_COMMIT}
shift $(( $# >= 2 ? 2 : 1 ))
env=$("$here/tokenspeed-env.sh" "$mirror" "$commit")
work=$(mktemp -d)
agents=()
cleanup() {
  for a in "${agents[@]}"; do kill "$a" 2>/dev/null || true; done
  rm -rf "$env" "$work"
}
trap cleanup EXIT
(cd "$root" && go build -o "$work/" ./conformance/tokenspeed/contractwire/interop ./cmd/receiver-agent ./cmd/pdtopo)
vectors_dir="$root/$CONTRACT_WIRE_VECTORS"
pairs=("$@")
if [ ${#pairs[@]} -eq 0 ]; then
  pairs=($(cd "$vectors_dir" && ls *-*.json | sed 's/\.json$//'))
fi
status=0

# start_fleet PAIR TAG: runs fleet.py for the pair; sets addr.
start_fleet() {
  local run="$1.$2"
  mkfifo "$work/stdin.$run"
  PYTHONPATH="$env:$here" PDTOPO_HOST=127.0.0.1 "${PYTHON:-python3}" "$here/fleet.py" "$1" "$work/ready.$run" \
    < "$work/stdin.$run" > "$work/events.$run" 2> "$work/log.$run" &
  fleet=$!
  exec 3> "$work/stdin.$run"
  for _ in $(seq 300); do [ -f "$work/ready.$run" ] && break; sleep 0.1; done
  addr=$(sed 's/.*"bootstrap": "\([^"]*\)".*/\1/' "$work/ready.$run")
}

# stop_fleet PAIR TAG: ends the fleet; fails when it saw a write outside a
# decode arena, or no write at all.
stop_fleet() {
  local run="$1.$2"
  exec 3>&-
  wait "$fleet" || true
  if grep -q '"write_outside_arena"\|"write_unregistered"' "$work/events.$run"; then
    echo "interop $run: the fleet saw writes outside a decode arena:" >&2
    grep '"write_' "$work/events.$run" >&2; status=1
  fi
  if ! grep -q '"event": "writes", .*"sessions": {"' "$work/events.$run"; then
    echo "interop $run: no prefill rank wrote anything" >&2; status=1
  fi
}

# plans PAIR OUT [EDIT]: `pdtopo plan -o json` of a PDPair carrying the
# pair's two contracts inline; with EDIT, the prefill contract's first
# page_count is one more (a contract the fleet does not serve).
plans() {
  "${PYTHON:-python3}" - "$vectors_dir/$1.json" "$work/$1.pdpair.json" "${3:-}" <<'EOF'
import json, re, sys
v = json.load(open(sys.argv[1]))
pre, dec = v["prefill"], v["decode"]
contract = pre["contract"]
if sys.argv[3]:
    contract = re.sub(r'"page_count":(\d+)', lambda m: '"page_count":%d' % (int(m[1]) + 1), contract, count=1)
dp = pre.get("dp_size") or 1
json.dump({"apiVersion": "pd.pdtopo.dev/v1alpha1", "kind": "PDPair", "metadata": {"name": v["pair"]},
           "spec": {"wire": "CacheContract", "prefill": {"tensorParallelSize": pre["tp_size"] * dp, "dataParallelSize": dp},
                    "decode": {"tensorParallelSize": dec["tp_size"]},
                    "cacheContracts": {"prefill": {"inline": contract}, "decode": {"inline": dec["contract"]}}}},
          open(sys.argv[2], "w"))
EOF
  "$work/pdtopo" plan -f "$work/$1.pdpair.json" -o json > "$2"
}

# start_agent PLANS SOCKET_DIR RANKS: cmd/receiver-agent for decode ranks
# 0..RANKS-1, its sockets ready.
start_agent() {
  mkdir -p "$2"
  "$work/receiver-agent" --first-rank 0 --rank-count "$3" --socket-dir "$2" --status-host 127.0.0.1 \
    --probe-addr 127.0.0.1:0 --plan-file "$1" --log-level warn 2>> "$2.log" &
  agents+=($!)
  for _ in $(seq 200); do [ -S "$2/rank-$(( $3 - 1 )).sock" ] && break; sleep 0.05; done
}

for pair in "${pairs[@]}"; do
  start_fleet "$pair" kvwire
  if ! "$work/interop" -vectors "$vectors_dir/$pair.json" -bootstrap "$addr"; then
    status=1; tail -20 "$work/log.$pair.kvwire" >&2
  fi
  stop_fleet "$pair" kvwire

  ranks=$("${PYTHON:-python3}" -c 'import json,sys; print(json.load(open(sys.argv[1]))["decode"]["tp_size"])' "$vectors_dir/$pair.json")
  plans "$pair" "$work/$pair.plans.json"
  plans "$pair" "$work/$pair.mismatch.json" edit
  start_fleet "$pair" adapter
  start_agent "$work/$pair.plans.json" "$work/sock.$pair" "$ranks"
  start_agent "$work/$pair.mismatch.json" "$work/mismatch.$pair" 1
  if ! PYTHONPATH="$env:$root/clients/python" "${PYTHON:-python3}" "$here/adapter.py" \
      "$vectors_dir/$pair.json" "$addr" "$work/sock.$pair" "$work/mismatch.$pair"; then
    status=1; tail -n 20 "$work/log.$pair.adapter" "$work/sock.$pair.log" >&2
  fi
  for a in "${agents[@]}"; do kill "$a" 2>/dev/null || true; done
  agents=()
  stop_fleet "$pair" adapter
done
exit $status
