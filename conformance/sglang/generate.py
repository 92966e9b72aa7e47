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

"""Golden verdicts of SGLang's disaggregation pair rules (testdata/).

Runs SGLang's own rule code (engine.py) over a seeded sample of pairs of
public models' layouts and writes, per pair, what SGLang answers: accepted
(with every decode rank's prefill targets as SGLang maps them) or refused
(the exception, its message, and where: handshake, first request, or
prefill mid-transfer), plus pdtopo's judgment where SGLang accepts a pair
it should not. The README beside this file documents the format.

Usage (generate.sh extracts the trees and writes the committed file):
  generate.py --sglang SRC [--mooncake-sglang SRC2] --out FILE [--cases N] [--seed S]
"""

import argparse
import itertools
import json
import logging
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import engine  # noqa: E402
from models import MODELS, loads_at  # noqa: E402

PREFILL_TP = [1, 2, 4, 6, 8, 16]
DECODE_TP = [1, 2, 4, 8, 16]
DP_ATTENTION = [1, 2, 4, 8]  # 1: DP attention off
PAGE_SIZES = [1, 16, 64]
DTYPES = ["auto", "bfloat16", "fp8_e4m3"]
PP_PAIRS = [(1, 1), (2, 2), (2, 1), (1, 2)]  # (prefill, decode)
BACKENDS = ["mooncake", "nixl"]
ADDR = "10.0.0.1:8998"

# Pairs always in the sample: the issue's and the trackers' cases.
PINNED = [
    # llm-d#2433: llm-d's SGLang guide, gpt-oss-120b prefill TP 1 -> decode TP 4.
    dict(backend="mooncake", model="openai/gpt-oss-120b", p=(1, 1, 1), d=(4, 1, 1)),
    dict(backend="nixl", model="openai/gpt-oss-120b", p=(1, 1, 1), d=(4, 1, 1)),
    # prefill TP 6 -> decode TP 4 (accepted, wrong) and 8, 16 (a route 404).
    dict(backend="mooncake", model="Qwen/Qwen2.5-1.5B-Instruct", p=(6, 1, 1), d=(4, 1, 1)),
    dict(backend="mooncake", model="bigcode/starcoder", p=(6, 1, 1), d=(4, 1, 1)),
    dict(backend="mooncake", model="bigcode/starcoder", p=(6, 1, 1), d=(8, 1, 1)),
    dict(backend="nixl", model="bigcode/starcoder", p=(6, 1, 1), d=(16, 1, 1)),
    # vllm#45330's shape on SGLang: 8 KV heads, TP 8 -> TP 16.
    dict(backend="mooncake", model="meta-llama/Meta-Llama-3-70B-Instruct", p=(8, 1, 1), d=(16, 1, 1)),
    # sglang#31295: a DP-attention prefill -> decode TP 4.
    dict(backend="nixl", model="deepseek-ai/DeepSeek-V3", p=(8, 8, 1), d=(4, 1, 1)),
    dict(backend="mooncake", model="deepseek-ai/DeepSeek-V3", p=(16, 2, 1), d=(16, 4, 1)),
    # Mamba hybrid at different TP; MLA + DSA at different TP.
    dict(backend="mooncake", model="Qwen/Qwen3-Next-80B-A3B-Instruct", p=(2, 1, 1), d=(4, 1, 1)),
    dict(backend="nixl", model="deepseek-ai/DeepSeek-V3.2-Exp", p=(8, 1, 1), d=(16, 1, 1)),
    # PP: decode PP 1 from prefill PP 2; decode PP 2 from prefill PP 1.
    dict(backend="mooncake", model="Qwen/Qwen3-8B", p=(4, 1, 2), d=(4, 1, 1)),
    dict(backend="mooncake", model="Qwen/Qwen3-8B", p=(4, 1, 1), d=(4, 1, 2)),
]


