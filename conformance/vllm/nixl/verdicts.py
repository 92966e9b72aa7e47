# Copyright 2026 The pdtopo Authors. Licensed under the Apache License 2.0.
"""Judges prefill/decode pairs with vLLM's own NIXL connector code.

For each case (a model, both roles' TP, block size, KV-cache layout and
--kv-cache-dtype string) it runs, on every decode rank, what the decode
side of a pull-mode NixlConnector runs when the first request for a prefill
engine arrives (NixlBaseConnectorWorker._nixl_handshake):

  1. TransferTopology.handshake_target_ranks — which prefill ranks to ask;
  2. compute_nixl_compatibility_hash on both roles, compared as
     _nixl_handshake compares them (the socket exchange is not run);
  3. _validate_remote_parallel_config, then add_remote_agent for each
     target rank, which runs compute_tp_mapping,
     TransferTopology.block_size_ratio, _validate_remote_agent_handshake,
     the local split handles (_build_local_splits_from_plan) and the remote
     descriptors.

The worker is vLLM's class, made without __init__ (which needs a GPU and a
NIXL agent) and given the state register_kv_caches would leave (geometry.py).
The first exception is the verdict; else every decode rank's mapping.

  VLLM_SRC=/path/to/vllm /usr/bin/python3 verdicts.py --out verdicts.json
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import sys
import traceback
import types
from collections import defaultdict

import geometry
import stubs

TPS = (1, 2, 4, 8, 16)
BLOCKS = (16, 32, 64)
LAYOUTS = ("HND", "NHD")
DTYPES = ("auto", "bfloat16", "fp8")
# VLLM_KV_CACHE_LAYOUT's legacy names, as vLLM resolves them (HND and NHD are
# aliases of LBHNC and LBNHC); the handshake carries the resolved name.
LAYOUT_NAMES = {"HND": "LBHNC", "NHD": "LBNHC"}
PREFILL_ENGINE, DECODE_ENGINE = "prefill-engine", "decode-engine"
# Blocks each role registers (they may differ; only the count per remote
# engine must agree across its ranks).
NUM_BLOCKS = {PREFILL_ENGINE: 6, DECODE_ENGINE: 4}

# errorFile is relative to this directory of vLLM.
KV_CONNECTOR = "vllm/backends/distributed/kv_transfer/kv_connector/"
BW = "vllm/backends/distributed/kv_transfer/kv_connector/v1/nixl/base_worker.py"
UTILS = "vllm/backends/distributed/kv_transfer/kv_connector/utils.py"
TPM = "vllm/backends/distributed/kv_transfer/kv_connector/v1/nixl/tp_mapping.py"
META = "vllm/backends/distributed/kv_transfer/kv_connector/v1/nixl/metadata.py"


class Refused(Exception):
    def __init__(self, rule, func, file, exc, decode_rank, prefill_rank):
        super().__init__(str(exc))
        self.rule, self.func, self.file, self.exc = rule, func, file, exc
        self.decode_rank, self.prefill_rank = decode_rank, prefill_rank


def role_config(m: geometry.Model, dtype: str):
    """The parts of a VllmConfig compute_nixl_compatibility_hash reads."""
    model_config = types.SimpleNamespace(
        model=m.name,
        dtype="torch.bfloat16",
        get_total_num_kv_heads=lambda: m.total_num_kv_heads,
        get_head_size=lambda: m.head_size,
        get_total_num_hidden_layers=lambda: m.num_hidden_layers,
    )
    return types.SimpleNamespace(
        model_config=model_config,
        cache_config=types.SimpleNamespace(cache_dtype=dtype, enable_prefix_caching=True),
        scheduler_config=types.SimpleNamespace(disable_hybrid_kv_cache_manager=False),
        speculative_config=None,
    )


def backend_name(m: geometry.Model) -> str:
    return "FLASHMLA" if m.use_mla else "FLASH_ATTN"


class Judge:
    def __init__(self, mods):
        self.bw = mods[BW]
        self.utils = mods[UTILS]
        self.meta = mods[META]
        self.specs = sys.modules["vllm.v1.kv_cache_interface"]
        self.vllm_files = {os.path.realpath(getattr(mod, "__file__")): rel for rel, mod in mods.items()}

    def _where(self, exc: BaseException) -> tuple[str, str]:
        """The innermost frame of vLLM's code the exception came from."""
        func, file = "", ""
        for frame in traceback.extract_tb(exc.__traceback__):
            rel = self.vllm_files.get(os.path.realpath(frame.filename))
            if rel:
                func, file = frame.name, rel
        return func, file

    def worker(self, m, case, rank):
        """A decode rank's NixlBaseConnectorWorker after register_kv_caches."""
        w = object.__new__(self.bw.NixlBaseConnectorWorker)
        tp, block, dtype = case["decodeTP"], case["decodeBlockSize"], case["decodeKVCacheDtype"]
        g = geometry.rank_geometry(m, tp, rank, block, dtype, engine=1)
        w.vllm_config = role_config(m, dtype)
        w.kv_transfer_config = types.SimpleNamespace(enable_permute_local_kv=False)
        w.engine_id, w.tp_rank, w.world_size = DECODE_ENGINE, rank, tp
        w.dcp_size, w.pcp_size, w.pp_size, w._remote_region_offset = 1, 1, 1, 0
        w.use_mla, w._has_mamba = m.use_mla, m.has_mamba
        w._group_spec_types = tuple(getattr(self.specs, k) for k in m.group_kinds)
        w._is_hma_required = any(k != "FullAttentionSpec" and k != "MLAAttentionSpec" for k in m.group_kinds)
        w.use_host_buffer = False
        w.kv_cache_layout = w.host_buffer_kv_cache_layout = LAYOUT_NAMES[case["decodeKVCacheLayout"]]
        w.enable_permute_local_kv = w.enable_heterogeneous_attn_post_process = False
        w.backend_name = backend_name(m)
        w._remote_agents = defaultdict(dict)
        w.tp_mappings = {}
        w.nixl_wrapper = stubs.NixlWrapper("decode")
        w.block_size = block
        w.num_blocks = w._logical_num_blocks = NUM_BLOCKS[DECODE_ENGINE]
        w._physical_blocks_per_logical_kv_block = 1
        w.block_len_per_layer, w.block_stride_per_layer = list(g.block_lens), list(g.block_strides)
        w._region_is_mla = list(g.region_is_mla)
        w.num_regions = len(g.base_addrs)
        w.num_descs = w.num_regions * w.num_blocks
        w.device_id, w.nixl_memory_type = 0, "VRAM"
        w.kv_caches_base_addr = defaultdict(dict)
        w.kv_caches_base_addr[DECODE_ENGINE][rank] = list(g.base_addrs)
        w.dst_num_blocks = {DECODE_ENGINE: w.num_blocks}
        w._ssm_region_indices = list(range(w.num_regions)) if m.has_mamba else []
        w._scratch_region_indices, w._ple_region_index, w._ple_group_index = [], None, None
        w._conv_decomp = stubs.MambaConvSplitInfo(g.conv_sub_bytes, g.ssm_bytes) if m.has_mamba else None
        w._mamba_ssm_size = w._conv_decomp.ssm_sizes if m.has_mamba else (0, 0)
        w.src_xfer_handles_by_block_size, w.src_blocks_data_by_block_size = {}, {}
        w.src_xfer_handles_by_tp_ratio = {}
        w.dst_xfer_side_handles = defaultdict(dict)
        w.transfer_topo = self.utils.TransferTopology(
            tp_rank=rank, tp_size=tp, block_size=block, engine_id=DECODE_ENGINE,
            is_mla=m.use_mla, total_num_kv_heads=m.total_num_kv_heads, attn_backends=[],
            dcp_size=1, tensor_shape=None, is_mamba=m.has_mamba,
        )
        # As register_kv_caches ends: the local handles at the local block size.
        w.src_xfer_handles_by_block_size[w.block_size], w.src_blocks_data = (
            w.register_local_xfer_handler(w.block_size)
        )
        return w

    def agent_metadata(self, m, case, rank):
        """What prefill rank serves in its handshake (NixlAgentMetadata)."""
        tp, block, dtype = case["prefillTP"], case["prefillBlockSize"], case["prefillKVCacheDtype"]
        g = geometry.rank_geometry(m, tp, rank, block, dtype, engine=2)
        ssm_sizes = stubs.MambaConvSplitInfo(g.conv_sub_bytes, g.ssm_bytes).ssm_sizes if m.has_mamba else (0, 0)
        return self.meta.NixlAgentMetadata(
            engine_id=PREFILL_ENGINE, agent_metadata=f"prefill-{rank}".encode(),
            kv_caches_base_addr=list(g.base_addrs), device_id=0,
            num_blocks=NUM_BLOCKS[PREFILL_ENGINE], block_lens=list(g.block_lens),
            block_strides=list(g.block_strides),
            kv_cache_layout=LAYOUT_NAMES[case["prefillKVCacheLayout"]], block_size=block,
            ssm_sizes=ssm_sizes, attn_backend_name=backend_name(m),
            physical_blocks_per_logical_kv_block=1, dcp_size=1, pcp_size=1,
        )

    def compat_hashes(self, m, case):
        stubs.hashed_factors.clear()
        mode = self.bw.NixlBaseConnectorWorker._TRANSFER_MODE
        p, d = (self.meta.compute_nixl_compatibility_hash(
            role_config(m, case[key]), backend_name(m), transfer_mode=mode)
            for key in ("prefillKVCacheDtype", "decodeKVCacheDtype"))
        pf, df = stubs.hashed_factors
        return p, d, sorted(k for k in pf if pf[k] != df[k])

    def judge(self, m, case):
        out = dict(case)
        out.update(accepted=True, rule="", errorType="", errorMessage="", errorFunction="",
                   errorFile="", refusedAtDecodeRank=-1, refusedAtPrefillRank=-1,
                   localConsumers=0, decodeRanks=[])
        p_hash, d_hash, differing = self.compat_hashes(m, case)
        try:
            for rank in range(case["decodeTP"]):
                out["decodeRanks"].append(self.judge_rank(m, case, rank, p_hash, d_hash, differing))
            out["localConsumers"] = self.local_consumers
        except Refused as r:
            out.update(accepted=False, rule=r.rule, errorType=type(r.exc).__name__,
                       errorMessage=str(r.exc), errorFunction=r.func,
                       errorFile=r.file.removeprefix(KV_CONNECTOR),
                       refusedAtDecodeRank=r.decode_rank, refusedAtPrefillRank=r.prefill_rank,
                       decodeRanks=[])
        return out

    def judge_rank(self, m, case, rank, p_hash, d_hash, differing):
        target = -1
        try:
            w = self.worker(m, case, rank)
            targets = w.transfer_topo.handshake_target_ranks(case["prefillTP"], 1)
            for target in targets:
                # _nixl_handshake checks the hash before anything else of a target.
                if d_hash != p_hash:
                    raise Refused("compatibility-hash", "_nixl_handshake", BW, RuntimeError(
                        "NIXL compatibility hash mismatch; factors that differ: " + ", ".join(differing)),
                        rank, target)
                meta = self.agent_metadata(m, case, target)
                w._validate_remote_parallel_config(meta)
                w.add_remote_agent(meta, target, case["prefillTP"], meta.dcp_size)
        except Refused:
            raise
        except Exception as exc:  # the engine's own refusal
            func, file = self._where(exc)
            raise Refused(classify(m, case, func, exc), func, file, exc, rank, target) from exc
        plan = w.tp_mappings[PREFILL_ENGINE]
        kinds = m.group_kinds
        attn = next(i for i, k in enumerate(kinds) if k != "MambaSpec")
        state = next((i for i, k in enumerate(kinds) if k == "MambaSpec"), None)
        self.local_consumers = plan.local_consumers
        return {
            "rank": rank,
            "handshake": list(targets),
            "read": list(plan.all_source_ranks),
            "attnRead": list(plan.source_ranks_per_group[attn]),
            "stateRead": list(plan.source_ranks_per_group[state]) if state is not None else [],
        }


