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
"""Rooms per second through the Python adapter, in the reference decode
scheduler's calling order.

Starts the real prefill peer and receiver agent (built with `go build`, or
taken from $PDTOPO_TEST_BIN_DIR) for a PDPair manifest, then runs, for each
engine rank of the pod, a loop shaped like the reference decode scheduler:
keep --inflight rooms open (construct a receiver per request); every
iteration poll each receiver once; a Bootstrapped room gets its
prefill(...), a Successful one its metadata popped and clear(). Prints
rooms/s, open-to-Success latency and polls per room.

With --rooms N the run ends after N rooms instead of --seconds, and prints
the memory of the engine process (peak and current RSS) and of the agent
(RSS and Go heap in use, from its /metrics) after 10,000 rooms and at the
end: what 1M rooms leave behind. Run by hand:

    python3 clients/python/bench/rooms_per_second.py --seconds 10
    python3 clients/python/bench/rooms_per_second.py --rooms 1000000
"""

from __future__ import annotations

import argparse
import multiprocessing
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from pdtopo_agent import AgentKVManager, AgentKVReceiver, KVTransferError, TransferPoll, V1Wire  # noqa: E402
from pdtopo_agent.transport import UnixHTTPConnection  # noqa: E402
from tests import procs  # noqa: E402


Pointers = tuple[list[int], list[int]]
"""A decode rank's (KV, state) buffer addresses (procs.engine_pointers)."""

Memory = tuple[int, tuple[int, int], tuple[int, int], int]
"""(rooms done, the engine's and the agent's (VmRSS, VmHWM), the agent's Go heap)."""


def engine_rank_loop(socket_dir: str, rank: int, bootstrap_addr: str, ptrs: Pointers, inflight: int, seconds: float,
                     rooms: int, agent_pid: int, out: Any) -> None:
    """One engine rank's scheduler loop; puts (done, failed, polls,
    latencies, memory) on out, a queue.Queue or a multiprocessing one."""
    kv_ptrs, state_ptrs = ptrs
    mgr = AgentKVManager.for_rank(rank, f"127.0.0.1:{17000 + rank}", kv_ptrs, state_ptrs, socket_dir=socket_dir)
    next_room = rank << 40
    receivers: dict[int, tuple[AgentKVReceiver[V1Wire], float, bool]] = {}
    done = failed = polls = 0
    latencies: list[float] = []
    memory: list[Memory] = []
    end = time.monotonic() + seconds
    indices = [1, 2, 3, 4]
    while True:
        now = time.monotonic()
        if (now < end) if rooms == 0 else (done + failed + len(receivers) < rooms):
            while len(receivers) < inflight:
                receivers[next_room] = (AgentKVReceiver(mgr, bootstrap_addr, next_room), now, False)
                next_room += 1
        elif not receivers:
            break
        for room, (rc, opened, requested) in list(receivers.items()):
            status = rc.poll()
            polls += 1
            if status == TransferPoll.Bootstrapped and not requested:
                indices[0] = room & 0xFFFF
                rc.prefill(indices, room % 1024, 0, None, None)
                receivers[room] = (rc, opened, True)
            elif status == TransferPoll.Success:
                mgr.pop_prefill_metadata(room)
                rc.clear()
                del receivers[room]
                done += 1
                if len(latencies) < 200_000:
                    latencies.append(time.monotonic() - opened)
                if done in (10_000, rooms):
                    memory.append((done, process_memory("self"), process_memory(str(agent_pid)), agent_heap(mgr)))
            elif status == TransferPoll.Failed:
                try:
                    rc.failure_exception()
                except KVTransferError as exc:
                    if failed < 3:
                        print(f"room {room} failed: {exc}", file=sys.stderr)
                    failed += 1
                del receivers[room]
    mgr.close()
    out.put((done, failed, polls, latencies, memory))


def process_memory(pid: str) -> tuple[int, int]:
    """(VmRSS, VmHWM) of a process in KiB."""
    fields: dict[str, int] = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                fields[key] = int(value.split()[0])
    return fields.get("VmRSS", 0), fields.get("VmHWM", 0)


