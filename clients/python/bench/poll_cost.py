#!/usr/bin/env python3
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
"""What one poll() of an open room costs the scheduler: the adapter's,
against the reference engine's in-process poll(), in the same run.

The reference (tokenspeed's v1 wire, MooncakeKVReceiver.poll) reads the
room's status from a dict its transfer threads keep up to date
(kv_mgr.check_status is request_status[room]) and compares it with
Success, Failed, WaitingForInput and Transferring; InProcessReceiver below
does that same work, typed again for this benchmark. The adapter's rooms
are real: the receiver agent and the prefill peer run as processes, the
rooms are opened and Bootstrapped (no request, so they stay open), and
every poll() reads the manager's table.

    python3 clients/python/bench/poll_cost.py [--rooms 512]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import timeit
from pathlib import Path
from typing import Callable

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from pdtopo_agent import AgentKVManager, AgentKVReceiver, TransferPoll  # noqa: E402
from tests import procs  # noqa: E402


class ReferencePoll:
    """The reference's TransferPoll: plain class attributes."""

    Failed = 0
    Bootstrapping = 1
    Bootstrapped = 2
    WaitingForInput = 3
    Transferring = 4
    Success = 5


class InProcessManager:
    def __init__(self) -> None:
        self.request_status: dict[int, int] = {}
        self.waiting_timeout = 300.0

    def check_status(self, bootstrap_room: int) -> int:
        return self.request_status[bootstrap_room]


class InProcessReceiver:
    """The reference receiver's poll(): a dict read and its comparisons."""

    def __init__(self, mgr: InProcessManager, bootstrap_room: int) -> None:
        self.kv_mgr = mgr
        self.bootstrap_room = bootstrap_room
        self.conclude_state: int | None = None
        self.init_time: float | None = None

    def poll(self) -> int:
        if self.conclude_state is None:
            status = self.kv_mgr.check_status(self.bootstrap_room)
            if status in (ReferencePoll.Success, ReferencePoll.Failed):
                self.conclude_state = status
            elif status == ReferencePoll.WaitingForInput:
                if self.init_time is not None and time.time() - self.init_time >= self.kv_mgr.waiting_timeout:
                    self.conclude_state = ReferencePoll.Failed
                    return ReferencePoll.Failed
            elif status == ReferencePoll.Transferring:
                pass  # the reference logs a warning here
            return status
        return self.conclude_state


def per_call(fn: Callable[[], object], number: int) -> float:
    """Seconds per call of fn: the best of five runs of number calls."""
    return min(timeit.repeat(fn, number=number, repeat=5)) / number


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--manifest", default=str(HERE / "fragmented_p8_d4.yaml"))
    ap.add_argument("--rooms", type=int, default=512, help="open rooms swept per scheduler iteration")
    ap.add_argument("--polls", type=int, default=1_000_000)
    args = ap.parse_args()

    ref_mgr = InProcessManager()
    ref_rooms = []
    for room in range(args.rooms):
        ref_mgr.request_status[room] = ReferencePoll.Bootstrapped
        ref_rooms.append(InProcessReceiver(ref_mgr, room))

    manifest = Path(args.manifest)
    with tempfile.TemporaryDirectory(prefix="pdtopo-poll-") as tmp:
        work = Path(tmp)
        plans = procs.plan_file(manifest, work)
        kv, state = procs.engine_pointers(*procs.buffer_counts(manifest))
        peer = procs.PrefillPeer(manifest, work)
        agent = procs.Agent(plans, work, 0, 1)
        try:
            mgr = AgentKVManager.for_rank(0, "127.0.0.1:17000", kv, state, socket_dir=str(work))
            rooms = [AgentKVReceiver(mgr, peer.bootstrap_addr, room) for room in range(args.rooms)]
            deadline = time.monotonic() + 30
            while any(rc.poll() == TransferPoll.Bootstrapping for rc in rooms):
                if time.monotonic() > deadline:
                    raise SystemExit("the rooms did not bootstrap within 30s")
                time.sleep(0.01)
            states = {TransferPoll.name_of(rc.poll()) for rc in rooms}
            if states != {"Bootstrapped"}:
                raise SystemExit(f"the rooms are {states}, want all Bootstrapped")

            one_ref, one = ref_rooms[0], rooms[0]
            ref_poll = per_call(one_ref.poll, args.polls)
            poll = per_call(one.poll, args.polls)

            def ref_sweep() -> None:
                for rc in ref_rooms:
                    rc.poll()

            def sweep() -> None:
                for rc in rooms:
                    rc.poll()

            sweeps = max(1, args.polls // args.rooms)
            ref_sweep_s = per_call(ref_sweep, sweeps)
            sweep_s = per_call(sweep, sweeps)
            for rc in rooms:
                rc.clear()
            mgr.close()
        finally:
            agent.stop()
            peer.stop()

    print(f"python {sys.version.split()[0]}, {args.rooms} open rooms (Bootstrapped), best of 5 runs")
    print(f"one poll(): reference in-process {ref_poll * 1e9:.0f} ns, adapter {poll * 1e9:.0f} ns "
          f"({poll / ref_poll:.2f}x)")
    print(f"sweep over {args.rooms} rooms: reference {ref_sweep_s * 1e6:.1f} µs, adapter {sweep_s * 1e6:.1f} µs "
          f"({sweep_s / ref_sweep_s:.2f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
