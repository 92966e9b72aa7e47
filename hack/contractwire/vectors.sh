#!/usr/bin/env bash
# Regenerates pkg/kvwire/testdata/contract/ from tokenspeed's own code:
#
#   hack/contractwire/vectors.sh TOKENSPEED_GIT_DIR [COMMIT]
#
# (COMMIT defaults to f4d8ec6e, the commit the committed vectors come from).
# Needs python3 with numpy, requests and aiohttp (PYTHON picks one).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
env=$("$here/tokenspeed-env.sh" "$@")
trap 'rm -rf "$env"' EXIT
PYTHONPATH="$env:$here" PDTOPO_HOST=127.0.0.1 "${PYTHON:-python3}" "$here/vectors.py" "$root/pkg/kvwire/testdata/contract"