def topologies():
    for backend, model, ptp, dtp, pdp, ddp, (ppp, dpp) in itertools.product(
        BACKENDS, MODELS, PREFILL_TP, DECODE_TP, DP_ATTENTION, DP_ATTENTION, PP_PAIRS
    ):
        if ptp % pdp or dtp % ddp or pdp > ptp or ddp > dtp:
            continue
        if not (loads_at(model, ptp // pdp) and loads_at(model, dtp // ddp)):
            continue
        yield dict(backend=backend, model=model["name"], p=(ptp, pdp, ppp), d=(dtp, ddp, dpp))


def layout(tp, dp, pp, page, dtype):
    return {"tp": tp, "dp": dp, "pp": pp, "pageSize": page, "kvCacheDtype": dtype}


def pick_pages_dtypes(rng):
    if rng.random() < 0.85:
        page = rng.choice(PAGE_SIZES)
        pages = (page, page)
    else:
        pages = tuple(rng.sample(PAGE_SIZES, 2))
    if rng.random() < 0.85:
        dtype = rng.choice(DTYPES)
        dtypes = (dtype, dtype)
    else:
        dtypes = tuple(rng.sample(DTYPES, 2))
    return pages, dtypes


def kv_heads_of(model, attn_tp, rank):
    """The KV heads an attention-TP rank holds (QKVParallelLinear: split when
    there are at least as many heads as ranks, else replicated)."""
    kv = model["kvHeads"]
    if attn_tp <= kv:
        per = kv // attn_tp
        return set(range(rank * per, (rank + 1) * per))
    return {rank // (attn_tp // kv)}


def run_case(sg, case_id, topo, pages, dtypes):
    model = next(m for m in MODELS if m["name"] == topo["model"])
    is_mla = model["kind"] == "mla"
    pl = layout(*topo["p"], pages[0], dtypes[0])
    dl = layout(*topo["d"], pages[1], dtypes[1])
    p_attn, d_attn = pl["tp"] // pl["dp"], dl["tp"] // dl["dp"]
    c = {
        "id": case_id,
        "backend": topo["backend"],
        "model": model["name"],
        "modelKind": model["kind"],
        "numKVHeads": model["kvHeads"],
        "isMLA": is_mla,
        "stateTypes": model["stateTypes"],
        "prefillTP": pl["tp"], "prefillDP": pl["dp"], "prefillAttnTP": p_attn, "prefillPP": pl["pp"],
        "prefillPageSize": pl["pageSize"], "prefillKVCacheDtype": pl["kvCacheDtype"],
        "decodeTP": dl["tp"], "decodeDP": dl["dp"], "decodeAttnTP": d_attn, "decodePP": dl["pp"],
        "decodePageSize": dl["pageSize"], "decodeKVCacheDtype": dl["kvCacheDtype"],
    }
    addr = f"10.0.{case_id // 250}.{case_id % 250}:8998"
    server, owners = sg.serve_prefill(addr, pl)
    c["bootstrapInfo"] = sg.http.get(
        f"http://{addr}/route?prefill_dp_rank=-1&prefill_cp_rank=-1&target_tp_rank=-1&target_pp_rank=-1"
    ).json()

    verdict = {"engineVerdict": "accepted", "refusalStage": "", "exceptionType": "", "message": ""}
    ranks, failed = [], []
    for pp_rank, tp_rank in itertools.product(range(dl["pp"]), range(dl["tp"])):
        mgr = sg.decode_manager(dl, tp_rank, pp_rank, is_mla)
        try:
            mgr.try_ensure_parallel_info(addr)
        except Exception as e:  # SGLang raises RuntimeError / AssertionError
            verdict = {"engineVerdict": "refused", "refusalStage": "handshake",
                       "exceptionType": type(e).__name__, "message": str(e)}
            break
        per_group = []
        for prefill_dp_rank in range(pl["dp"]):
            r, failure = sg.receive(mgr, addr, prefill_dp_rank, room=1000 + prefill_dp_rank)
            if r is None:
                failed.append({"decodeTPRank": tp_rank, "decodePPRank": pp_rank,
                               "prefillDPRank": prefill_dp_rank, "message": failure})
                per_group = None
                break
            targets = []
            for info in r.bootstrap_infos:
                o = owners[(info["rank_ip"], info["rank_port"])]
                assert o["prefillDPRank"] == prefill_dp_rank, (o, prefill_dp_rank)
                targets.append({"prefillTPRank": o["prefillAttnTPRank"], "prefillPPRank": o["prefillPPRank"],
                                "isDummy": bool(info["is_dummy"])})
            per_group.append(targets)
        if per_group is None:
            continue
        # The mapping is the same inside every prefill DP group.
        assert all(g == per_group[0] for g in per_group), per_group
        ranks.append({"decodeTPRank": tp_rank, "decodePPRank": pp_rank,
                      "decodeAttnTPRank": tp_rank % d_attn, "targets": per_group[0],
                      "requiredDstInfoNum": r.required_dst_info_num,
                      "requiredPrefillResponseNum": r.required_prefill_response_num})
    if verdict["engineVerdict"] == "accepted" and failed:
        verdict = {"engineVerdict": "refused", "refusalStage": "first_request",
                   "exceptionType": "KVPoll.Failed", "message": failed[0]["message"]}
    if verdict["engineVerdict"] == "accepted":
        for st in model["stateTypes"]:
            try:
                sg.send_extra(topo["backend"], st, p_attn, d_attn, is_mla, pl["pp"])
            except Exception as e:
                verdict = {"engineVerdict": "refused", "refusalStage": "prefill_mid_transfer",
                           "exceptionType": type(e).__name__, "message": str(e)}
                break
    c.update(verdict)
    c["failedDecodeRanks"] = failed
    c["decodeRanks"] = ranks if verdict["refusalStage"] in ("", "first_request") else []
    c.update(judge(c, model, ranks))
    return c


def judge(c, model, ranks):
    """pdtopo's verdict: the engine's, except where the engine accepts (or
    refuses only per request) a pair whose TP ratio does not divide."""
    p, d = c["prefillAttnTP"], c["decodeAttnTP"]
    divides = max(p, d) % min(p, d) == 0
    unread = sorted(
        set(range(p)) - {t["prefillTPRank"] for r in ranks for t in r["targets"]}
    )
    wrong_heads = []
    if not c["isMLA"]:
        for r in ranks:
            need = kv_heads_of(model, d, r["decodeAttnTPRank"])
            have = set().union(*(kv_heads_of(model, p, t["prefillTPRank"]) for t in r["targets"] if not t["isDummy"]))
            if not need <= have:
                wrong_heads.append(r["decodeTPRank"])
    out = {"engineWrong": False, "unreadPrefillTPRanks": unread if not divides else [],
           "wrongHeadDecodeTPRanks": sorted(set(wrong_heads))}
    stage, msg = c["refusalStage"], c["message"]
    if stage == "handshake":
        reason = ("page_size_mismatch" if msg.startswith("Page size") else
                  "kv_cache_dtype_mismatch" if msg.startswith("KV cache dtype") else
                  "pp_size_mismatch" if "pp size" in msg else "handshake_refused")
    elif not divides:
        reason = "tp_ratio_not_divisible"
    elif stage == "first_request":
        reason = "route_not_found"
    elif stage == "prefill_mid_transfer":
        reason = "hybrid_state_tp_mismatch"
    else:
        reason = ""
    if c["engineVerdict"] == "accepted" and not divides:
        out["engineWrong"] = True
    out["pdtopoVerdict"] = "incompatible" if reason else "compatible"
    out["pdtopoReason"] = reason
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sglang", required=True, help="an SGLang tree at SGLANG_COMMIT (the directory holding python/)")
    ap.add_argument("--mooncake-sglang", help="an SGLang tree at SGLANG_MOONCAKE_CONN_COMMIT (default: --sglang)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--cases", type=int, default=330,
                    help="random pairs beside the pinned and TP-6 ones")
    ap.add_argument("--seed", type=int, default=28)
    args = ap.parse_args()
    logging.basicConfig(level=logging.CRITICAL)

    sg = engine.SGLang(args.sglang, args.mooncake_sglang)
    rng = random.Random(args.seed)
    all_topos = list(topologies())
    sample = rng.sample(all_topos, min(args.cases, len(all_topos)))
    chosen = []
    for pin in PINNED:
        chosen.append((pin, ((16, 16), ("auto", "auto"))))
    # Every pair with a prefill attention TP of 6 and PP 1, both backends:
    # the ratios that do not divide, where SGLang is wrong.
    for topo in all_topos:
        if topo["p"][0] // topo["p"][1] == 6 and topo["p"][2] == topo["d"][2] == 1:
            chosen.append((topo, ((16, 16), ("auto", "auto"))))
    for topo in sample:
        chosen.append((topo, pick_pages_dtypes(rng)))
    cases = [run_case(sg, i, topo, pages, dtypes) for i, (topo, (pages, dtypes)) in enumerate(chosen)]

    counts = {
        "cases": len(cases),
        "accepted": sum(c["engineVerdict"] == "accepted" for c in cases),
        "refused": sum(c["engineVerdict"] == "refused" for c in cases),
        "acceptedButWrong": sum(c["engineWrong"] for c in cases),
    }
    for stage in ("handshake", "first_request", "prefill_mid_transfer"):
        counts["refused_" + stage] = sum(c["refusalStage"] == stage for c in cases)
    doc = {
        "generator": "conformance/sglang/generate.py",
        # The commits the trees were at: SGLANG_COMMIT and
        # SGLANG_MOONCAKE_CONN_COMMIT, written once, in this file.
        "reference": "conformance/sglang/reference.env",
        "seed": args.seed,
        "sampledFrom": len(all_topos),
        "widenedStateTypes": sg.widened_state_types,
        "counts": counts,
        "cases": cases,
    }
    with open(args.out, "w") as f:
        f.write("{\n")
        for k, v in doc.items():
            if k == "cases":
                continue
            f.write(f"  {json.dumps(k)}: {json.dumps(v, sort_keys=True)},\n")
        f.write('  "cases": [\n')
        f.write(",\n".join("    " + json.dumps(c, sort_keys=True, separators=(",", ":")) for c in cases))
        f.write("\n  ]\n}\n")
    print(json.dumps(counts), file=sys.stderr)


if __name__ == "__main__":
    main()
