#!/usr/bin/python3
# Copyright 2026 The pdtopo Authors.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

"""Golden vectors for pkg/transferplan's cache-contract planner.

Runs the reference engine's own code (tokenspeed at the cache-contract
reference commit of ../reference.env, imported from an extracted tree
given with --tokenspeed; nothing of it is copied here) to
build cache transfer contracts the way its cache recipes do, plan pairs of
them with its CacheTransferPlanner, decode byte strings with its
CacheTransferContract.from_wire_bytes, and parse the registration and
pre-allocation frames with its prefill-side parsers. The output is JSON
under pkg/transferplan/testdata/contract/ (see the README there).

Usage (generate.sh extracts the tree and writes the committed files):
  generate.py --tokenspeed DIR/python --out pkg/transferplan/testdata/contract
  generate.py --tokenspeed DIR/python --random 2000 --seed 7 --random-out FILE
"""

import argparse
import base64
import gzip
import importlib.util
import json
import os
import random
import struct
import sys
from types import SimpleNamespace


def load(ts):
    sys.path.insert(0, ts)
    import torch  # noqa: F401  (the Debian python3-torch; plan.py imports it)

    global torch_mod, spec, plan, transfer, ordinary, qwen35, proto, tplan, entities
    import torch as torch_mod
    from tokenspeed.runtime.layers.attention.kv_cache.recipes import plan, spec, transfer
    from tokenspeed.runtime.layers.attention.kv_cache.recipes import ordinary, qwen35
    from tokenspeed.runtime.pd import cache_protocol as proto
    from tokenspeed.runtime.pd import transfer_plan as tplan

    # mooncake/__init__.py pulls in the whole runtime (CUDA kernels, web
    # servers); entities.py itself needs only the three modules above, so
    # it is loaded from its file.
    path = os.path.join(ts, "tokenspeed/runtime/pd/mooncake/entities.py")
    s = importlib.util.spec_from_file_location("ts_mooncake_entities", path)
    entities = importlib.util.module_from_spec(s)
    s.loader.exec_module(entities)


# ---- contracts built by the engine's recipe pipeline ---------------------


def finish(groups, prefix, model_config, packing=None, alignment=1, padding=1.0, blocks=7):
    layout = plan.pack(
        groups,
        prefix_granularity=prefix,
        cache_blocks_per_lcm_block=packing,
        alignment=alignment,
        max_padding_fraction=padding,
    )
    memory = layout.bind(blocks)
    schema = transfer.build_cache_transfer_schema(memory, model_config=model_config)
    return proto.CacheTransferContract(
        plan=memory, group_specs=tuple(s for s, _ in groups), transfer_schema=schema
    )


def mha(*, layers, kv_heads, head_dim, tp, page, dtype="bfloat16", layer_types=(), window=None):
    """OrdinaryRecipe for an MHA/GQA model (its fields, group walk and packing)."""
    cfg = SimpleNamespace(
        kv_cache_mxfp8=False, prefix_granularity=page, num_kv_heads=kv_heads,
        attn_tp_size=tp, head_dim=head_dim, kv_cache_dtype=getattr(torch_mod, dtype),
    )
    ids = (
        spec.layer_group_ids(layer_types=layer_types, sliding_window_tokens=window)
        if layer_types else ["full_attention"] * layers
    )
    groups = spec.group(
        layer_types=layer_types, group_ids=ids, sliding_window_tokens=window,
        prefix_granularity=page,
        fields_for_layer=lambda lid, gid, occ: ordinary._mha_layer_fields(cfg, lid, occ),
        pd_disaggregation_enabled=True,
    )
    model = SimpleNamespace(num_attention_layers=layers, num_key_value_heads=kv_heads, hf_text_config=SimpleNamespace())
    return finish(groups, page, model, packing={s.group_id: 1 for s, _ in groups})


