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
"""The adapter against the real receiver agent and prefill peer processes,
over real sockets, in the reference decode scheduler's calling order."""

from __future__ import annotations

import array
import signal
import tempfile
import threading
import time
import unittest
from pathlib import Path
from typing import Any, Callable

from pdtopo_agent import (
    FAILURE_AGENT_REFUSED,
    FAILURE_AGENT_UNAVAILABLE,
    FAILURE_OTHER_RANK,
    FAILURE_STREAM_LOST,
    AgentKVManager,
    AgentKVReceiver,
    AgentRefusedError,
    AgentUnavailableError,
    KVTransferError,
    TransferPoll,
    V1Wire,
)
from pdtopo_agent.wire import IndexArray

from . import procs

GQA_P8_D4 = procs.SAMPLES / "pd_v1alpha1_pdpair_gqa_p8_d4.yaml"  # fragmented: 2 prefill ranks per decode rank
MLA_P16_D8 = procs.SAMPLES / "pd_v1alpha1_pdpair_mla_p16_d8.yaml"  # one source and one dummy per decode rank

try:
    import numpy
except ImportError:  # the adapter never needs it; the tests use it when present
    numpy = None  # type: ignore[assignment]  # the module, or None without it


def int64_array(values: list[int]) -> IndexArray:
    """What the reference engine passes: a numpy int64 array (array.array
    without numpy)."""
    if numpy is not None:
        return numpy.array(values, dtype=numpy.int64)
    return array.array("q", values)


def poll_until(test: unittest.TestCase, receiver: AgentKVReceiver[Any], done: Callable[[int], bool],
               seconds: float = 15) -> int:
    """Poll once per scheduler loop until done(status)."""
    deadline = time.monotonic() + seconds
    while True:
        status = receiver.poll()
        if done(status):
            return status
        if time.monotonic() > deadline:
            test.fail(f"room {receiver.bootstrap_room} still {TransferPoll.name_of(status)} after {seconds}s")
        time.sleep(0.001)


def left_bootstrapping(status: int) -> bool:
    return status != TransferPoll.Bootstrapping


def wait_gone(test: unittest.TestCase, mgr: AgentKVManager[Any], room: int, seconds: float = 10) -> None:
    """Wait until the agent forgot room (a clear is sent without waiting for
    the agent, which applies it moments later)."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            mgr.get_room(room)
        except AgentRefusedError as exc:
            test.assertEqual(exc.code, "RoomNotFound")
            return
        if time.monotonic() > deadline:
            test.fail(f"the agent still holds room {room} after {seconds}s")
        time.sleep(0.005)


class Pod(unittest.TestCase):
    """One decode pod: an agent serving some engine ranks of a pair, and the
    pair's prefill played by the peer."""

    manifest = GQA_P8_D4
    first_rank, rank_count = 0, 4
    peer_args: tuple[str, ...] = ("--token", "7")
    agent_args: tuple[str, ...] = ()

    def setUp(self) -> None:
        self._tmp = tempfile.TemporaryDirectory(prefix="pdtopo-e2e-")
        self.addCleanup(self._tmp.cleanup)
        self.dir = Path(self._tmp.name)
        self.plans = procs.plan_file(self.manifest, self.dir)
        self.kv_ptrs, self.state_ptrs = procs.engine_pointers(*procs.buffer_counts(self.manifest))
        self.peer = procs.PrefillPeer(self.manifest, self.dir, *self.peer_args)
        self.addCleanup(self.peer.stop)
        self.agent = procs.Agent(self.plans, self.dir, self.first_rank, self.rank_count, *self.agent_args)
        self.addCleanup(self.agent.stop)

    def manager(self, rank: int) -> AgentKVManager[V1Wire]:
        mgr = AgentKVManager.for_rank(rank, f"127.0.0.1:{17000 + rank}", self.kv_ptrs, self.state_ptrs,
                                      socket_dir=str(self.dir))
        self.addCleanup(mgr.close)
        return mgr


