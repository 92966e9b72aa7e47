#!/usr/bin/env bash
# Regenerates the golden verdicts (VLLM_NIXL_VERDICTS of ../reference.env)
# from vLLM's own NIXL connector code: every case of verdicts.py judged by
# the connector's rule functions, with stand-ins (stubs.py) for what they
# import but do not decide with; and the compatibility hash of roles on
# different vLLM versions (versions.py). Nothing of vLLM is kept in the
# repository.
#
#   conformance/vllm/nixl/generate.sh VLLM_GIT_DIR [NIXL_COMMIT [LAYOUT_COMMIT]]
#   VLLM_SRC=/path/to/vllm conformance/vllm/nixl/generate.sh
#
# With a git directory (bare or not), the six rule modules are taken from it
# at the commits (default: ../reference.env) into a temporary tree; with
# VLLM_SRC, from that source tree as it is (its commits are then the caller's
# word: set VLLM_NIXL_COMMIT and VLLM_KV_CACHE_LAYOUT_COMMIT to record them).
# Needs python3 with numpy (PYTHON picks one; /usr/bin/python3 by default).
# Extra VERDICTS_ARGS (e.g. "--sample 2000 --out /tmp/v.json") replace the
# default output.
set -euo pipefail
export PYTHONDONTWRITEBYTECODE=1 # no __pycache__ in the repository
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
given_nixl=${VLLM_NIXL_COMMIT:-} given_layout=${VLLM_KV_CACHE_LAYOUT_COMMIT:-}
. "$here/../reference.env"
if [ $# -ge 1 ]; then
  mirror=$1
  nixl=${2:-$VLLM_NIXL_COMMIT}
  layout=${3:-$VLLM_KV_CACHE_LAYOUT_COMMIT}
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  "${PYTHON:-/usr/bin/python3}" - "$here" <<'PY' | while read -r rel; do
import sys
sys.path.insert(0, sys.argv[1])
import stubs
print("\n".join(stubs.REAL_MODULES))
PY
    commit=$nixl
    [ "$rel" = vllm/v1/kv_cache_layout.py ] && commit=$layout
    mkdir -p "$work/$(dirname "$rel")"
    git -C "$mirror" show "$commit:$rel" > "$work/$rel"
  done
  export VLLM_SRC=$work VLLM_NIXL_COMMIT=$nixl VLLM_KV_CACHE_LAYOUT_COMMIT=$layout
elif [ -n "${VLLM_SRC:-}" ]; then
  export VLLM_NIXL_COMMIT=$given_nixl VLLM_KV_CACHE_LAYOUT_COMMIT=$given_layout
else
  echo "usage: generate.sh VLLM_GIT_DIR [NIXL_COMMIT [LAYOUT_COMMIT]], or VLLM_SRC=DIR generate.sh" >&2
  exit 2
fi
# shellcheck disable=SC2086 # VERDICTS_ARGS is a word list
"${PYTHON:-/usr/bin/python3}" "$here/verdicts.py" --vllm "$VLLM_SRC" \
  ${VERDICTS_ARGS:---out "$root/$VLLM_NIXL_VERDICTS"}
# The version cases (versions.py) depend on the commit alone: written only
# with the default output, never beside a sample written elsewhere.
if [ -z "${VERDICTS_ARGS:-}" ]; then
  "${PYTHON:-/usr/bin/python3}" "$here/versions.py" --vllm "$VLLM_SRC" \
    --out "$root/$VLLM_NIXL_VERSION_VERDICTS"
fi
