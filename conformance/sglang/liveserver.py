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

"""SGLang's prefill bootstrap server over HTTP on loopback, for pdtopo's
live read of it (liveprefill_test.go drives this process).

SGLang's CommonKVBootstrapServer (common/conn.py) runs as SGLang runs it:
its own __init__ starts its own aiohttp site (_run_server) on a thread;
prefill ranks register with SGLang's own CommonKVManager.register_to_bootstrap
over real HTTP (the `requests` module). Unlike engine.py, nothing is
answered in process: pdtopo's Go reader asks the socket.

One JSON command per line on stdin, one JSON answer per line on stdout:
  {"op": "serve"}  ->  {"addr": "127.0.0.1:PORT"}   a server, no rank registered
  {"op": "register", "addr": A, "layout": {"tp", "dp", "pp", "pageSize",
   "kvCacheDtype"}}  ->  {"registered": N}           every prefill rank of layout
"""

import argparse
import json
import logging
import os
import socket
import sys
import time
from types import SimpleNamespace

import requests

import engine
import stubs

DISAGG = engine.DISAGG

# What of SGLang's files runs here: the server whole (its site included),
# the registration of a prefill rank, the dataclasses they exchange.
WANTED = {
    "base/conn.py": {"KVPoll": None, "StateType": None},
    "common/conn.py": {
        "PrefillServerInfo": None,
        "PrefillRankInfo": None,
        "CommonKVManager": {"register_to_bootstrap"},
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
            "_cleanup_expired_entries",
            "_run_server",
            "close",
        },
    },
}


def load(src):
    ns = stubs.base_namespace()
    ns.update(requests=requests, logging=logging)
    for rel in ("base/conn.py", "common/conn.py"):
        _, code = engine._extract(os.path.join(src, DISAGG, rel), WANTED[rel])
        exec(code, ns)
    return ns


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve(ns):
    port = free_port()
    ns["CommonKVBootstrapServer"]("127.0.0.1", port)
    addr = f"127.0.0.1:{port}"
    for _ in range(100):  # the site starts on SGLang's thread
        try:
            if requests.get(f"http://{addr}/health", timeout=1).status_code == 200:
                return addr
        except requests.ConnectionError:
            time.sleep(0.05)
    raise RuntimeError(f"SGLang's bootstrap server did not start on {addr}")


def register(ns, addr, layout):
    """Every rank of layout registers, as engine.serve_prefill does, but
    over HTTP."""
    host, port = addr.rsplit(":", 1)
    n = 0
    for pp_rank in range(layout["pp"]):
        for tp_rank in range(layout["tp"]):
            attn = engine.attention_ranks(layout, tp_rank)
            m = object.__new__(ns["CommonKVManager"])
            m.dist_init_addr = None
            m.bootstrap_host, m.bootstrap_port = host, int(port)
            m.attn_tp_size, m.attn_tp_rank = attn["attnTPSize"], attn["attnTPRank"]
            m.attn_cp_size, m.attn_cp_rank = 1, 0
            m.attn_dp_size, m.attn_dp_rank = attn["attnDPSize"], attn["attnDPRank"]
            m.pp_size, m.pp_rank = layout["pp"], pp_rank
            m.system_dp_size, m.system_dp_rank = 1, 0  # DP attention, as the cases run it
            m.local_ip, m.rank_port = f"10.1.{pp_rank}.{tp_rank}", 17000 + pp_rank * 100 + tp_rank
            m.kv_args = SimpleNamespace(page_size=layout["pageSize"])
            m.server_args = SimpleNamespace(
                kv_cache_dtype=layout["kvCacheDtype"],
                load_balance_method="round_robin",
                enable_dsa_cache_layer_split=False,
                port=30000,
            )
            m.register_to_bootstrap()
            n += 1
    return n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sglang", required=True, help="a tree holding python/ at SGLANG_COMMIT")
    args = ap.parse_args()
    ns = load(args.sglang)
    for line in sys.stdin:
        cmd = json.loads(line)
        if cmd["op"] == "serve":
            out = {"addr": serve(ns)}
        elif cmd["op"] == "register":
            out = {"registered": register(ns, cmd["addr"], cmd["layout"])}
        else:
            out = {"error": f"unknown op {cmd['op']!r}"}
        print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
