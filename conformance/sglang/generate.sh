#!/usr/bin/env bash
# Regenerates SGLang's golden pair verdicts (SGLANG_VERDICTS of reference.env)
# from SGLang's own code.
#
#   conformance/sglang/generate.sh SGLANG_GIT_DIR [GENERATE_ARGS...]
#   SGLANG_SRC=DIR [SGLANG_MOONCAKE_SRC=DIR2] conformance/sglang/generate.sh "" [GENERATE_ARGS...]
#
# With a git directory (a clone of https://github.com/sgl-project/sglang, bare
# or not), extracts python/sglang/srt/disaggregation at SGLANG_COMMIT and at
# SGLANG_MOONCAKE_CONN_COMMIT into temporary directories and removes them
# afterwards. With SGLANG_SRC (a tree holding python/), reads the files there
# (and mooncake/conn.py from SGLANG_MOONCAKE_SRC when given). GENERATE_ARGS
# replace the default output (e.g. --cases 2000 --seed 7 --out /tmp/v.json).
# Needs /usr/bin/python3 with numpy and aiohttp (PYTHON picks another).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
. "$here/reference.env"
git_dir=${1-}
shift $(( $# >= 1 ? 1 : 0 ))
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ -n "$git_dir" ]; then
  mkdir -p "$work/main" "$work/mooncake"
  gd=$(git -C "$git_dir" rev-parse --absolute-git-dir)
  git --git-dir="$gd" archive "$SGLANG_COMMIT" python/sglang/srt/disaggregation | tar -x -C "$work/main"
  git --git-dir="$gd" archive "$SGLANG_MOONCAKE_CONN_COMMIT" python/sglang/srt/disaggregation/mooncake |
    tar -x -C "$work/mooncake"
  src=$work/main mooncake_src=$work/mooncake
else
  src=${SGLANG_SRC:?give SGLANG_GIT_DIR or set SGLANG_SRC}
  mooncake_src=${SGLANG_MOONCAKE_SRC:-$src}
fi
if [ $# -eq 0 ]; then
  set -- --out "$root/$SGLANG_VERDICTS"
fi
"${PYTHON:-/usr/bin/python3}" "$here/generate.py" --sglang "$src" --mooncake-sglang "$mooncake_src" "$@"
