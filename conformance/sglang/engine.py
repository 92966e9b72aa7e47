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

"""SGLang's own pair rules, loaded from its source files and driven per pair.

The disaggregation modules import torch, CUDA pools, Mooncake and NIXL at
module level, none of which the rules need. So this module reads each file
SGLang ships, takes the classes and methods named in RULES out of its
syntax tree, unchanged (their line numbers kept, so a traceback points at
SGLang's line), and executes them in a namespace of stand-ins (stubs.py).
Nothing of SGLang is copied into this repository; the files are read from
the tree given on the command line.

One pair is then run the way the engines run it:
  1. every prefill rank registers with SGLang's CommonKVBootstrapServer
     through SGLang's CommonKVManager.register_to_bootstrap (PUT /route);
  2. every decode rank fetches the prefill's parallel info and checks it in
     SGLang's try_ensure_parallel_info and _resolve_rank_mapping (the
     handshake, on the first request to a new prefill);
  3. every decode rank resolves its prefill ranks through SGLang's
     CommonKVReceiver.init and _setup_bootstrap_infos (GET /route per
     target: the first request), which give the targets and dummy flags;
  4. the prefill side's maybe_send_extra of the transfer backend (mooncake
     or nixl) is called as on a request's last chunk with the decode's
     registered attention TP size (mid-transfer).
"""

import __future__
import ast
import asyncio
import enum
import os
import re
import threading
from collections import defaultdict
from types import SimpleNamespace

import stubs

DISAGG = "python/sglang/srt/disaggregation"

# file -> {class: methods to take (None: the whole class)}
RULES = {
    "base/conn.py": {"StateType": None, "KVPoll": None},
    "common/conn.py": {
        "KVTransferError": None,
        "PrefillServerInfo": None,
        "PrefillRankInfo": None,
        "CommonKVManager": {
            "check_status",
            "update_status",
            "record_failure",
            "try_ensure_parallel_info",
            "_resolve_rank_mapping",
            "register_to_bootstrap",
        },
        "CommonKVReceiver": {
            "__init__",
            "init",
            "_setup_bootstrap_infos",
            "_get_bootstrap_info_from_server",
            "_register_kv_args",
        },
        "CommonKVBootstrapServer": {
            "__init__",
            "run",
            "_is_ready",
            "_setup_routes",
            "_handle_health_check",
            "_handle_route",
            "_handle_route_put",
            "_handle_route_get",
            "_handle_register_dp_rank",
            "_handle_query_dp_ranks",
        },
    },
    "mooncake/conn.py": {
        "MooncakeKVManager": {
            "maybe_send_extra",
            "_is_generic_kvcache_state_type",
            "_requires_exact_state_index_match",
        }
    },
    "nixl/conn.py": {"NixlKVManager": {"maybe_send_extra"}},
}


def _extract(path, wanted):
    with open(path, encoding="utf-8") as f:
        source = f.read()
    tree = ast.parse(source, filename=path)
    found = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name in wanted:
            methods = wanted[node.name]
            if methods is not None:
                node.body = [
                    n
                    for n in node.body
                    if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                    or n.name in methods
                ]
                have = {
                    n.name
                    for n in node.body
                    if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                }
                missing = methods - have
                if missing:
                    raise LookupError(f"{path}: {node.name} lacks {sorted(missing)}")
            found[node.name] = node
    missing = set(wanted) - set(found)
    if missing:
        raise LookupError(f"{path}: no class {sorted(missing)}")
    module = ast.Module(body=list(found.values()), type_ignores=[])
    code = compile(
        module, path, "exec", flags=__future__.annotations.compiler_flag, dont_inherit=True
    )
    return source, code


def _widen_state_type(state_type, source):
    """mooncake/conn.py at its own commit names StateType members that
    base/conn.py at SGLANG_COMMIT lacks (a newer base); add those names so
    the class body executes. None of them is a state the generated models
    carry."""
    names = sorted(set(re.findall(r"StateType\.([A-Z0-9_]+)", source)))
    members = {m.name: m.value for m in state_type}
    extra = [n for n in names if n not in members]
    if not extra:
        return state_type, []
    members.update({n: n.lower() for n in extra})
    return enum.Enum("StateType", members, type=str), extra


