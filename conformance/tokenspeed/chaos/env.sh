#!/usr/bin/env bash
# Builds an importable copy of the parts of tokenspeed its decode receiver
# runs at the v1 reference commit (../reference.env): the engine's own
# bootstrap server, status, manager base, decode manager and receiver, and
# the v1 transfer planner, taken from a git directory of
# lightseekorg/tokenspeed; for the modules that would pull in CUDA, torch or
# Mooncake, pdtopo's stand-ins (../contractwire/stubs). Nothing of tokenspeed
# is kept in the repository:
#
#   dir=$(conformance/tokenspeed/chaos/env.sh TOKENSPEED_GIT_DIR [COMMIT])
#   PYTHONPATH=$dir python3 ...
#
# prints the directory (a fresh temporary one; the caller removes it).
set -euo pipefail
mirror=${1:?usage: env.sh TOKENSPEED_GIT_DIR [COMMIT]}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../reference.env"
commit=${2:-$TOKENSPEED_V1_COMMIT}
out=$(mktemp -d)

real=(
  pd/transfer_plan.py
  pd/base/bootstrap.py pd/base/manager.py pd/base/status.py
  pd/mooncake/conn.py pd/mooncake/entities.py pd/mooncake/decode.py pd/mooncake/receiver.py
)
for f in "${real[@]}"; do
  mkdir -p "$out/tokenspeed/runtime/$(dirname "$f")"
  git --git-dir="$mirror" show "$commit:python/tokenspeed/runtime/$f" > "$out/tokenspeed/runtime/$f" 2>/dev/null ||
    git -C "$mirror" show "$commit:python/tokenspeed/runtime/$f" > "$out/tokenspeed/runtime/$f"
done
# Every package __init__ is empty: the real ones import the whole runtime.
for d in tokenspeed tokenspeed/runtime tokenspeed/runtime/pd tokenspeed/runtime/pd/base \
         tokenspeed/runtime/pd/mooncake tokenspeed/runtime/utils tokenspeed/runtime/metrics; do
  mkdir -p "$out/$d"
  touch "$out/$d/__init__.py"
done
cp -R "$here/../contractwire/stubs/." "$out/"
rm -f "$out/README.md"
git --git-dir="$mirror" rev-parse "$commit" > "$out/COMMIT" 2>/dev/null || git -C "$mirror" rev-parse "$commit" > "$out/COMMIT"
echo "$out"
