#!/usr/bin/env bash
# Runs the reference engine's own prefill-side parsers (tokenspeed at the v1
# reference commit of ../reference.env: TransferInfo.from_zmq,
# KVArgsRegisterInfo.from_zmq) and its decode-side
# status parser over pkg/kvwire's encodings, and compares the bytes with
# independent numpy/json encodings of the same values.
#
#   conformance/tokenspeed/v1wire/run.sh /path/to/tokenspeed.git [COMMIT]
#
# COMMIT defaults to the v1 reference commit.
#
# Needs python3 with numpy (PYTHON=/path/to/python3 picks one). Nothing of the reference is kept: its files are
# extracted into a temporary directory and removed afterwards.
set -euo pipefail
mirror=${1:?usage: run.sh TOKENSPEED_GIT_DIR [COMMIT]}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
. "$here/../reference.env"
commit=${2:-$TOKENSPEED_V1_COMMIT}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

pd=python/tokenspeed/runtime/pd
mkdir -p "$work/tokenspeed/runtime/pd/mooncake"
touch "$work/tokenspeed/__init__.py" "$work/tokenspeed/runtime/__init__.py" \
      "$work/tokenspeed/runtime/pd/__init__.py" "$work/tokenspeed/runtime/pd/mooncake/__init__.py"
git -C "$mirror" show "$commit:$pd/transfer_plan.py" > "$work/tokenspeed/runtime/pd/transfer_plan.py"
git -C "$mirror" show "$commit:$pd/mooncake/entities.py" > "$work/tokenspeed/runtime/pd/mooncake/entities.py"
git -C "$mirror" show "$commit:$pd/mooncake/decode.py" > "$work/decode_src.py"
# entities.py imports one dataclass from pd/utils.py, which pulls in torch:
# stand in for it.
cat > "$work/tokenspeed/runtime/pd/utils.py" <<'PY'
import dataclasses
@dataclasses.dataclass
class PageTransferMetadata:
    indices_are_local: bool
    page_transfer_mask: object
    page_local_indices: object = None
PY

(cd "$root" && KVWIRE_VECTORS="$work/vectors.json" go test -count=1 -run TestExportVectors ./pkg/kvwire/ >/dev/null)
"${PYTHON:-python3}" "$here/check.py" "$work" "$work/vectors.json"
