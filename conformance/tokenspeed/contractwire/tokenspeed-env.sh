#!/usr/bin/env bash
# Builds an importable copy of the parts of tokenspeed the cache-contract
# tools run: the engine's own PD and cache-recipe modules, taken from a git
# directory of lightseekorg/tokenspeed at a commit, and, for the modules that
# would pull in CUDA, torch.distributed or Mooncake, small stand-ins of ours
# (stubs/). Nothing of tokenspeed is kept in the repository:
#
#   dir=$(conformance/tokenspeed/contractwire/tokenspeed-env.sh TOKENSPEED_GIT_DIR [COMMIT])
#   PYTHONPATH=$dir python3 ...
#
# prints the directory (a fresh temporary one; the caller removes it).
# COMMIT defaults to the cache-contract reference commit (../reference.env).
set -euo pipefail
mirror=${1:?usage: tokenspeed-env.sh TOKENSPEED_GIT_DIR [COMMIT]}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../reference.env"
commit=${2:-$TOKENSPEED_CACHE_CONTRACT_COMMIT}
out=$(mktemp -d)

real=(
  layers/attention/kv_cache/recipes/plan.py
  layers/attention/kv_cache/recipes/spec.py
  layers/attention/kv_cache/recipes/transfer.py
  pd/cache_protocol.py pd/transfer_plan.py pd/topology.py
  pd/base/bootstrap.py pd/base/manager.py pd/base/status.py
  pd/mooncake/conn.py pd/mooncake/entities.py pd/mooncake/prefill.py
  pd/mooncake/sender.py pd/mooncake/receiver.py pd/mooncake/decode.py
)
for f in "${real[@]}"; do
  mkdir -p "$out/tokenspeed/runtime/$(dirname "$f")"
  git -C "$mirror" show "$commit:python/tokenspeed/runtime/$f" > "$out/tokenspeed/runtime/$f"
done
# Every package __init__ is empty: the real ones import the whole runtime.
for d in tokenspeed tokenspeed/runtime tokenspeed/runtime/layers tokenspeed/runtime/layers/attention \
         tokenspeed/runtime/layers/attention/kv_cache tokenspeed/runtime/layers/attention/kv_cache/recipes \
         tokenspeed/runtime/pd tokenspeed/runtime/pd/base tokenspeed/runtime/pd/mooncake \
         tokenspeed/runtime/utils tokenspeed/runtime/metrics; do
  mkdir -p "$out/$d"
  touch "$out/$d/__init__.py"
done
cp -R "$here/stubs/." "$out/"
git -C "$mirror" rev-parse "$commit" > "$out/COMMIT"
echo "$out"
