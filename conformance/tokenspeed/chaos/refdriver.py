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
"""One decode engine rank of the chaos schedule, on tokenspeed's own receiver.

test/chaos/driver.py's twin: the same rooms (numbers, rate, in-flight
bound, calling order: construct; prefill once Bootstrapped; clear once
finished) and the same output lines, but each room is the engine's own
MooncakeKVReceiver over its own MooncakeKVManagerDecode (decode rank
--rank of TP4, the GQA p8->d4 sample's 160 buffers of 512 B in 256 B
heads), imported from a tokenspeed-env directory (env.sh) on PYTHONPATH.

The reference has no failure codes, only a message; `code` is a class of
the message (classify), and "" when the message is the reference's
"unknown reason" fallback. A room the constructor raised out of is
"ConstructorRaised". The engine calls the receiver on its event loop, so a
call that blocks (an HTTP request without a timeout, a full ZMQ queue)
stalls every room of the rank: a watchdog thread reports rooms still open
after --hang as "Hung" even then, and, if the loop is still stuck --hang
seconds after the run, prints the "done" line itself with "wedged": true
and exits. The "done" line carries the longest single call ("stall_s")
and how many rooms the receiver still holds open ("open_at_end").
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
import threading
import time
from typing import Any

import numpy as np

from tokenspeed.runtime.pd.base import mooncake_engine  # pdtopo's stand-in (no RDMA)
from tokenspeed.runtime.pd.base.status import TransferPoll
from tokenspeed.runtime.pd.mooncake.decode import MooncakeKVManagerDecode
from tokenspeed.runtime.pd.mooncake.entities import KVArgs, KVManagerArgs, KVTransferError
from tokenspeed.runtime.pd.mooncake.receiver import MooncakeKVReceiver

LAYERS, ITEM, UNIT, DECODE_TP = 80, 512, 256, 4
CLASSES = (
    ("Could not fetch prefill parallel info", "ParallelInfoUnavailable"),
    ("Could not fetch bootstrap info", "BootstrapInfoUnavailable"),
    ("timed out after", "WaitingTimeout"),
    ("Losing connection with prefill instance", "LostConnection"),
    ("Failed to get kvcache from prefill instance", "PrefillFailed"),
    ("Failed due to an unknown reason", ""),
)

out_lock = threading.Lock()


def emit(rec: dict[str, Any]) -> None:
    with out_lock:
        print(json.dumps(rec), flush=True)


def classify(message: str) -> str:
    for text, code in CLASSES:
        if text in message:
            return code
    return "Other"


def manager(rank: int) -> MooncakeKVManagerDecode:
    # one Mooncake session per decode rank, as pdtopo's driver names its own
    mooncake_engine._sessions = itertools.count(17000 + rank)
    args = KVManagerArgs(
        bootstrap_port=0, dist_init_addr=None, world_size=DECODE_TP, dp_size=1,
        attn_tp_rank=rank, attn_dp_rank=0, is_mla_backend=False, draft_is_mla_backend=False,
        enable_metrics=False, enable_dp_attention=False, enable_mla_l1_5_cache=False,
        served_model_name="m", app_key="k", metrics_reporters="")
    n = 2 * LAYERS
    kv = KVArgs(
        engine_rank=rank, kv_data_ptrs=[0x7F0000000000 + (i << 20) for i in range(n)],
        kv_data_lens=[1 << 20] * n, kv_item_lens=[ITEM] * n,
        offsets=[(i, LAYERS + i) for i in range(LAYERS)],
        aux_data_ptrs=[], aux_data_lens=[], aux_item_lens=[], ib_device="", gpu_id=0,
        target_layer_num=LAYERS, draft_layer_num=0, kv_unit_lens=[UNIT] * n)
    return MooncakeKVManagerDecode(args, kv)


class Room:
    def __init__(self, opened: float) -> None:
        self.rc: MooncakeKVReceiver | None = None
        self.opened = opened
        self.requested = False
        self.reported = False


class Driver:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.mgr = manager(args.rank)
        self.rooms: dict[int, Room] = {}
        self.lock = threading.Lock()
        self.stall = 0.0
        self.finished = False

    def end(self, room: int, st: Room, status: str, code: str = "", message: str = "") -> None:
        """Report room once (the watchdog may have reported it Hung)."""
        with self.lock:
            self.rooms.pop(room, None)
            if st.reported:
                return
            st.reported = True
        emit({"room": room, "rank": self.args.rank, "opened": st.opened, "ended": time.time(),
              "status": status, "code": code, "message": message[:300]})

    def timed(self, fn, *a):
        t0 = time.monotonic()
        try:
            return fn(*a)
        finally:
            self.stall = max(self.stall, time.monotonic() - t0)

    def open(self, room: int) -> None:
        st = Room(time.time())
        with self.lock:
            self.rooms[room] = st
        try:
            rc = self.timed(MooncakeKVReceiver, self.mgr, self.args.bootstrap, room)
        except Exception as exc:  # noqa: BLE001 - what the engine's loop would see
            self.end(room, st, "Failed", "ConstructorRaised", f"{type(exc).__name__}: {exc}")
            return
        st.rc = rc

    def step(self, room: int, st: Room) -> None:
        rc = st.rc
        if rc is None:
            return
        status = self.timed(rc.poll)
        if status == TransferPoll.Bootstrapped and not st.requested:
            kv = np.array([room & 0xFFFF, 1, 2, 3], dtype=np.int64)
            self.timed(rc.prefill, kv, room % 1024, 0, None, None)
            st.requested = True
            return
        if status == TransferPoll.Success:
            self.mgr.pop_prefill_metadata(room)
            rc.clear()
            self.end(room, st, "Success")
        elif status == TransferPoll.Failed:
            try:
                rc.failure_exception()
                message = ""
            except KVTransferError as exc:
                message = exc.failure_reason
            rc.clear()
            self.end(room, st, "Failed", classify(message), message)

    def watchdog(self, deadline: float) -> None:
        while not self.finished:
            now = time.time()
            with self.lock:
                late = [(r, st) for r, st in self.rooms.items() if not st.reported and now - st.opened > self.args.hang]
                for r, st in late:
                    st.reported = True
                    del self.rooms[r]  # the slot is freed, as driver.py drops a hung room
            for r, st in late:
                status = "never constructed" if st.rc is None else "Bootstrapped" if st.requested else "Bootstrapping"
                emit({"room": r, "rank": self.args.rank, "opened": st.opened, "ended": now,
                      "status": "Hung", "code": "", "message": status})
            if time.monotonic() > deadline:
                self.done(wedged=True)
            time.sleep(0.1)

    def done(self, wedged: bool) -> None:
        # rooms the receiver still holds neither Success nor Failed: nothing
        # in the reference will end them now that no fault comes
        still = sum(1 for s in list(self.mgr.request_status.values())
                    if s not in (TransferPoll.Success, TransferPoll.Failed))
        emit({"done": True, "rank": self.args.rank, "wedged": wedged, "stall_s": round(self.stall, 3),
              "open_at_end": still})
        sys.stdout.flush()
        os._exit(0)  # the decode manager's threads never end

    def run(self) -> None:
        a = self.args
        start = time.monotonic()
        end = start + a.seconds
        threading.Thread(target=self.watchdog, args=(end + 2 * a.hang,), daemon=True).start()
        room, opened = a.first_room, 0
        while True:
            now = time.monotonic()
            if now < end:
                while len(self.rooms) < a.inflight and opened < (now - start) * a.rate:
                    self.open(room)
                    room += 1
                    opened += 1
            elif not self.rooms:
                break
            with self.lock:
                items = list(self.rooms.items())
            for r, st in items:
                self.step(r, st)
            time.sleep(0.002)
        self.finished = True
        self.done(wedged=False)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rank", type=int, required=True)
    ap.add_argument("--bootstrap", required=True, help="the prefill's bootstrap address HOST:PORT")
    ap.add_argument("--rate", type=float, default=5)
    ap.add_argument("--inflight", type=int, default=8)
    ap.add_argument("--seconds", type=float, required=True)
    ap.add_argument("--hang", type=float, required=True)
    ap.add_argument("--first-room", type=int, required=True)
    Driver(ap.parse_args()).run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
