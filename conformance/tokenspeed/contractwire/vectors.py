# Writes pkg/kvwire/testdata/contract/: the bytes tokenspeed's own code
# sends and answers on the cache-contract wire, for the pairs of layouts.py,
# and the engine's verdicts on malformed frames and manifests. Run through
# vectors.sh, which puts a copy of tokenspeed on sys.path; pdtopo's own code.
import base64
import json
import os
import re
import socket
import sys
import time
from contextlib import nullcontext
from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import requests

import layouts
from tokenspeed.runtime.pd.base.status import TransferPoll
from tokenspeed.runtime.pd.cache_protocol import (
    CachePDBlockManifest,
    CachePDGroupBlocks,
    CacheTransferContract,
    build_cache_block_manifest,
    validate_cache_manifest,
)
from tokenspeed.runtime.pd.mooncake import prefill as prefill_module
from tokenspeed.runtime.pd.mooncake import receiver as receiver_module
from tokenspeed.runtime.pd.mooncake.conn import MooncakeKVBootstrapServer
from tokenspeed.runtime.pd.mooncake.decode import PrefillParallelInfo
from tokenspeed.runtime.pd.mooncake.entities import KVArgsRegisterInfo, TransferInfo
from tokenspeed.runtime.pd.mooncake.prefill import MooncakeKVManagerPrefill
from tokenspeed.runtime.pd.topology import PDParallelTopology

DECODE_IP = os.environ.get("PDTOPO_HOST", "127.0.0.1")
DECODE_STATUS_PORT = 17001
ARENA_PTR = 0x7F3A_0000_0000
ROOM = 1 << 40


def b64(frames):
    return [base64.b64encode(f).decode("ascii") for f in frames]


def topology(tp, rank, dp=1, dp_rank=0):
    return PDParallelTopology(
        tp_size=tp, tp_rank=rank, cp_size=1, cp_rank=0, dp_size=dp, dp_rank=dp_rank,
        world_size=tp * dp, global_rank=dp_rank * tp + rank,
    )


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def bootstrap(pair, prefill_contract):
    """Registers every prefill rank with tokenspeed's bootstrap server the way
    its prefill manager does, and records the bodies and the answers."""
    port = free_port()
    server = MooncakeKVBootstrapServer(port)
    puts = []
    real_put = requests.put

    def put(url, json=None, timeout=None):
        puts.append(requests.Request("PUT", url, json=json).prepare().body.decode("ascii"))
        return real_put(url, json=json, timeout=timeout)

    prefill_module.requests.put = put
    try:
        for dp_rank in range(pair.prefill_dp):
            for rank in range(pair.prefill_tp):
                mgr = object.__new__(MooncakeKVManagerPrefill)
                mgr.dist_init_addr = None
                mgr.bootstrap_port = port
                mgr.rank_port = 41000 + dp_rank * pair.prefill_tp + rank
                mgr.topology = topology(pair.prefill_tp, rank, pair.prefill_dp, dp_rank)
                mgr.kv_args = SimpleNamespace(cache_layout=prefill_contract)
                mgr._register_to_bootstrap()
        base = f"http://127.0.0.1:{port}/route"
        info = requests.get(base + "?engine_rank=-1&target_dp_group=-1")
        addr = requests.get(base + f"?engine_rank=1&target_dp_group={pair.prefill_dp - 1}")
        return {
            "rank_registrations": puts,
            "parallel_info": info.content.decode("ascii"),
            "rank_address_query": f"engine_rank=1&target_dp_group={pair.prefill_dp - 1}",
            "rank_address": addr.content.decode("ascii"),
        }, info.json()
    finally:
        prefill_module.requests.put = real_put
        server.close()


def receiver_for(pair, decode_contract, rank, info):
    """A decode receiver wired as tokenspeed's is, with the route plan its own
    _calc makes, sending into a list instead of sockets."""
    sent = []

    class Capture:
        def __init__(self, endpoint):
            self.endpoint = endpoint

        def send_multipart(self, frames):
            sent.append((self.endpoint, list(frames)))

    mgr = SimpleNamespace(
        kv_args=SimpleNamespace(kv_data_ptr=ARENA_PTR, cache_layout=decode_contract, engine_rank=rank),
        topology=topology(pair.decode_tp, rank),
        rank_port=DECODE_STATUS_PORT,
        update_status=lambda room, status: None,
    )
    parallel = PrefillParallelInfo(
        tp_size=int(info["prefill_tp_size"]),
        dp_size=int(info["prefill_dp_size"]),
        cache_layout=CacheTransferContract.from_wire_bytes(info["cache_layout"].encode("ascii")),
    )
    route = receiver_module._calc(mgr, parallel)
    r = object.__new__(receiver_module.MooncakeKVReceiver)
    r.kv_mgr = mgr
    r.bootstrap_room = ROOM
    r.session_id = f"{DECODE_IP}:{15500 + rank}"
    r.route_plan = route
    r.bootstrap_infos = [
        {"rank_ip": "127.0.0.1", "rank_port": 41000 + t, "is_dummy": route.is_dummy_tp_rank(t), "tp_rank": t}
        for t in route.target_tp_ranks
    ]
    r._connect = lambda endpoint: (Capture(endpoint), nullcontext())
    return r, route, sent