def mla(*, layers, page, kv_lora_rank=512, rope=64):
    """OrdinaryRecipe for an MLA model: one replicated latent field per layer."""
    cfg = SimpleNamespace(
        prefix_granularity=page, kv_cache_quant_method="", kv_lora_rank=kv_lora_rank,
        qk_rope_head_dim=rope, kv_cache_dtype=torch_mod.bfloat16, dtype=torch_mod.bfloat16,
    )
    groups = spec.group(
        layer_types=(), group_ids=["full_attention"] * layers, sliding_window_tokens=None,
        prefix_granularity=page,
        fields_for_layer=lambda lid, gid, occ: ordinary._mla_layer_fields(cfg, lid, occ),
        pd_disaggregation_enabled=True,
    )
    model = SimpleNamespace(num_attention_layers=layers, num_key_value_heads=1, hf_text_config=SimpleNamespace())
    return finish(groups, page, model, packing={s.group_id: 1 for s, _ in groups})


def qwen_gdn(*, tp, layer_types, kv_heads=2, head_dim=64, key_heads=4, value_heads=8, lin_dim=16, kernel=4):
    """QwenGDNRecipe (Qwen3.5: full attention between GDN state layers)."""
    kw, vw = lin_dim * key_heads, lin_dim * value_heads
    text = SimpleNamespace(
        linear_num_key_heads=key_heads, linear_num_value_heads=value_heads,
        linear_key_head_dim=lin_dim, linear_value_head_dim=lin_dim,
        mamba2_cache_params=(
            ((2 * kw + vw) // tp, kernel - 1),
            (value_heads // tp, lin_dim, lin_dim),
            torch_mod.bfloat16, torch_mod.float32, None,
        ),
    )
    model = SimpleNamespace(
        num_attention_layers=len(layer_types), num_key_value_heads=kv_heads,
        hf_config=text, hf_text_config=text,
    )
    attn = SimpleNamespace(
        layer_types=list(layer_types), kv_cache_mxfp8=False, num_kv_heads=kv_heads,
        attn_tp_size=tp, head_dim=head_dim, kv_cache_dtype=torch_mod.bfloat16,
        pd_disaggregation_enabled=True, max_bs=4,
    )
    recipe = qwen35.QwenGDNRecipe(
        server_args=SimpleNamespace(max_total_tokens=None, chunked_prefill_size=128),
        model_config=model, attn_config=attn, draft_model_config=None, draft_attn_config=None,
        cache_budget_bytes=1 << 30, decode_input_tokens=1, overlap_schedule_depth=0,
    )
    groups = recipe.groups()
    return finish(groups, recipe.prefix_granularity, model, packing=recipe.packing(groups),
                  alignment=recipe.alignment, padding=recipe.max_padding_fraction)


QWEN = ["linear_attention", "linear_attention", "linear_attention", "full_attention"] * 2
GPTOSS = ["sliding_attention", "full_attention"] * 2

# name, description, prefill (TP, DP), decode (TP, DP), contract builder per TP
LAYOUTS = [
    ("mha-gqa8-p4-d4", "GQA, 8 KV heads, equal TP: identity", (4, 1), (4, 1),
     lambda tp: mha(layers=2, kv_heads=8, head_dim=64, tp=tp, page=16)),
    ("mha-gqa8-p8-d4", "GQA, more prefill ranks: each decode rank merges two", (8, 1), (4, 1),
     lambda tp: mha(layers=2, kv_heads=8, head_dim=64, tp=tp, page=16)),
    ("mha-gqa8-p2-d8", "GQA, more decode ranks: each takes a head range of every token row", (2, 1), (8, 1),
     lambda tp: mha(layers=2, kv_heads=8, head_dim=64, tp=tp, page=16)),
    ("mha-gqa2-p4-d1-replicas", "2 KV heads on 4 prefill ranks: replica groups, ranks 1 and 3 idle", (4, 1), (1, 1),
     lambda tp: mha(layers=2, kv_heads=2, head_dim=64, tp=tp, page=16)),
    ("mha-gqa2-p8-d2-replicas", "2 KV heads: prefill replica groups of 4", (8, 1), (2, 1),
     lambda tp: mha(layers=2, kv_heads=2, head_dim=32, tp=tp, page=8)),
    ("mha-gqa6-p2-d3-nonmultiple", "6 KV heads, prefill TP 2, decode TP 3", (2, 1), (3, 1),
     lambda tp: mha(layers=2, kv_heads=6, head_dim=32, tp=tp, page=8)),
    ("mha-gqa6-p3-d2-nonmultiple", "6 KV heads, prefill TP 3, decode TP 2", (3, 1), (2, 1),
     lambda tp: mha(layers=2, kv_heads=6, head_dim=32, tp=tp, page=8)),
    ("mha-gqa8-p8dp2-d2dp2", "data-parallel attention: TP per DP group 4 and 1", (8, 2), (2, 2),
     lambda tp: mha(layers=1, kv_heads=8, head_dim=32, tp=tp, page=8)),
    ("mha-sliding-p2-d4", "full and sliding-window groups (GPT-OSS style)", (2, 1), (4, 1),
     lambda tp: mha(layers=4, kv_heads=4, head_dim=32, tp=tp, page=8, layer_types=GPTOSS, window=128)),
    ("mla-p4-d4", "MLA latent cache, equal TP", (4, 1), (4, 1), lambda tp: mla(layers=2, page=64)),
    ("mla-p4-d2", "MLA, replicated latent: ranks 1 and 3 idle", (4, 1), (2, 1), lambda tp: mla(layers=2, page=64)),
    ("mla-p2-d4", "MLA, decode ranks share a source", (2, 1), (4, 1), lambda tp: mla(layers=2, page=64)),
    ("mla-p3-d2-nonmultiple", "MLA with a ratio that does not divide", (3, 1), (2, 1), lambda tp: mla(layers=1, page=64)),
    ("hybrid-qwen35-p2-d4", "Qwen3.5: state groups with a fused conv field in three parts", (2, 1), (4, 1),
     lambda tp: qwen_gdn(tp=tp, layer_types=QWEN)),
    ("hybrid-qwen35-p4-d2", "Qwen3.5 state groups, merging", (4, 1), (2, 1),
     lambda tp: qwen_gdn(tp=tp, layer_types=QWEN)),
    ("hybrid-qwen35-p2-d2", "Qwen3.5 state groups, equal TP", (2, 1), (2, 1),
     lambda tp: qwen_gdn(tp=tp, layer_types=QWEN)),
]

# Pairs the engine refuses: name, description, prefill, decode, prefill contract, decode contract.
REFUSALS = [
    ("refuse-prefix-granularity", "pages of 16 and 32 tokens", (2, 1), (2, 1),
     lambda: mha(layers=1, kv_heads=4, head_dim=32, tp=2, page=16), lambda: mha(layers=1, kv_heads=4, head_dim=32, tp=2, page=32)),
    ("refuse-dtype", "bfloat16 and float16 KV", (2, 1), (2, 1),
     lambda: mha(layers=1, kv_heads=4, head_dim=32, tp=2, page=16),
     lambda: mha(layers=1, kv_heads=4, head_dim=32, tp=2, page=16, dtype="float16")),
    ("refuse-kv-heads", "8 and 4 KV heads (global shapes differ)", (2, 1), (2, 1),
     lambda: mha(layers=1, kv_heads=8, head_dim=32, tp=2, page=16), lambda: mha(layers=1, kv_heads=4, head_dim=32, tp=2, page=16)),
    ("refuse-field-order", "MHA against MLA", (2, 1), (2, 1),
     lambda: mha(layers=1, kv_heads=4, head_dim=32, tp=2, page=64), lambda: mla(layers=1, page=64)),
    ("refuse-group-order", "full attention against full and sliding groups", (2, 1), (2, 1),
     lambda: mha(layers=4, kv_heads=4, head_dim=32, tp=2, page=8),
     lambda: mha(layers=4, kv_heads=4, head_dim=32, tp=2, page=8, layer_types=GPTOSS, window=128)),
    ("refuse-window", "sliding windows of 128 and 64 tokens", (2, 1), (2, 1),
     lambda: mha(layers=4, kv_heads=4, head_dim=32, tp=2, page=8, layer_types=GPTOSS, window=128),
     lambda: mha(layers=4, kv_heads=4, head_dim=32, tp=2, page=8, layer_types=GPTOSS, window=64)),
    ("refuse-shards-not-dividing", "4 KV heads over prefill TP 3", (3, 1), (2, 1),
     lambda: mha(layers=1, kv_heads=4, head_dim=32, tp=3, page=8), lambda: mha(layers=1, kv_heads=4, head_dim=32, tp=2, page=8)),
    ("refuse-equal-tp-geometry", "both TP 2, but the decode contract was built for TP 4", (2, 1), (2, 1),
     lambda: mha(layers=1, kv_heads=8, head_dim=32, tp=2, page=8), lambda: mha(layers=1, kv_heads=8, head_dim=32, tp=4, page=8)),
    ("refuse-tp-too-large", "prefill TP 2048", (2048, 1), (2, 1),
     lambda: mha(layers=1, kv_heads=8, head_dim=32, tp=2048, page=8), lambda: mha(layers=1, kv_heads=8, head_dim=32, tp=2, page=8)),
]


# ---- what the engine computes for a pair ---------------------------------


def b64(b):
    return base64.b64encode(b).decode("ascii")


def frag(f):
    return {k: getattr(f, k) for k in (
        "group_id", "field_id", "src_byte_offset", "dst_byte_offset",
        "src_row_stride_bytes", "dst_row_stride_bytes", "bytes_per_row", "rows_per_page")}


def engine_plan(P, D, prefill, decode):
    """CacheTransferPlanner's verdict and, when it plans, every rank's route
    as the receiver (_calc) and the prefill (_prepare_decode_registration)
    use it."""
    try:
        planner = tplan.CacheTransferPlanner(prefill_tp_size=P, decode_tp_size=D, prefill_layout=prefill, decode_layout=decode)
        by_prefill = planner.decode_ranks_by_prefill_rank
        ranks = []
        for d in range(D):
            route = planner.plan_for_decode_rank(d)
            dummies = [r for r, ds in sorted(by_prefill.items()) if not ds] if d == 0 else []
            ranks.append({
                "decodeTPRank": d,
                "targetPrefillRanks": list(route.target_prefill_ranks),
                "dummyPrefillRanks": dummies,
                "fragments": {str(r): [frag(f) for f in fs] for r, fs in route.fragments_by_prefill_rank.items()},
            })
    except Exception as exc:  # a refusal, or a crash (IndexError, TypeError) that refuses as well
        return {"accepted": False, "error": type(exc).__name__, "message": str(exc)}
    return {
        "accepted": True,
        "decodeRanksByPrefillRank": {str(r): sorted(ds) for r, ds in sorted(by_prefill.items())},
        "ranks": ranks,
    }


def prefill_verdict(P, prefill, registration, prefill_rank):
    """What a prefill rank makes of a registration (the rule of
    MooncakeKVManagerPrefill._prepare_decode_registration, on the engine's
    planner): a real source, a dummy, or refused."""
    planner = tplan.CacheTransferPlanner(
        prefill_tp_size=P, decode_tp_size=registration.decode_tp_size,
        prefill_layout=prefill, decode_layout=registration.peer_cache_layout)
    route = planner.plan_for_decode_rank(registration.decode_tp_rank)
    expected = planner.decode_ranks_by_prefill_rank[prefill_rank]
    if prefill_rank in route.target_prefill_ranks:
        return {"kind": "source", "expectedDecodeRanks": sorted(expected),
                "fragments": [frag(f) for f in route.fragments_by_prefill_rank[prefill_rank]]}
    if registration.decode_tp_rank == 0 and not expected:
        return {"kind": "dummy", "expectedDecodeRanks": [0], "fragments": []}
    return {"kind": "refused"}


SESSION = "10.0.0.7:17001"
STATUS_IP, STATUS_PORT, ARENA = "10.0.0.7", 17100, 0x7F0000001000


def frames(P, D, prefill, decode, plan):
    """The 8-frame registration each decode rank sends each of its targets
    and the 3-frame pre-allocation of one request, checked with the
    engine's prefill-side parsers and manifest validation."""
    import numpy as np

    out = []
    decode_wire = decode.to_wire_bytes()
    room = 4242
    # One request of 37 prompt tokens: every group's block table row counts
    # up from block 1, as a scheduler's would; the engine picks the blocks
    # each group's transfer policy sends.
    tables = {g.group_id: np.arange(1, 64, dtype=np.int64).reshape(1, -1) for g in decode.group_specs}
    op = SimpleNamespace(block_tables_arrays=lambda: tables)
    manifest = proto.build_cache_block_manifest(op, layout=decode, request_row=0, prefix_len=0, prompt_len=37)
    proto.validate_cache_manifest(manifest, layout=decode, peer="destination")
    manifest_wire = manifest.to_wire_bytes()
    for rank in plan["ranks"]:
        d = rank["decodeTPRank"]
        targets = sorted(rank["targetPrefillRanks"] + rank["dummyPrefillRanks"])
        for r in targets:
            dummy = r in rank["dummyPrefillRanks"]
            reg = [b"None", STATUS_IP.encode(), str(STATUS_PORT + d).encode(), SESSION.encode(),
                   struct.pack("<Q", ARENA + d), decode_wire, str(D).encode(), str(d).encode()]
            parsed = entities.KVArgsRegisterInfo.from_zmq(reg)
            verdict = prefill_verdict(P, prefill, parsed, r)
            pre = [str(room).encode(), SESSION.encode(), b"" if dummy else manifest_wire]
            info = entities.TransferInfo.from_zmq(pre)
            if info.block_manifest is not None:
                proto.validate_cache_manifest(info.block_manifest, layout=parsed.peer_cache_layout, peer="destination")
            out.append({
                "decodeTPRank": d, "prefillTPRank": r, "isDummy": dummy,
                # Frame 5 is the decode contract's wire bytes (decodeContract).
                "registration": [None if i == 5 else b64(f) for i, f in enumerate(reg)],
                "preallocation": [b64(f) for f in pre],
                "prefillVerdict": verdict,
            })
    return out


def pair_vector(name, desc, pf, df, prefill, decode, with_frames=True):
    P, D = pf[0] // pf[1], df[0] // df[1]
    v = {
        "name": name, "description": desc,
        "prefill": {"tensorParallelSize": pf[0], "dataParallelSize": pf[1]},
        "decode": {"tensorParallelSize": df[0], "dataParallelSize": df[1]},
        "prefillContract": prefill.to_wire_bytes().decode("ascii"),
        "decodeContract": decode.to_wire_bytes().decode("ascii"),
        "engine": engine_plan(P, D, prefill, decode),
    }
    if with_frames and v["engine"]["accepted"]:
        v["frames"] = frames(P, D, prefill, decode, v["engine"])
    return v


def golden(out):
    pairs = []
    for name, desc, pf, df, build in LAYOUTS:
        prefill, decode = build(pf[0] // pf[1]), build(df[0] // df[1])
        v = pair_vector(name, desc, pf, df, prefill, decode)
        assert v["engine"]["accepted"], (name, v["engine"])
        pairs.append(v)
    for name, desc, pf, df, bp, bd in REFUSALS:
        v = pair_vector(name, desc, pf, df, bp(), bd())
        assert not v["engine"]["accepted"], name
        pairs.append(v)
    for v in pairs:
        with open(os.path.join(out, v["name"] + ".json"), "w") as f:
            json.dump(v, f, indent=1, sort_keys=True)
            f.write("\n")
    from decodecases import decode_cases  # noqa: E402  (beside this file)

    cases = decode_cases(proto, mha(layers=1, kv_heads=2, head_dim=4, tp=1, page=2))
    raw = (json.dumps(cases, indent=0, sort_keys=True) + "\n").encode()
    with gzip.GzipFile(os.path.join(out, "decode-cases.json.gz"), "wb", mtime=0) as f:
        f.write(raw)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tokenspeed", required=True, help="the python/ directory of tokenspeed extracted at the reference commit")
    ap.add_argument("--out", help="directory for the golden vectors")
    ap.add_argument("--random", type=int, default=0, help="random contract pairs to plan")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--random-out", help="file for the random pairs")
    a = ap.parse_args()
    load(a.tokenspeed)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    if a.out:
        golden(a.out)
    if a.random:
        from randompairs import random_pairs  # noqa: E402

        pairs = random_pairs(a.random, a.seed, proto, plan, spec, tplan, engine_plan)
        raw = (json.dumps(pairs) + "\n").encode()
        if a.random_out.endswith(".gz"):
            with gzip.GzipFile(a.random_out, "wb", mtime=0) as f:
                f.write(raw)
        else:
            with open(a.random_out, "wb") as f:
                f.write(raw)


if __name__ == "__main__":
    main()
