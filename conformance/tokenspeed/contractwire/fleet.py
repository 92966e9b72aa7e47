# A prefill fleet made of tokenspeed's own code: its bootstrap server
# (MooncakeKVBootstrapServer) and, per prefill rank, its prefill manager
# (MooncakeKVManagerPrefill, constructed as the engine constructs it), which
# registers with the server, parses and validates registrations and
# pre-allocations, plans the pair, computes every write into the decode
# arena and answers status frames. Only the transfer engine is a stand-in:
# instead of writing it checks every destination range against the arena
# the decode rank registered (a write outside fails the room).
#
# The fleet plays the prefill scheduler too: a room whose pre-allocations
# are all in is sent (MooncakeKVSender.send) with the prefill's own manifest
# and a bootstrap token of 1000 + room % 1000.
#
#   PYTHONPATH=<tokenspeed-env dir>:conformance/tokenspeed/contractwire \
#     python3 fleet.py PAIR READY_FILE
#
# writes {"bootstrap": "host:port", "pair": PAIR} to READY_FILE once every
# rank has registered, then serves until its stdin closes; it prints one JSON
# line per event (registration verdicts, aborted rooms, writes outside the
# arena) on stdout. pdtopo's own code.
import json
import os
import socket
import sys
import threading
import time
from types import SimpleNamespace

import numpy as np

import layouts
from tokenspeed.runtime.pd.base.mooncake_engine import MooncakeTransferEngine
from tokenspeed.runtime.pd.base.status import TransferPoll
from tokenspeed.runtime.pd.cache_protocol import build_cache_block_manifest
from tokenspeed.runtime.pd.mooncake.conn import MooncakeKVBootstrapServer
from tokenspeed.runtime.pd.mooncake.entities import KVArgs, KVManagerArgs
from tokenspeed.runtime.pd.mooncake.prefill import MooncakeKVManagerPrefill
from tokenspeed.runtime.pd.mooncake.sender import MooncakeKVSender
from tokenspeed.runtime.pd.topology import PDParallelTopology

PREFILL_ARENA = 0x1000_0000
events_lock = threading.Lock()


def emit(**event):
    with events_lock:
        print(json.dumps(event, sort_keys=True), flush=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def check_writes(engine, session_id, src, dst, lengths):
    """The stand-in transfer engine: every destination range must lie in
    the arena the session registered."""
    mgr = engine.manager
    reg = mgr.decode_kv_args_table.get(session_id)
    if reg is None:
        emit(event="write_unregistered", rank=mgr.topology.tp_rank, session=session_id)
        return -1
    size = reg.peer_cache_layout.plan.arena_bytes
    for d, n in zip(dst, lengths):
        if d < reg.dst_kv_ptr or d + n > reg.dst_kv_ptr + size:
            emit(event="write_outside_arena", rank=mgr.topology.tp_rank, session=session_id,
                 offset=d - reg.dst_kv_ptr, length=n, arena_bytes=size)
            return -1
    mgr.writes[session_id] = mgr.writes.get(session_id, 0) + len(lengths)
    return 0


def start_ranks(pair, port):
    contract = layouts.contract(pair.model, pair.prefill_tp, pair.prefill_blocks)
    managers = []
    for dp_rank in range(pair.prefill_dp):
        for rank in range(pair.prefill_tp):
            args = KVManagerArgs(
                bootstrap_port=port, dist_init_addr=None,
                topology=PDParallelTopology(
                    tp_size=pair.prefill_tp, tp_rank=rank, cp_size=1, cp_rank=0,
                    dp_size=pair.prefill_dp, dp_rank=dp_rank,
                    world_size=pair.prefill_tp * pair.prefill_dp,
                    global_rank=dp_rank * pair.prefill_tp + rank),
                enable_metrics=False, enable_dp_attention=pair.prefill_dp > 1,
                served_model_name="m", app_key="k", metrics_reporters="",
            )
            kv = KVArgs(engine_rank=args.topology.global_rank, kv_data_ptr=PREFILL_ARENA,
                        ib_device="", gpu_id=0, cache_layout=contract)
            mgr = MooncakeKVManagerPrefill(args, kv)
            mgr.engine.manager = mgr
            mgr.writes = {}
            managers.append(mgr)
    return contract, managers


def source_manifest(contract, dest):
    """The prefill's own blocks for a room whose decode manifest is dest."""
    tables = {}
    for s in contract.group_specs:
        pages = contract.plan.group(s.group_id).page_count
        slots = -(-dest.prompt_len // s.block_granularity) + 1
        ids = 1 + np.arange(slots) % (pages - 1)
        tables[s.group_id] = ids.reshape(1, slots).astype(np.int32)
    op = SimpleNamespace(block_tables_arrays=lambda: tables)
    return build_cache_block_manifest(op, layout=contract, request_row=0,
                                      prefix_len=dest.prefix_len, prompt_len=dest.prompt_len)


def schedule(mgr, contract, addr, stop):
    """The prefill scheduler: send each room once its pre-allocations are in;
    report rooms the manager failed."""
    sent, reported = set(), set()
    while not stop.is_set():
        for room, status in list(mgr.request_status.items()):
            if status == TransferPoll.Failed and room not in reported:
                reported.add(room)
                emit(event="room_failed", rank=mgr.topology.tp_rank, dp=mgr.topology.dp_rank,
                     room=room, reason=mgr.failure_records.get(room, ""))
            if room in sent or status != TransferPoll.Bootstrapped:
                continue
            infos = list(mgr.transfer_infos.get(room, {}).values())
            if not infos:
                continue
            sent.add(room)
            sender = MooncakeKVSender(mgr, addr, room)
            real = [i for i in infos if i.block_manifest is not None]
            manifest = source_manifest(contract, real[0].block_manifest) if real else None
            sender.send(True, bootstrap_token=1000 + room % 1000, block_manifest=manifest)
        for session in list(mgr.rejected_decode_sessions):
            key = ("rejected", session)
            if key not in reported:
                reported.add(key)
                emit(event="registration_rejected", rank=mgr.topology.tp_rank, session=session)
        time.sleep(0.002)


def main(pair_name, ready_file):
    pair = next(p for p in layouts.PAIRS if p.name == pair_name)
    MooncakeTransferEngine.on_transfer = check_writes
    port = free_port()
    server = MooncakeKVBootstrapServer(port)
    contract, managers = start_ranks(pair, port)
    addr = f"127.0.0.1:{port}"
    stop = threading.Event()
    for mgr in managers:
        threading.Thread(target=schedule, args=(mgr, contract, addr, stop), daemon=True).start()
    with open(ready_file + ".tmp", "w") as f:
        json.dump({"bootstrap": addr, "pair": pair_name}, f)
    os.rename(ready_file + ".tmp", ready_file)
    sys.stdin.read()  # until the driver closes it
    stop.set()
    for mgr in managers:
        emit(event="writes", rank=mgr.topology.tp_rank, dp=mgr.topology.dp_rank, sessions=mgr.writes)
    server.close()
    os._exit(0)  # the managers' threads never end


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
