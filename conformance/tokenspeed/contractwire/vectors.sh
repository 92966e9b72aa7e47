#!/usr/bin/env bash
# Regenerates the cache-contract wire vectors (CONTRACT_WIRE_VECTORS of
# ../reference.env) from tokenspeed's own code:
#
#   conformance/tokenspeed/contractwire/vectors.sh TOKENSPEED_GIT_DIR [COMMIT]
#
# (COMMIT defaults to the cache-contract reference commit of ../reference.env,
# the commit the committed vectors come from).
# Needs python3 with numpy, requests and aiohttp (PYTHON picks one).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
. "$here/../reference.env"
env=$("$here/tokenspeed-env.sh" "$@")
trap 'rm -rf "$env"' EXIT
PYTHONPATH="$env:$here" PDTOPO_HOST=127.0.0.1 "${PYTHON:-python3}" "$here/vectors.py" "$root/$CONTRACT_WIRE_VECTORS"
