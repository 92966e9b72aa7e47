# Copyright 2026 The pdtopo Authors. Licensed under the Apache License 2.0.
"""Runs vLLM's own compute_nixl_compatibility_hash on roles of different
vLLM versions.

_nixl_handshake (nixl/base_worker.py) refuses a prefill rank whose
compatibility hash differs from the decode rank's, before any other rule;
the hash's first factor is `from vllm import __version__`. For each case
this driver sets that version per role on the `vllm` stand-in module, calls
the function of nixl/metadata.py for both roles (the same model, backend and
transfer mode; the --kv-cache-dtype strings as the case gives them) and
records whether the hashes are equal and which factors differ. Only
metadata.py is loaded from the vLLM tree: what it imports is a stand-in
(stubs.py), kv_connector/utils.py's BlockIds and EngineId too, which it
names only in annotations.

  VLLM_SRC=/path/to/vllm /usr/bin/python3 versions.py --out versions.json
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys

import geometry
import stubs
import verdicts

META = "vllm/backends/distributed/kv_transfer/kv_connector/v1/nixl/metadata.py"

# (prefill vllm.__version__, decode vllm.__version__, prefill and decode
# --kv-cache-dtype): equal builds; an upgrade; a dev build of the next
# release; the same release with a local tag; a dtype mismatch alone; both.
CASES = (
    ("0.11.0", "0.11.0", "auto", "auto"),
    ("0.11.1.dev5+g1a2b3c4", "0.11.1.dev5+g1a2b3c4", "auto", "auto"),
    ("0.10.2", "0.11.0", "auto", "auto"),
    ("0.11.0", "0.11.1.dev5+g1a2b3c4", "auto", "auto"),
    ("0.11.0", "0.11.0+cu128", "auto", "auto"),
    ("0.11.0", "0.11.0", "auto", "bfloat16"),
    ("0.10.2", "0.11.0", "fp8", "auto"),
)


def load_metadata(src: str):
    """metadata.py of the tree src, under its own name, with stand-ins for
    everything it imports."""
    stubs._third_party()
    stubs._vllm_stand_ins()
    stubs._module("vllm.backends.distributed.kv_transfer.kv_connector.utils",
                  BlockIds=list, EngineId=str)
    path = os.path.join(src, META)
    if not os.path.isfile(path):
        raise SystemExit(f"{path}: not found (VLLM_SRC must be a vLLM source tree)")
    name = META[: -len(".py")].replace("/", ".")
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def role_hash(meta, model, version: str, dtype: str) -> str:
    """One role's compatibility hash, run by vLLM's function with
    vllm.__version__ set to the role's version (the function imports it at
    call time)."""
    sys.modules["vllm"].__version__ = version
    return meta.compute_nixl_compatibility_hash(
        verdicts.role_config(model, dtype), verdicts.backend_name(model), transfer_mode="pull")


def judge(meta, model, case) -> dict:
    pv, dv, pdt, ddt = case
    stubs.hashed_factors.clear()
    p, d = role_hash(meta, model, pv, pdt), role_hash(meta, model, dv, ddt)
    pf, df = stubs.hashed_factors
    differing = sorted(k for k in pf if pf[k] != df[k])
    return {
        "model": model.name, "numHiddenLayers": model.num_hidden_layers,
        "numAttentionHeads": model.num_attention_heads, "numKVHeads": model.num_kv_heads,
        "headDim": model.head_dim, "prefillTP": 2, "decodeTP": 2, "blockSize": 16,
        "prefillVLLMVersion": pv, "decodeVLLMVersion": dv,
        "prefillKVCacheDtype": pdt, "decodeKVCacheDtype": ddt,
        "hashedVersions": [pf["vllm_version"], df["vllm_version"]],
        "accepted": p == d,
        "differingFactors": differing,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vllm", default=os.environ.get("VLLM_SRC"), help="vLLM source tree (default $VLLM_SRC)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--nixl-commit", default=os.environ.get("VLLM_NIXL_COMMIT", ""))
    args = ap.parse_args()
    if not args.vllm:
        raise SystemExit("give the vLLM source tree: --vllm DIR or VLLM_SRC=DIR")
    meta = load_metadata(args.vllm)
    model = geometry.MODELS[0]
    cases = [judge(meta, model, c) for c in CASES]
    doc = {
        "engine": "vllm", "kvConnector": "NixlConnector", "vllmNixlCommit": args.nixl_commit,
        "nixlConnectorVersion": meta.NIXL_CONNECTOR_VERSION,
        "generator": "conformance/vllm/nixl/versions.py", "cases": cases,
    }
    head = json.dumps({k: v for k, v in doc.items() if k != "cases"}, separators=(",", ":"))
    with open(args.out, "w") as f:
        f.write(head[:-1] + ',"cases":[\n')
        f.write(",\n".join(json.dumps(c, separators=(",", ":")) for c in cases))
        f.write("\n]}\n")
    print(f"{len(cases)} cases: {sum(c['accepted'] for c in cases)} accepted", file=sys.stderr)


if __name__ == "__main__":
    main()
