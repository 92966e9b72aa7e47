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
"""One decode engine rank of the chaos suite, through the Python adapter.

Opens rooms at --rate per second, at most --inflight open, in the
reference decode scheduler's calling order (poll; prefill once
Bootstrapped; clear once finished), until --seconds have passed and every
open room finished. Prints one JSON line per room when it ends:
{"room", "rank", "opened", "ended", "status", "code", "message"} (wall
clock seconds), a room still open after --hang seconds as "status": "Hung",
and {"done": true} last. The Go test (chaos_test.go) reads the lines and
holds them to the invariants; it kills and restarts this process to play
an engine restart, and numbers rooms from --first-room so that a new
process never reuses a room of the old one.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "clients" / "python"))

from pdtopo_agent import AgentError, AgentKVManager, AgentKVReceiver, KVTransferError, TransferPoll  # noqa: E402


def emit(rec: dict[str, Any]) -> None:
    print(json.dumps(rec), flush=True)


def manager(args: argparse.Namespace, kv: list[int], state: list[int]) -> AgentKVManager[Any]:
    """Register the rank, waiting while no agent answers (it may be restarting)."""
    while True:
        try:
            return AgentKVManager.for_rank(args.rank, f"127.0.0.1:{17000 + args.rank}", kv, state,
                                           socket_dir=args.socket_dir)
        except AgentError:
            time.sleep(0.05)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--socket-dir", required=True)
    ap.add_argument("--rank", type=int, required=True)
    ap.add_argument("--bootstrap", required=True, help="the prefill's bootstrap address HOST:PORT")
    ap.add_argument("--kv-buffers", type=int, required=True)
    ap.add_argument("--state-buffers", type=int, default=0)
    ap.add_argument("--rate", type=float, default=5)
    ap.add_argument("--inflight", type=int, default=8)
    ap.add_argument("--seconds", type=float, required=True)
    ap.add_argument("--hang", type=float, required=True)
    ap.add_argument("--first-room", type=int, required=True)
    args = ap.parse_args()

    kv = [0x7F0000000000 + (i << 20) for i in range(args.kv_buffers)]
    state = [0x7E0000000000 + (i << 20) for i in range(args.state_buffers)]
    mgr = manager(args, kv, state)
    open_rooms: dict[int, tuple[AgentKVReceiver[Any], float, bool]] = {}
    room = args.first_room
    start = time.monotonic()
    end = start + args.seconds
    opened = 0
    while True:
        now = time.monotonic()
        if now < end:
            while len(open_rooms) < args.inflight and opened < (now - start) * args.rate:
                try:
                    rc: AgentKVReceiver[Any] = AgentKVReceiver(mgr, args.bootstrap, room)
                except AgentError as exc:  # the adapter fails rooms itself; this is a bug to see
                    emit({"room": room, "rank": args.rank, "opened": time.time(), "ended": time.time(),
                          "status": "Failed", "code": "ConstructorRaised", "message": str(exc)})
                else:
                    open_rooms[room] = (rc, time.time(), False)
                room += 1
                opened += 1
        elif not open_rooms:
            break
        for r, (rc, at, requested) in list(open_rooms.items()):
            status = rc.poll()
            if status == TransferPoll.Bootstrapped and not requested:
                rc.prefill([r & 0xFFFF, 1, 2, 3], r % 1024, 0, None, None)
                open_rooms[r] = (rc, at, True)
                continue
            if status in (TransferPoll.Success, TransferPoll.Failed):
                rec = {"room": r, "rank": args.rank, "opened": at, "ended": time.time(),
                       "status": "Success" if status == TransferPoll.Success else "Failed", "code": "", "message": ""}
                if status == TransferPoll.Failed:
                    rec["code"] = rc.failure_code
                    try:
                        rc.failure_exception()
                    except KVTransferError as exc:
                        rec["message"] = str(exc)[:300]
                else:
                    mgr.pop_prefill_metadata(r)
                rc.clear()
                emit(rec)
                del open_rooms[r]
            elif time.time() - at > args.hang:
                emit({"room": r, "rank": args.rank, "opened": at, "ended": time.time(), "status": "Hung",
                      "code": "", "message": TransferPoll.name_of(status)})
                del open_rooms[r]
        time.sleep(0.002)
    mgr.close()
    emit({"done": True, "rank": args.rank})
    return 0


if __name__ == "__main__":
    sys.exit(main())