def classify(m, case, func, exc) -> str:
    """pdtopo's name for the rule an engine refusal enforces (docs/engines/vllm.md)."""
    msg = str(exc)
    p, d = case["prefillTP"], case["decodeTP"]
    if func == "tp_ratio":
        return "tp-divisible"
    if func == "block_size_ratio":
        return "decode-block-multiple-of-prefill-block"
    if func == "_build_local_splits_from_plan":
        return "no-head-split-with-hetero-block-prefill-larger"
    if func == "_validate_remote_agent_handshake":
        if msg.startswith("Heterogeneous TP expects same kv_cache_layout"):
            return "same-kv-cache-layout"
        if msg.startswith("Heterogeneous TP head-dimension splitting"):
            return "block-contiguous-layout-for-hetero-tp"
        if msg.startswith("Different local/remote block sizes"):
            return "equal-block-size-prefill-larger"
        if "block_len" in msg or "KV cache sizes must match" in msg:
            return "block-length"
        if not msg and p > d and p > m.total_num_kv_heads:
            return "replicated-prefill-kv-prefill-larger"
    return "other"


def grid(seed: int, sample: int):
    """Every model x prefill TP x decode TP at the defaults (block 16 both,
    HND both, auto both) and varied one way at a time (a larger decode or
    prefill block, NHD on both, fp8 on both; auto against bfloat16 at equal
    TP), then a seeded sample of the whole grid."""
    rng = random.Random(seed)
    base = dict(prefillBlockSize=16, decodeBlockSize=16, prefillKVCacheLayout="HND",
                decodeKVCacheLayout="HND", prefillKVCacheDtype="auto", decodeKVCacheDtype="auto")
    variations = [{}, {"decodeBlockSize": 64}, {"prefillBlockSize": 64},
                  {"prefillKVCacheLayout": "NHD", "decodeKVCacheLayout": "NHD"},
                  {"prefillKVCacheDtype": "bfloat16"},
                  {"prefillKVCacheDtype": "fp8", "decodeKVCacheDtype": "fp8"}]
    seen, cases = set(), []

    def add(m, p, d, inputs):
        key = (m.name, p, d) + tuple(sorted(inputs.items()))
        if key not in seen:
            seen.add(key)
            cases.append((m, dict(prefillTP=p, decodeTP=d, **inputs)))

    for m, p, d in itertools.product(geometry.MODELS, TPS, TPS):
        for v in variations:
            # A dtype string differing refuses every TP pair alike (the
            # hash): the equal-TP pairs show it, the sample shows the rest.
            if "prefillKVCacheDtype" not in v or v["prefillKVCacheDtype"] == "fp8" or p == d:
                add(m, p, d, base | v)
    everything = list(itertools.product(geometry.SAMPLED_MODELS, TPS, TPS, BLOCKS, BLOCKS,
                                        LAYOUTS, LAYOUTS, DTYPES, DTYPES))
    for m, p, d, pb, db, pl, dl, pdt, ddt in rng.sample(everything, sample):
        add(m, p, d, dict(prefillBlockSize=pb, decodeBlockSize=db, prefillKVCacheLayout=pl,
                          decodeKVCacheLayout=dl, prefillKVCacheDtype=pdt, decodeKVCacheDtype=ddt))
    return cases