def prefill_verdict(pair, prefill_contract, frames, prefill_rank):
    """What prefill rank prefill_rank makes of a registration."""
    mgr = object.__new__(MooncakeKVManagerPrefill)
    mgr.kv_args = SimpleNamespace(cache_layout=prefill_contract, kv_data_ptr=0x1000)
    mgr.topology = topology(pair.prefill_tp, prefill_rank)
    try:
        reg = mgr._prepare_decode_registration(KVArgsRegisterInfo.from_zmq(frames))
    except ValueError as exc:
        return {"accepted": False, "error": str(exc)}
    return {
        "accepted": True,
        "is_dummy": reg.is_dummy,
        "expected_decode_ranks": sorted(reg.expected_decode_ranks),
        "fragments": len(reg.transfer_fragments),
    }


def block_tables(contract, prompt_len, salt):
    tables = {}
    for i, s in enumerate(contract.group_specs):
        pages = contract.plan.group(s.group_id).page_count
        slots = -(-prompt_len // s.block_granularity) + 1
        ids = 1 + (np.arange(slots) * 7 + i * 3 + salt) % (pages - 1)
        tables[s.group_id] = ids.reshape(1, slots).astype(np.int32)
    return SimpleNamespace(block_tables_arrays=lambda: tables)


def engine_manifest_verdict(raw, contract):
    """The prefill's verdict on a pre-allocation carrying raw: the frame
    parse, then validate_cache_manifest against the decode contract."""
    try:
        info = TransferInfo.from_zmq([str(ROOM).encode(), b"10.0.0.7:15500", raw])
    except Exception as exc:  # the engine's handler catches only some of these
        return {"accepted": False, "stage": "parse", "exception": type(exc).__name__, "error": str(exc)}
    try:
        validate_cache_manifest(info.block_manifest, layout=contract, peer="destination")
    except Exception as exc:
        return {"accepted": False, "stage": "validate", "exception": type(exc).__name__, "error": str(exc)}
    return {"accepted": True}


def manifest_refusals(contract, good: CachePDBlockManifest):
    """Manifests one edit away from good, with the engine's verdicts."""
    g0 = good.groups[0]
    cap = contract.plan.group(g0.group_id).page_count
    out = []

    def add(name, manifest=None, raw=None):
        raw = raw if raw is not None else manifest.to_wire_bytes()
        out.append({"name": name, "wire": raw.decode("latin-1"), "verdict": engine_manifest_verdict(raw, contract)})

    def with_group0(ids):
        return replace(good, groups=(replace(g0, block_ids=ids),) + good.groups[1:])

    add("null block id 0", with_group0((0,) + g0.block_ids[1:]))
    add("block id = page_count", with_group0(g0.block_ids[:-1] + (cap,)))
    add("block id = page_count - 1", with_group0(g0.block_ids[:-1] + (cap - 1,)))
    add("negative block id", with_group0((-3,) + g0.block_ids[1:]))
    add("one block too many", with_group0(g0.block_ids + (1,)))
    add("one block too few", with_group0(g0.block_ids[:-1]))
    add("prefix_len = prompt_len", replace(good, prefix_len=good.prompt_len))
    add("prefix_len not aligned", replace(good, prefix_len=good.prefix_len + 1))
    add("groups reversed", replace(good, groups=tuple(reversed(good.groups))) if len(good.groups) > 1 else with_group0(g0.block_ids))
    add("group missing", replace(good, groups=good.groups[1:]))
    add("group renamed", replace(good, groups=(CachePDGroupBlocks("nope", g0.block_ids),) + good.groups[1:]))
    add("extra group", replace(good, groups=good.groups + (CachePDGroupBlocks("extra", (1,)),)))
    wire = good.to_wire_bytes()
    add("not JSON", raw=wire[:-1])
    add("a JSON list", raw=b"[" + wire + b"]")
    add("prompt_len missing", raw=re.sub(rb',"prompt_len":\d+', b"", wire))
    # The engine reads the keys it knows and ignores the rest; pdtopo refuses.
    add("unknown key", raw=wire[:-1] + b',"note":1}')
    add("spaces and reordered keys", raw=json.dumps(
        {"prompt_len": good.prompt_len, "prefix_len": good.prefix_len,
         "groups": [{"block_ids": list(g.block_ids), "group_id": g.group_id} for g in good.groups]}).encode())
    return out


def generate_pair(pair):
    prefill = layouts.contract(pair.model, pair.prefill_tp, pair.prefill_blocks)
    decode = layouts.contract(pair.model, pair.decode_tp, pair.decode_blocks)
    boot, info = bootstrap(pair, prefill)
    ranks = []
    receivers = []
    for rank in range(pair.decode_tp):
        r, route, sent = receiver_for(pair, decode, rank, info)
        r._register_kv_args()
        assert len(sent) == len(r.bootstrap_infos)
        registration = sent[0][1]
        assert all(frames == registration for _, frames in sent)
        ranks.append({
            "decode_tp_rank": rank,
            "session_id": r.session_id,
            "targets": list(route.transfer_plan.target_prefill_ranks),
            "dummies": list(route.dummy_tp_ranks),
            "registration": b64(registration),
            "prefill_verdicts": [prefill_verdict(pair, prefill, registration, p) for p in range(pair.prefill_tp)],
        })
        receivers.append((r, sent))
    manifests = []
    for prefix_len, prompt_len in pair.prompts:
        m = build_cache_block_manifest(
            block_tables(decode, prompt_len, prefix_len), layout=decode,
            request_row=0, prefix_len=prefix_len, prompt_len=prompt_len,
        )
        entry = {"prefix_len": prefix_len, "prompt_len": prompt_len, "wire": m.to_wire_bytes().decode("ascii"), "pre_allocations": []}
        for r, sent in receivers:
            del sent[:]
            r.prefill(block_manifest=m)
            for info_, (endpoint, frames) in zip(r.bootstrap_infos, sent):
                entry["pre_allocations"].append({
                    "decode_tp_rank": r.kv_mgr.topology.tp_rank,
                    "prefill_tp_rank": info_["tp_rank"],
                    "is_dummy": info_["is_dummy"],
                    "frames": b64(frames),
                })
        manifests.append(entry)
    good = CachePDBlockManifest.from_wire_bytes(manifests[-1]["wire"].encode())
    return {
        "pair": pair.name,
        "about": pair.about,
        "prefill": {"tp_size": pair.prefill_tp, "dp_size": pair.prefill_dp, "contract": prefill.to_wire_bytes().decode("ascii")},
        "decode": {"tp_size": pair.decode_tp, "arena_ptr": ARENA_PTR, "status_port": DECODE_STATUS_PORT,
                   "contract": decode.to_wire_bytes().decode("ascii")},
        "bootstrap": boot,
        "ranks": ranks,
        "room": ROOM,
        "manifests": manifests,
        "manifest_refusals": manifest_refusals(decode, good),
    }


def frame_refusals(pair_doc):
    """The engine's parsers on registrations and pre-allocations one edit
    away from ones it accepts."""
    reg = [base64.b64decode(f) for f in pair_doc["ranks"][-1]["registration"]]
    pre = next(p for p in pair_doc["manifests"][0]["pre_allocations"] if not p["is_dummy"])
    pre = [base64.b64decode(f) for f in pre["frames"]]
    out = []

    def verdict(kind, frames):
        try:
            if kind == "registration":
                r = KVArgsRegisterInfo.from_zmq(frames)
                return {"accepted": True, "decode_tp_size": r.decode_tp_size, "decode_tp_rank": r.decode_tp_rank,
                        "arena_ptr": r.dst_kv_ptr, "session_id": r.mooncake_session_id, "decode_ip": r.endpoint, "port": r.dst_port}
            t = TransferInfo.from_zmq(frames)
            return {"accepted": True, "room": t.room, "session_id": t.mooncake_session_id, "dummy": t.is_dummy}
        except Exception as exc:
            return {"accepted": False, "exception": type(exc).__name__, "error": str(exc)}

    def add(kind, name, frames, pad=None):
        # pad = (frame, length): that frame, a JSON object, is sent with
        # spaces before its closing brace up to length bytes; the vector
        # keeps it unpadded (a reader pads it the same way).
        sent = list(frames)
        if pad is not None:
            i, length = pad
            sent[i] = sent[i][:-1] + b" " * (length - len(sent[i])) + b"}"
        doc = {"kind": kind, "name": name, "frames": b64(frames), "verdict": verdict(kind, sent)}
        if pad is not None:
            doc["pad_frame"], doc["pad_to"] = pad
        out.append(doc)

    def edit(frames, i, value):
        f = list(frames)
        f[i] = value
        return f

    add("registration", "as sent", reg)
    add("registration", "7 frames", reg[:7])
    add("registration", "9 frames", reg + [b""])
    add("registration", "frame 0 'none'", edit(reg, 0, b"none"))
    add("registration", "empty decode_ip", edit(reg, 1, b""))
    add("registration", "256-byte decode_ip", edit(reg, 1, b"h" * 256))
    add("registration", "255-byte decode_ip", edit(reg, 1, b"h" * 255))
    add("registration", "port with a leading zero", edit(reg, 2, b"017001"))
    add("registration", "port 0", edit(reg, 2, b"0"))
    add("registration", "port 65536", edit(reg, 2, b"65536"))
    add("registration", "port 65535", edit(reg, 2, b"65535"))
    add("registration", "port with a sign", edit(reg, 2, b"+17001"))
    add("registration", "empty session", edit(reg, 3, b""))
    add("registration", "513-byte session", edit(reg, 3, b"h" * 507 + b":15500"))
    add("registration", "512-byte session", edit(reg, 3, b"h" * 506 + b":15500"))
    add("registration", "7-byte arena pointer", edit(reg, 4, reg[4][:7]))
    add("registration", "zero arena pointer", edit(reg, 4, b"\0" * 8))
    add("registration", "empty contract", edit(reg, 5, b""))
    add("registration", "contract not JSON", edit(reg, 5, reg[5][:-1]))
    add("registration", "contract a JSON list", edit(reg, 5, b"[" + reg[5] + b"]"))
    add("registration", "contract over 256 KiB", reg, pad=(5, 256 * 1024 + 1))
    add("registration", "contract of exactly 256 KiB", reg, pad=(5, 256 * 1024))
    add("registration", "decode_tp_size 0", edit(reg, 6, b"0"))
    add("registration", "decode_tp_size 1025", edit(reg, 6, b"1025"))
    add("registration", "decode_tp_size 1024", edit(reg, 6, b"1024"))
    add("registration", "decode_tp_rank = decode_tp_size", edit(reg, 7, reg[6]))
    add("registration", "decode_tp_rank with a leading zero", edit(reg, 7, b"0" + reg[7]))
    add("pre_allocation", "as sent", pre)
    add("pre_allocation", "dummy", edit(pre, 2, b""))
    add("pre_allocation", "2 frames", pre[:2])
    add("pre_allocation", "4 frames", pre + [b""])
    add("pre_allocation", "room 0", edit(pre, 0, b"0"))
    add("pre_allocation", "room 2^63-1", edit(pre, 0, str((1 << 63) - 1).encode()))
    add("pre_allocation", "room 2^63", edit(pre, 0, str(1 << 63).encode()))
    add("pre_allocation", "room with a leading zero", edit(pre, 0, b"01"))
    add("pre_allocation", "negative room", edit(pre, 0, b"-1"))
    add("pre_allocation", "room 'None'", edit(pre, 0, b"None"))
    add("pre_allocation", "empty session", edit(pre, 1, b""))
    add("pre_allocation", "513-byte session", edit(pre, 1, b"h" * 507 + b":15500"))
    add("pre_allocation", "manifest over 2 MiB", pre, pad=(2, 2 * 1024 * 1024 + 1))
    add("pre_allocation", "manifest of exactly 2 MiB", pre, pad=(2, 2 * 1024 * 1024))
    return out


def status_frames():
    """Status frames as a prefill rank sends them (unchanged since v1)."""
    mgr = object.__new__(MooncakeKVManagerPrefill)
    sent = []

    class Capture:
        def send_multipart(self, frames):
            sent.append(list(frames))

    mgr._connect = lambda endpoint: (Capture(), nullcontext())
    mgr.sync_status_to_decode_endpoint("10.0.0.7", 17001, ROOM, TransferPoll.Success, 3, bootstrap_token=128000, spec_candidate_ids=[5, 6, 7])
    mgr.sync_status_to_decode_endpoint("10.0.0.7", 17001, ROOM, TransferPoll.Failed, 1)
    return [b64(f) for f in sent]


def main(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    docs = []
    for pair in layouts.PAIRS:
        doc = generate_pair(pair)
        docs.append(doc)
        with open(os.path.join(out_dir, pair.name + ".json"), "w") as f:
            json.dump(doc, f, indent=1, sort_keys=True)
            f.write("\n")
    with open(os.path.join(out_dir, "frames.json"), "w") as f:
        json.dump({"from_pair": docs[0]["pair"], "refusals": frame_refusals(docs[0]), "status": status_frames()},
                  f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"wrote {len(docs)} pairs and frames.json to {out_dir}")


if __name__ == "__main__":
    main(sys.argv[1])
