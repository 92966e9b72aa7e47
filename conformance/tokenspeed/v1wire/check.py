# Checks pkg/kvwire vectors against the reference parsers; see run.sh.
import ast, base64, json, struct, sys
import numpy as np
REF = sys.argv[1]
sys.path.insert(0, REF)
from tokenspeed.runtime.pd.mooncake.entities import TransferInfo, KVArgsRegisterInfo
src = open(REF + "/decode_src.py").read()
mod = ast.parse(src)
fn = [n for n in mod.body if isinstance(n, ast.FunctionDef) and n.name == "parse_prefill_status_message"][0]
ns = {"np": np}
exec(compile(ast.Module(body=[fn], type_ignores=[]), "decode_src", "exec"), ns)
parse_status = ns["parse_prefill_status_message"]

vecs = json.load(open(sys.argv[2]))
counts = {}
def fail(msg):
    print("MISMATCH:", msg); sys.exit(1)
for v in vecs:
    k = v["kind"]; counts[k] = counts.get(k, 0) + 1
    val = v["value"]
    if "frames" in v:
        frames = [base64.b64decode(f) for f in v["frames"]]
    if k == "registration":
        # the bootstrap thread reads frame 0 and 3 first
        assert frames[0].decode("ascii") == "None"
        r = KVArgsRegisterInfo.from_zmq(frames)
        exp = [val["DecodeIP"], val["DecodeStatusPort"], val["SessionID"], val["KVPtrs"] or [], [], val["StatePtrs"] or [], val["DecodePrefixLen"]]
        got = [r.endpoint, r.dst_port, r.mooncake_session_id, r.dst_kv_ptrs, r.dst_aux_ptrs, r.dst_state_data_ptrs, r.decode_prefix_len]
        if got != exp: fail(f"registration {got} != {exp}")
        # reproduce the reference sender's bytes independently
        ref = [b"None", val["DecodeIP"].encode(), str(val["DecodeStatusPort"]).encode(), val["SessionID"].encode(),
               b"".join(struct.pack("Q", p) for p in (val["KVPtrs"] or [])), b"",
               b"".join(struct.pack("Q", p) for p in (val["StatePtrs"] or [])), str(val["DecodePrefixLen"]).encode()]
        if ref != frames: fail(f"registration bytes {frames} != {ref}")
    elif k == "request":
        room = int(frames[0].decode("ascii")); session = frames[3].decode("ascii")
        required = int(frames[6].decode("ascii"))
        int(session.split(":")[1])  # what add_transfer_request does with it
        t = TransferInfo.from_zmq(frames)
        if t.room != val["Room"] or t.endpoint != val["DecodeIP"] or t.dst_port != val["DecodeStatusPort"] or t.mooncake_session_id != val["SessionID"]: fail(f"header {t}")
        if t.required_dst_info_num != val["RequiredDstInfoNum"] or required != val["RequiredDstInfoNum"]: fail("required")
        if t.is_dummy != val["Dummy"]: fail(f"dummy {t.is_dummy} vs {val['Dummy']}")
        if not t.is_dummy:
            if t.dst_kv_indices.tolist() != (val["KVIndices"] or []): fail("kv")
            if t.dst_aux_index != val["AuxIndex"] or t.decode_prefix_len != val["DecodePrefixLen"]: fail("aux/prefix")
            if t.dst_indices_are_local != val["MLAL15"]: fail("flag")
            if t.dst_page_transfer_mask.tolist() != (val["PageTransferMask"] or []): fail("mask")
            if t.dst_page_local_indices.tolist() != (val["PageLocalIndices"] or []): fail("local")
            mi = None if t.dst_mamba_indices is None else t.dst_mamba_indices.tolist()
            if mi != val["MambaIndices"]: fail(f"mamba {mi} {val['MambaIndices']}")
            frs = [dict(buffer_index=f.buffer_index, buffer_kind=f.buffer_kind.value, src_rank=f.src_rank, dst_rank=f.dst_rank,
                        src_page_stride_bytes=f.src_page_stride_bytes, dst_page_stride_bytes=f.dst_page_stride_bytes,
                        src_byte_offset=f.src_byte_offset, dst_byte_offset=f.dst_byte_offset, bytes_per_page=f.bytes_per_page,
                        page_count=f.page_count) for f in t.transfer_fragments]
            if frs != (val["Fragments"] or []): fail(f"fragments {frs} != {val['Fragments']}")
            if val["Fragments"]:
                payload = json.dumps(val["Fragments"], separators=(",", ":")).encode()
                if frames[12] != b"1" or frames[13] != payload: fail("fragment bytes")
            if val["MLAL15"] and val["KVIndices"]:
                np.cumsum(t.dst_page_transfer_mask) - 1  # mapping used by the OFF/ON path
            ref_kv = np.asarray(val["KVIndices"] or [], dtype=np.int64).tobytes()
            if frames[4] != ref_kv: fail("kv bytes")
            if frames[9] != np.asarray(val["PageTransferMask"] or [], dtype=np.bool_).tobytes(): fail("mask bytes")
            if frames[8] != str(int(val["MLAL15"])).encode(): fail("flag bytes")
        else:
            if len(frames) != 12 or any(frames[i] for i in (4,5,7,8,9,10,11)): fail("dummy shape")
    elif k == "status":
        val["State"] = ["Failed","Bootstrapping","Bootstrapped","WaitingForInput","Transferring","Success"].index(val["State"])
        room, status, rank, token, ids = parse_status(frames)
        exp_ids = val["SpecCandidateIDs"] or None
        if (room, status, rank, token, ids) != (val["Room"], val["State"], val["PrefillTPRank"], val["BootstrapToken"], exp_ids):
            fail(f"status {(room, status, rank, token, ids)} vs {val}")
        ref = [str(val["Room"]).encode(), str(val["State"]).encode(), str(val["PrefillTPRank"]).encode(), str(val["BootstrapToken"]).encode(),
               np.asarray(val["SpecCandidateIDs"], dtype=np.int32).tobytes() if val["SpecCandidateIDs"] is not None else b""]
        if ref != frames: fail(f"status bytes {frames} vs {ref}")
    elif k == "parallel_info":
        d = {"prefill_tp_size": val["prefill_tp_size"], "prefill_dp_size": val["prefill_dp_size"], "enable_mla_l1_5_cache": val["enable_mla_l1_5_cache"],
             "kv_item_lens": val["kv_item_lens"] or [], "kv_unit_lens": val["kv_unit_lens"] or [], "state_item_lens": val["state_item_lens"] or [], "state_unit_lens": val["state_unit_lens"] or []}
        if json.dumps(d) != v["body"]: fail(f"parallel info body {v['body']} vs {json.dumps(d)}")
    elif k == "rank_registration":
        d = {"role": val["role"], "world_size": val["world_size"], "dp_size": val["dp_size"], "rank_ip": val["rank_ip"], "rank_port": val["rank_port"],
             "engine_rank": val["engine_rank"], "enable_mla_l1_5_cache": val["enable_mla_l1_5_cache"],
             "kv_item_lens": val["kv_item_lens"] or [], "kv_unit_lens": val["kv_unit_lens"] or [], "state_item_lens": val["state_item_lens"] or [], "state_unit_lens": val["state_unit_lens"] or []}
        if json.dumps(d) != v["body"]: fail(f"rank registration body {v['body']} vs {json.dumps(d)}")
    elif k == "rank_address":
        if json.dumps({"rank_ip": val["rank_ip"], "rank_port": val["rank_port"]}) != v["body"]: fail("address body")
print("all vectors parse identically on the reference side:", counts)