class SGLang:
    """SGLang's rule classes, executed from the files of one source tree
    (and mooncake/conn.py from another, when its commit differs)."""

    def __init__(self, src, mooncake_src=None):
        mooncake_src = mooncake_src or src
        self.loop = asyncio.new_event_loop()
        self.http = stubs.InProcessHTTP(self.loop)
        ns = stubs.base_namespace()
        ns["requests"] = self.http
        for rel in ("base/conn.py", "common/conn.py"):
            _, code = _extract(os.path.join(src, DISAGG, rel), RULES[rel])
            exec(code, ns)
        self.ns = ns
        self.KVPoll = ns["KVPoll"]
        self.StateType = ns["StateType"]

        mns = dict(ns)
        msource, mcode = _extract(
            os.path.join(mooncake_src, DISAGG, "mooncake/conn.py"),
            RULES["mooncake/conn.py"],
        )
        mns["StateType"], self.widened_state_types = _widen_state_type(
            ns["StateType"], msource
        )
        exec(mcode, mns)
        self.mooncake_ns = mns
        nns = dict(ns)
        _, ncode = _extract(os.path.join(src, DISAGG, "nixl/conn.py"), RULES["nixl/conn.py"])
        exec(ncode, nns)
        self.nixl_ns = nns

        server_cls = ns["CommonKVBootstrapServer"]

        class LocalBootstrapServer(server_cls):
            # SGLang's server, its handlers answered in process (stubs) and
            # its aiohttp site never started.
            def _run_server(self):
                pass

            def run(self):
                pass

        self.server_cls = LocalBootstrapServer

    # -- the prefill side -------------------------------------------------

    def serve_prefill(self, addr, layout):
        """SGLang's bootstrap server with every prefill rank of layout
        registered by SGLang's own register_to_bootstrap. Returns the
        server and the rank behind each (rank_ip, rank_port)."""
        server = self.server_cls("127.0.0.1", int(addr.rsplit(":", 1)[1]))
        self.http.serve(addr, server)
        owners = {}
        mgr_cls = self.ns["CommonKVManager"]
        for pp_rank in range(layout["pp"]):
            for tp_rank in range(layout["tp"]):
                attn = attention_ranks(layout, tp_rank)
                m = object.__new__(mgr_cls)
                m.dist_init_addr = None
                m.bootstrap_host = addr.rsplit(":", 1)[0]
                m.bootstrap_port = int(addr.rsplit(":", 1)[1])
                m.attn_tp_size, m.attn_tp_rank = attn["attnTPSize"], attn["attnTPRank"]
                m.attn_cp_size, m.attn_cp_rank = 1, 0
                m.attn_dp_size, m.attn_dp_rank = attn["attnDPSize"], attn["attnDPRank"]
                m.pp_size, m.pp_rank = layout["pp"], pp_rank
                # CommonKVManager.__init__: 1 with DP attention, else the
                # server's dp_size; the cases run no DP without DP attention.
                m.system_dp_size = 1
                m.system_dp_rank = 0
                m.local_ip = f"10.1.{pp_rank}.{tp_rank}"
                m.rank_port = 17000 + pp_rank * 100 + tp_rank
                m.kv_args = SimpleNamespace(page_size=layout["pageSize"])
                m.server_args = SimpleNamespace(
                    kv_cache_dtype=layout["kvCacheDtype"],
                    load_balance_method="round_robin",
                    enable_dsa_cache_layer_split=False,
                    port=30000,
                )
                m.register_to_bootstrap()
                owners[(m.local_ip, m.rank_port)] = {
                    "prefillTPRank": tp_rank,
                    "prefillDPRank": attn["attnDPRank"],
                    "prefillAttnTPRank": attn["attnTPRank"],
                    "prefillPPRank": pp_rank,
                }
        return server, owners

    # -- the decode side --------------------------------------------------

    def decode_manager(self, layout, tp_rank, pp_rank, is_mla):
        attn = attention_ranks(layout, tp_rank)
        m = object.__new__(self.ns["CommonKVManager"])
        m.attn_tp_size, m.attn_tp_rank = attn["attnTPSize"], attn["attnTPRank"]
        m.attn_cp_size, m.attn_cp_rank = 1, 0
        m.pp_size, m.pp_rank = layout["pp"], pp_rank
        # decode.py: kv_args.engine_rank = self.tp_rank (the global TP rank).
        m.kv_args = SimpleNamespace(engine_rank=tp_rank, page_size=layout["pageSize"])
        m.server_args = SimpleNamespace(kv_cache_dtype=layout["kvCacheDtype"])
        m.is_mla_backend = is_mla
        m.is_hybrid_mla_backend = False
        m.enable_all_cp_ranks_for_transfer = False
        m.enable_staging = False
        m.prefill_info_table = {}
        m.connection_pool = {}
        m.request_status = {}
        m.failure_records = {}
        m.failure_lock = threading.Lock()
        m.addr_to_rooms_tracker = defaultdict(set)
        m.required_prefill_response_num_table = {}
        return m

    def receive(self, mgr, addr, prefill_dp_rank, room):
        """One request's receiver: SGLang's CommonKVReceiver.init."""
        r = self.ns["CommonKVReceiver"](mgr, addr, room)
        r.init(prefill_dp_rank)
        if r.conclude_state == self.KVPoll.Failed:
            return None, mgr.failure_records.get(room, "")
        return r, None

    # -- mid-transfer -----------------------------------------------------

    def send_extra(self, backend, state_type, prefill_attn_tp, decode_attn_tp, is_mla, pp):
        """The prefill side's maybe_send_extra for one state component on a
        request's last chunk, the transports answering success."""
        kv_args = SimpleNamespace(
            engine_rank=0,
            state_types=[state_type],
            state_data_ptrs=[[0x1000]],
            state_item_lens=[[4096]],
            state_dim_per_tensor=[[64, 8] if state_type == "mamba" else []],
            state_conv_shard_groups=[[]],
            state_layer_ids=[[]],
            prefill_start_layer=0,
            prefill_end_layer=None,
        )
        ok = lambda *a, **k: 0  # noqa: E731
        if backend == "mooncake":
            ns = self.mooncake_ns
            st = ns["StateType"](state_type)
            kv_args.state_types = [st]
            m = object.__new__(ns["MooncakeKVManager"])
            m.kv_args, m.attn_tp_size, m.pp_size = kv_args, prefill_attn_tp, pp
            m.is_mla_backend, m.is_hybrid_mla_backend = is_mla, False
            for name in ("_send_mamba_state_slice", "_send_mamba_state", "_send_kvcache_generic", "_send_slot_state"):
                setattr(m, name, ok)
            req = SimpleNamespace(dst_state_indices=[[0]], mooncake_session_id="decode:1")
            target = SimpleNamespace(
                dst_state_data_ptrs=[[0x2000]],
                dst_state_item_lens=[[4096 * prefill_attn_tp // decode_attn_tp]],
                dst_state_dim_per_tensor=[kv_args.state_dim_per_tensor[0]],
                dst_state_layer_ids=[[]],
                dst_attn_tp_size=decode_attn_tp,
                dst_tp_rank=0,
            )
            return m.maybe_send_extra(req, [[0]], None, target)
        ns = self.nixl_ns
        kv_args.state_types = [ns["StateType"](state_type)]
        m = object.__new__(ns["NixlKVManager"])
        m.kv_args, m.attn_tp_size, m.pp_size = kv_args, prefill_attn_tp, pp
        m.is_mla_backend = is_mla
        for name in ("_send_mamba_state_slice", "_send_mamba_state", "_send_kvcache_generic"):
            setattr(m, name, lambda *a, **k: "handle")
        return m.maybe_send_extra(
            "decode-agent", [[0]], [[0x2000]], [[0]], 0, "room_state",
            decode_attn_tp, 0, [[4096]], [kv_args.state_dim_per_tensor[0]],
        )


def attention_ranks(layout, tp_rank):
    """The attention TP/DP ranks of a global TP rank with DP attention of
    size layout["dp"] (1: off): attention TP = TP / DP, the attention DP
    rank the TP rank's block (sglang/srt/layers/dp_attention.py's
    compute_dp_attention_world_info, with attention CP 1)."""
    attn_tp = layout["tp"] // layout["dp"]
    return {
        "attnTPSize": attn_tp,
        "attnTPRank": tp_rank % attn_tp,
        "attnDPSize": layout["dp"],
        "attnDPRank": tp_rank // attn_tp,
    }