def agent_heap(mgr: AgentKVManager[Any]) -> int:
    """The agent's Go heap in use (bytes), from /metrics on the rank's socket."""
    conn = UnixHTTPConnection(mgr.socket_path, 5)
    conn.request("GET", "/metrics")
    text = conn.getresponse().read().decode()
    conn.close()
    for line in text.splitlines():
        if line.startswith("go_memstats_heap_inuse_bytes "):
            return int(float(line.split()[1]))
    return -1


def poll_cost(socket_dir: str, bootstrap_addr: str, ptrs: Pointers, n: int = 300000) -> float:
    """Microseconds per poll() of a room that stays Bootstrapped (rank 0):
    it reads the manager's table (bench/poll_cost.py compares it with the
    reference's)."""
    mgr = AgentKVManager.for_rank(0, "127.0.0.1:17000", ptrs[0], ptrs[1], socket_dir=socket_dir)
    rc = AgentKVReceiver(mgr, bootstrap_addr, (1 << 50) + 1)
    while rc.poll() == TransferPoll.Bootstrapping:
        time.sleep(0.001)
    start = time.perf_counter()
    for _ in range(n):
        rc.poll()
    took = time.perf_counter() - start
    rc.clear()
    mgr.close()
    return took / n * 1e6


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--manifest", default=str(HERE / "fragmented_p8_d4.yaml"))
    ap.add_argument("--ranks", type=int, default=1, help="engine ranks of the pod (threads)")
    ap.add_argument("--inflight", type=int, default=256, help="rooms each rank keeps open")
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--rooms", type=int, default=0,
                    help="run this many rooms per rank instead of --seconds, and report memory")
    ap.add_argument("--processes", action="store_true", help="one process per rank instead of one thread")
    args = ap.parse_args()

    manifest = Path(args.manifest)
    with tempfile.TemporaryDirectory(prefix="pdtopo-bench-") as tmp:
        work = Path(tmp)
        plans = procs.plan_file(manifest, work)
        ptrs = procs.engine_pointers(*procs.buffer_counts(manifest))
        peer = procs.PrefillPeer(manifest, work)
        agent = procs.Agent(plans, work, 0, args.ranks)
        try:
            ctx = multiprocessing.get_context("fork")
            out = ctx.Queue() if args.processes else __import__("queue").Queue()
            make = ctx.Process if args.processes else threading.Thread
            workers = [
                make(target=engine_rank_loop, args=(str(work), r, peer.bootstrap_addr, ptrs, args.inflight,
                                                    args.seconds, args.rooms, agent.proc.pid, out))
                for r in agent.ranks
            ]
            start = time.monotonic()
            for w in workers:
                w.start()
            wait = args.seconds + 120 if not args.rooms else args.rooms / 100 + 120
            results = [out.get(timeout=wait) for _ in workers]
            elapsed = time.monotonic() - start
            for w in workers:
                w.join()
            poll_us = poll_cost(str(work), peer.bootstrap_addr, ptrs)
        finally:
            agent.stop()
            peer.stop()
    done = sum(r[0] for r in results)
    failed = sum(r[1] for r in results)
    polls = sum(r[2] for r in results)
    lat: list[float] = sorted(x for r in results for x in r[3])

    def pct(q: float) -> float:
        return lat[min(len(lat) - 1, int(q * len(lat)))] * 1e3 if lat else float("nan")

    mode = "processes" if args.processes else "threads"
    print(
        f"{manifest.name}: {args.ranks} ranks ({mode}), {args.inflight} rooms in flight each: "
        f"{done / elapsed:,.0f} rooms/s ({done} rooms, {failed} failed, {elapsed:.1f}s), "
        f"p50 {pct(0.5):.1f} ms, p99 {pct(0.99):.1f} ms, {polls / max(done, 1):.1f} polls/room"
    )
    print(f"one poll() of an open room (a read of the manager's table): {poll_us * 1000:.0f} ns")
    for r in results:
        for n, (rss, hwm), (agent_rss, agent_hwm), heap in r[4]:
            print(f"after {n:,} rooms: engine process RSS {rss / 1024:.1f} MiB (peak {hwm / 1024:.1f}), "
                  f"agent RSS {agent_rss / 1024:.1f} MiB (peak {agent_hwm / 1024:.1f}), "
                  f"agent Go heap in use {heap / 2**20:.1f} MiB")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