class ReferenceCallingOrder(Pod):
    def run_rank(self, rank: int, rooms: list[int], prefill_at_once: bool,
                 errors: list[tuple[int, BaseException]]) -> None:
        try:
            mgr = self.manager(rank)
            self.assertEqual(mgr.socket_path, str(self.dir / f"rank-{rank}.sock"))
            for room in rooms:
                receiver = AgentKVReceiver(mgr, self.peer.bootstrap_addr, room)
                if not prefill_at_once:
                    status = poll_until(self, receiver, left_bootstrapping)
                    self.assertEqual(status, TransferPoll.Bootstrapped, f"room {room}")
                receiver.prefill(int64_array([room % 1000, 5, 6]), room % 64, 0, None, None)
                status = poll_until(self, receiver, TransferPoll.finished)
                if status != TransferPoll.Success:
                    receiver.failure_exception()
                self.assertEqual(mgr.pop_prefill_metadata(room), (7, None))
                self.assertEqual(mgr.pop_prefill_metadata(room), (-1, None), "metadata is popped once")
                receiver.clear()
                wait_gone(self, mgr, room)
                receiver.clear()  # twice is fine: nothing is sent the second time
                self.assertEqual(receiver.poll(), TransferPoll.Success, "a concluded room keeps its answer")
            self.assertEqual(mgr.rooms.unknown_events, 0,
                             "no event (a refused second clear) for a room the manager no longer has")
        except BaseException as exc:  # reported by the main thread
            errors.append((rank, exc))

    def run_pod(self, prefill_at_once: bool) -> None:
        per_rank = 5
        errors: list[tuple[int, BaseException]] = []
        threads = [
            threading.Thread(
                target=self.run_rank,
                args=(rank, [rank * 1000 + i for i in range(per_rank)], prefill_at_once, errors),
            )
            for rank in self.agent.ranks
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        self.assertEqual(errors, [])
        # every decode rank's rooms reached both of its prefill ranks, whose
        # checks of the fragments found nothing wrong
        counts = self.peer.counts()
        self.assertEqual(sorted(counts), list(range(8)))
        for prefill_rank, c in counts.items():
            self.assertEqual((c["requests"], c["completed"], c["errors"]), (per_rank, per_rank, 0),
                             f"prefill rank {prefill_rank}: {c}")

    def test_poll_until_bootstrapped_then_prefill(self) -> None:
        self.run_pod(prefill_at_once=False)

    def test_prefill_at_once(self) -> None:
        self.run_pod(prefill_at_once=True)


class SpecCandidates(Pod):
    manifest = MLA_P16_D8
    first_rank, rank_count = 2, 2  # a pod holding engine ranks 2 and 3
    peer_args = ("--token", "42", "--spec-candidates", "11,12")

    def test_token_and_spec_candidates(self) -> None:
        for rank in self.agent.ranks:
            mgr = self.manager(rank)
            receiver = AgentKVReceiver(mgr, self.peer.bootstrap_addr, 500 + rank)
            poll_until(self, receiver, left_bootstrapping)
            receiver.prefill(int64_array([1, 2, 3]), 0)
            self.assertEqual(poll_until(self, receiver, TransferPoll.finished), TransferPoll.Success)
            self.assertEqual((receiver.bootstrap_token, receiver.spec_candidate_ids), (42, [11, 12]))
            self.assertEqual(mgr.pop_prefill_metadata(500 + rank), (42, [11, 12]))
            receiver.clear()
        with self.assertRaises(AgentUnavailableError):
            self.manager(0)  # rank 0 is another pod's: no socket here


class PrefillFails(Pod):
    rank_count = 1
    peer_args = ("--behavior", "fail")

    def test_failure_exception_carries_the_agents_reason(self) -> None:
        mgr = self.manager(0)
        receiver = AgentKVReceiver(mgr, self.peer.bootstrap_addr, 77)
        poll_until(self, receiver, left_bootstrapping)
        receiver.prefill([1, 2], 0)
        self.assertEqual(poll_until(self, receiver, TransferPoll.finished), TransferPoll.Failed)
        with self.assertRaises(KVTransferError) as cm:
            receiver.failure_exception()
        e = cm.exception
        self.assertEqual((e.bootstrap_room, e.remote_endpoint, e.failure_code),
                         (77, self.peer.bootstrap_addr, "PrefillReportedFailure"))
        self.assertIn("prefill", e.failure_reason.lower())
        self.assertIn(f"remote_endpoint={self.peer.bootstrap_addr}", str(e))
        self.assertEqual(receiver.poll(), TransferPoll.Failed)
        wait_gone(self, mgr, 77)  # failure_exception cleared it


class PrefillDies(Pod):
    rank_count = 1
    peer_args = ("--behavior", "die")  # the whole prefill instance dies on the first request
    agent_args = ("--heartbeat-interval=2s", "--heartbeat-misses=1")

    def test_lost_connection(self) -> None:
        mgr = self.manager(0)
        receiver = AgentKVReceiver(mgr, self.peer.bootstrap_addr, 90)
        poll_until(self, receiver, left_bootstrapping)
        receiver.prefill([1], 0)
        self.assertEqual(poll_until(self, receiver, TransferPoll.finished), TransferPoll.Failed)
        with self.assertRaises(KVTransferError) as cm:
            receiver.failure_exception()
        self.assertEqual(cm.exception.failure_code, "LostConnection")
        self.assertIn(self.peer.bootstrap_addr, cm.exception.failure_reason)


class Faults(Pod):
    rank_count = 1

    def test_bootstrap_server_down(self) -> None:
        mgr = self.manager(0)
        down = procs.dead_address()
        receiver = AgentKVReceiver(mgr, down, 5)
        self.assertEqual(poll_until(self, receiver, left_bootstrapping), TransferPoll.Failed)
        self.assertEqual(receiver.failure_code, "ParallelInfoUnavailable")
        with self.assertRaises(KVTransferError) as cm:
            receiver.failure_exception()
        self.assertEqual(cm.exception.failure_code, "ParallelInfoUnavailable")
        self.assertIn(down, cm.exception.failure_reason)

    def test_failed_on_another_rank(self) -> None:
        mgr = self.manager(0)
        receiver = AgentKVReceiver(mgr, self.peer.bootstrap_addr, 6)
        self.assertEqual(poll_until(self, receiver, left_bootstrapping), TransferPoll.Bootstrapped)
        with self.assertRaises(KVTransferError) as cm:
            receiver.failure_exception()  # the ranks' all-reduced poll said Failed
        self.assertEqual(cm.exception.failure_code, FAILURE_OTHER_RANK)
        self.assertEqual(cm.exception.failure_reason, "Failed due to an unknown reason from another rank")

    def test_registration_refused(self) -> None:
        with self.assertRaises(AgentRefusedError) as cm:
            AgentKVManager.for_rank(0, "127.0.0.1:17000", self.kv_ptrs[:3], socket_dir=str(self.dir))
        self.assertEqual((cm.exception.http_status, cm.exception.code), (400, "InvalidArgument"))
        self.assertIn("registers 3 KV", cm.exception.message)

    def test_engine_tp_against_the_plan(self) -> None:
        # The plan is P8 -> D4: an engine saying TP 2 (a pod of another
        # template) is refused naming both sizes; TP 4 registers.
        with self.assertRaises(AgentRefusedError) as cm:
            AgentKVManager.for_rank(0, "127.0.0.1:17000", self.kv_ptrs, self.state_ptrs,
                                    socket_dir=str(self.dir), tp_size=2)
        self.assertEqual((cm.exception.http_status, cm.exception.code), (409, "DecodeLayoutMismatch"))
        self.assertIn("tensor parallel size 2", cm.exception.message)
        self.assertIn("tensor parallel size 4", cm.exception.message)
        mgr = AgentKVManager.for_rank(0, "127.0.0.1:17000", self.kv_ptrs, self.state_ptrs,
                                      socket_dir=str(self.dir), tp_size=4)
        mgr.close()
        with self.assertRaises(ValueError):
            AgentKVManager.for_rank(0, "127.0.0.1:17000", self.kv_ptrs, socket_dir=str(self.dir), tp_size=0)

    def test_room_number_in_use(self) -> None:
        mgr = self.manager(0)
        first = AgentKVReceiver(mgr, self.peer.bootstrap_addr, 8)
        second = AgentKVReceiver(mgr, self.peer.bootstrap_addr, 8)
        self.assertEqual(second.poll(), TransferPoll.Failed)
        with self.assertRaises(KVTransferError) as cm:
            second.failure_exception()
        self.assertIn("RoomExists", cm.exception.failure_reason)
        first.clear()

    def test_bad_prefill_arguments_raise_at_once(self) -> None:
        mgr = self.manager(0)
        receiver = AgentKVReceiver(mgr, self.peer.bootstrap_addr, 10)
        poll_until(self, receiver, left_bootstrapping)
        with self.assertRaisesRegex(TypeError, "kv_indices must hold integers"):
            receiver.prefill([1.5], 0)  # type: ignore[list-item]  # wrong on purpose, as below
        with self.assertRaisesRegex(ValueError, "aux_index is required"):
            receiver.prefill([1], None)  # type: ignore[arg-type]
        with self.assertRaisesRegex(ValueError, "MLA L1.5"):
            receiver.prefill([1], 0, 0, object())  # type: ignore[arg-type]
        self.assertEqual(receiver.poll(), TransferPoll.Bootstrapped, "nothing was sent")
        receiver.prefill([-1], 0)  # the agent refuses it: the room fails, with the agent's words
        self.assertEqual(poll_until(self, receiver, TransferPoll.finished), TransferPoll.Failed)
        with self.assertRaises(KVTransferError) as cm:
            receiver.failure_exception()
        self.assertEqual(cm.exception.failure_code, FAILURE_AGENT_REFUSED)
        self.assertIn("pdtopo agent refused POST /v1/rooms/10/request: 400 InvalidArgument: "
                      "room 10's request: kvIndices[0] is -1", cm.exception.failure_reason)

    def test_agent_restarts(self) -> None:
        mgr = self.manager(0)
        before = AgentKVReceiver(mgr, self.peer.bootstrap_addr, 11)
        poll_until(self, before, left_bootstrapping)
        self.agent.stop()  # SIGTERM: the agent fails its rooms, says so on the stream, then exits
        self.agent = procs.Agent(self.plans, self.dir, 0, 1)  # the kubelet restarts the sidecar
        self.addCleanup(self.agent.stop)
        before.prefill([1], 0)  # nothing to send it on: the room already failed
        self.assertEqual(poll_until(self, before, TransferPoll.finished), TransferPoll.Failed)
        with self.assertRaises(KVTransferError) as cm:
            before.failure_exception()
        self.assertEqual(cm.exception.failure_code, "Shutdown")
        self.assertIn("shut down before room 11 finished", cm.exception.failure_reason)
        deadline = time.monotonic() + 10
        while mgr.rooms.connects < 2:  # the manager connects and registers again by itself
            self.assertLess(time.monotonic(), deadline, f"no new stream: {mgr.rooms.last_loss}")
            time.sleep(0.01)
        after = AgentKVReceiver(mgr, self.peer.bootstrap_addr, 12)
        after.prefill([1], 0)
        self.assertEqual(poll_until(self, after, TransferPoll.finished), TransferPoll.Success)
        after.clear()

    def test_engine_restarts(self) -> None:
        old = self.manager(0)
        waiting = AgentKVReceiver(old, self.peer.bootstrap_addr, 20)
        self.assertEqual(poll_until(self, waiting, left_bootstrapping), TransferPoll.Bootstrapped)
        # the engine restarts: its buffers and transfer session are new
        kv_ptrs = [p + (1 << 30) for p in self.kv_ptrs]
        new = AgentKVManager.for_rank(0, "127.0.0.1:17999", kv_ptrs, self.state_ptrs, socket_dir=str(self.dir))
        self.addCleanup(new.close)
        self.assertEqual(poll_until(self, waiting, TransferPoll.finished), TransferPoll.Failed)
        self.assertEqual(waiting.failure_code, "EngineReregistered")
        self.assertIn("127.0.0.1:17000 → 127.0.0.1:17999", waiting._room["failureMessage"])
        room = AgentKVReceiver(new, self.peer.bootstrap_addr, 21)
        room.prefill([1, 2], 0)
        self.assertEqual(poll_until(self, room, TransferPoll.finished), TransferPoll.Success)
        room.clear()
        time.sleep(0.2)
        self.assertEqual((old.rooms.connects, new.rooms.connects), (1, 1),
                         "the replaced manager does not take the rank back by itself")
        counts = self.peer.counts()
        self.assertEqual([counts[r]["registrations"] for r in (0, 1)], [2, 2],
                         "decode rank 0's prefill ranks got the old and the new registration")

    def test_engine_disconnects_mid_room(self) -> None:
        mgr = self.manager(0)
        receiver = AgentKVReceiver(mgr, self.peer.bootstrap_addr, 30)
        poll_until(self, receiver, left_bootstrapping)
        mgr.close()  # the engine exits: its stream ends, the agent forgets its rooms
        wait_gone(self, AgentKVManager.for_rank(0, "127.0.0.1:17000", self.kv_ptrs, self.state_ptrs,
                                                socket_dir=str(self.dir)), 30)

    def test_agent_crashes(self) -> None:
        mgr = self.manager(0)
        receiver = AgentKVReceiver(mgr, self.peer.bootstrap_addr, 9)
        poll_until(self, receiver, left_bootstrapping)
        self.agent.stop(signal.SIGKILL)  # no goodbye: the stream just ends
        # no exception from poll
        self.assertEqual(poll_until(self, receiver, TransferPoll.finished), TransferPoll.Failed)
        with self.assertRaises(KVTransferError) as cm:
            receiver.failure_exception()
        self.assertEqual(cm.exception.failure_code, FAILURE_STREAM_LOST)
        self.assertIn("rank-0.sock", cm.exception.failure_reason)
        self.assertIn("was Bootstrapped", cm.exception.failure_reason)
        gone = AgentKVReceiver(mgr, self.peer.bootstrap_addr, 13)  # no agent to open it with
        self.assertEqual(gone.poll(), TransferPoll.Failed)
        self.assertEqual(gone.failure_code, FAILURE_AGENT_UNAVAILABLE)


if __name__ == "__main__":
    unittest.main()