def model_fields(m: geometry.Model) -> dict:
    return {
        "model": m.name, "modelKind": m.kind, "numHiddenLayers": m.num_hidden_layers,
        "numAttentionHeads": m.num_attention_heads, "numKVHeads": m.num_kv_heads,
        "headDim": m.head_dim, "kvLoraRank": m.kv_lora_rank, "qkRopeHeadDim": m.qk_rope_head_dim,
        "slidingWindow": m.sliding_window, "fullAttentionInterval": m.full_attention_interval,
        "useMLA": m.use_mla, "hasMamba": m.has_mamba,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vllm", default=os.environ.get("VLLM_SRC"), help="vLLM source tree (default $VLLM_SRC)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--sample", type=int, default=200)
    ap.add_argument("--nixl-commit", default=os.environ.get("VLLM_NIXL_COMMIT", ""))
    ap.add_argument("--layout-commit", default=os.environ.get("VLLM_KV_CACHE_LAYOUT_COMMIT", ""))
    args = ap.parse_args()
    if not args.vllm:
        raise SystemExit("give the vLLM source tree: --vllm DIR or VLLM_SRC=DIR")
    import logging
    logging.basicConfig(level=logging.ERROR)
    judge = Judge(stubs.load_vllm(args.vllm))
    cases = []
    for m, case in grid(args.seed, args.sample):
        verdict = judge.judge(m, case)
        cases.append(model_fields(m) | verdict)
    cases.sort(key=lambda c: (c["model"], c["prefillTP"], c["decodeTP"], c["prefillBlockSize"],
                              c["decodeBlockSize"], c["prefillKVCacheLayout"], c["decodeKVCacheLayout"],
                              c["prefillKVCacheDtype"], c["decodeKVCacheDtype"]))
    doc = {
        "engine": "vllm",
        "kvConnector": "NixlConnector",
        "vllmNixlCommit": args.nixl_commit,
        "vllmKVCacheLayoutCommit": args.layout_commit,
        "generator": "conformance/vllm/nixl/generate.sh",
        "seed": args.seed,
        "sample": args.sample,
        "accepted": sum(c["accepted"] for c in cases),
        "refused": sum(not c["accepted"] for c in cases),
        "cases": cases,
    }
    # One case a line, so a regeneration's diff reads case by case.
    head = json.dumps({k: v for k, v in doc.items() if k != "cases"}, separators=(",", ":"))
    with open(args.out, "w") as f:
        f.write(head[:-1] + ',"cases":[\n')
        f.write(",\n".join(json.dumps(c, separators=(",", ":")) for c in cases))
        f.write("\n]}\n")
    rules = defaultdict(int)
    for c in cases:
        rules[c["rule"] or "accepted"] += 1
    print(f"{len(cases)} cases: {doc['accepted']} accepted, {doc['refused']} refused "
          + json.dumps(dict(sorted(rules.items()))), file=sys.stderr)


if __name__ == "__main__":
    main()
