#!/usr/bin/env bash
# Checks that pdtopo's agent finds a prefill rank again when it comes back
# on a new port, against tokenspeed's own bootstrap server (the v1 reference
# commit of ../reference.env unless COMMIT): rankmove_test.go.
#
#   conformance/tokenspeed/rankmove/run.sh TOKENSPEED_GIT_DIR [COMMIT]
#
# Needs /usr/bin/python3 with aiohttp (PYTHON picks another). Nothing of
# tokenspeed is kept: its modules are extracted into a temporary directory
# and removed afterwards.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
mirror=${1:?usage: run.sh TOKENSPEED_GIT_DIR [COMMIT]}
env=$("$here/../chaos/env.sh" "$mirror" ${2:-})
trap 'rm -rf "$env"' EXIT
echo "tokenspeed $(cat "$env/COMMIT")"
cd "$root"
TOKENSPEED_V1_ENV="$env" go test -count=1 -timeout 5m -run '^TestRankMoveAgainstTheReferenceBootstrapServer$' -v ./conformance/tokenspeed/rankmove/
