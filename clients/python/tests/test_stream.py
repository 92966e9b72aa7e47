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
"""The manager's event stream against a scripted agent on a real unix
socket: what the adapter does with each kind of line, and with the faults
of an agent (lines that are not events, events for rooms it never opened,
an agent that stops reading, another engine taking the rank)."""

from __future__ import annotations

import os
import tempfile
import unittest
from typing import Any

from pdtopo_agent import (
    FAILURE_AGENT_REFUSED,
    FAILURE_STREAM_LOST,
    AgentKVManager,
    AgentKVReceiver,
    KVTransferError,
    TransferPoll,
    V1Wire,
)

from .fakeagent import FakeAgent, wait_for


def room_event(room: int, ref: int, status: str, **extra: Any) -> dict[str, Any]:
    ev = {"ev": "room", "ref": ref, "room": room, "status": status, "bootstrapToken": -1, "specCandidateIds": None,
          "failureCode": None, "failureMessage": None}
    ev.update(extra)
    return ev


class NoCalls:
    """Stands in for the manager's HTTP connection: any call is a test failure."""

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"the adapter used the agent's HTTP API ({name}) where it should not")

    def close(self) -> None:
        pass


def failure_message(rc: AgentKVReceiver[Any]) -> str:
    """The message of a failure the adapter recorded (not the agent's)."""
    assert rc._failure is not None, "the adapter recorded no failure"
    return rc._failure[1]


class StreamCase(unittest.TestCase):
    """A manager on the scripted agent's stream; no tests of its own."""

    read_ops = True

    def setUp(self) -> None:
        self._tmp = tempfile.TemporaryDirectory(prefix="pdtopo-stream-")
        self.addCleanup(self._tmp.cleanup)
        self.path = os.path.join(self._tmp.name, "rank-0.sock")
        self.agent = FakeAgent(self.path, read_ops=self.read_ops)
        self.addCleanup(self.agent.close)
        self.mgr = AgentKVManager(self.path, "127.0.0.1:17000", [1, 2], timeout=2)
        self.addCleanup(self.mgr.close)
        self.stream = self.agent.next_stream()
        self.mgr.connection = NoCalls()  # type: ignore[assignment]  # a stand-in that fails any call

    def open(self, room: int) -> tuple[AgentKVReceiver[V1Wire], int]:
        rc = AgentKVReceiver(self.mgr, "10.0.0.1:8998", room)
        op = self.stream.next_op()
        self.assertEqual((op["op"], op["room"], op["bootstrapAddr"]), ("open", room, "10.0.0.1:8998"))
        return rc, op["ref"]


class Stream(StreamCase):
    def test_registration_is_the_handshake(self) -> None:
        self.assertEqual(self.stream.registration,
                         {"sessionId": "127.0.0.1:17000", "kvDataPtrs": [1, 2], "stateDataPtrs": []})

    def test_poll_reads_the_table_and_sends_nothing(self) -> None:
        rc, ref = self.open(1)
        self.assertEqual(rc.poll(), TransferPoll.Bootstrapping)
        self.stream.send(room_event(1, ref, "Bootstrapped"))
        wait_for(lambda: rc.poll() == TransferPoll.Bootstrapped, what="the Bootstrapped event")
        for _ in range(10000):
            self.assertEqual(rc.poll(), TransferPoll.Bootstrapped)
        self.assertTrue(self.stream.ops.empty(), "poll() wrote to the agent")
        rc.prefill([4, 5], 6, 7)
        op = self.stream.next_op()
        self.assertEqual(op, {"op": "request", "room": 1, "ref": ref,
                              "request": {"kvIndices": [4, 5], "auxIndex": 6, "decodePrefixLen": 7}})
        self.stream.send(room_event(1, ref, "Success", bootstrapToken=42, specCandidateIds=[3]))
        wait_for(lambda: rc.poll() == TransferPoll.Success, what="the Success event")
        self.assertEqual(self.mgr.pop_prefill_metadata(1), (42, [3]))
        rc.clear()
        rc.clear()  # twice: the second sends nothing
        self.assertEqual(self.stream.next_op(), {"op": "clear", "room": 1, "ref": ref})
        self.assertRaises(Exception, self.stream.next_op, timeout=0.2)
        self.assertEqual(rc.poll(), TransferPoll.Success)

    def test_prefill_takes_the_reference_arguments_by_position_or_name(self) -> None:
        self.assertIsInstance(self.mgr.wire, V1Wire)
        self.assertFalse(self.mgr.contract_wire)
        calls: list[tuple[tuple[Any, ...], dict[str, Any]]] = [
            (([4, 5], 6, 7, None, [8]), {}),  # tokenspeed's v1 decode executor
            (([4, 5],), {"aux_index": 6, "decode_prefix_len": 7, "mla_l1_5_args": None, "mamba_indices": [8]}),
            ((), {"kv_indices": [4, 5], "aux_index": 6, "decode_prefix_len": 7, "mamba_indices": (8,)}),
        ]
        for room, (args, kwargs) in enumerate(calls, start=1):
            rc, ref = self.open(room)
            rc.prefill(*args, **kwargs)
            self.assertEqual(self.stream.next_op(), {"op": "request", "room": room, "ref": ref, "request": {
                "kvIndices": [4, 5], "auxIndex": 6, "decodePrefixLen": 7, "mambaIndices": [8]}})
            self.assertEqual(rc.decode_prefix_len, 7)
            self.assertIsNotNone(rc.init_time)
        rc, _ = self.open(len(calls) + 1)
        with self.assertRaises(TypeError):  # the cache-contract wire's call, on the v1 wire
            rc.prefill(block_manifest=b"{}")  # type: ignore[call-arg]  # wrong on purpose
        self.assertRaises(Exception, self.stream.next_op, timeout=0.2)

    def test_operations_do_not_wait_for_answers(self) -> None:
        receivers = [AgentKVReceiver(self.mgr, "10.0.0.1:8998", room) for room in range(50)]
        for rc in receivers:
            rc.prefill([rc.bootstrap_room], 0)
        ops = [self.stream.next_op() for _ in range(100)]  # the agent answered nothing meanwhile
        self.assertEqual([(op["op"], op["room"]) for op in ops[:50]], [("open", room) for room in range(50)])
        self.assertEqual([(op["op"], op["room"]) for op in ops[50:]], [("request", room) for room in range(50)])
        self.assertEqual(len({op["ref"] for op in ops[:50]}), 50, "each opening has its own ref")

    def test_events_for_rooms_the_client_never_opened(self) -> None:
        rc, ref = self.open(5)
        self.stream.send(room_event(999, 1, "Success"), room_event(5, ref + 100, "Success"),
                         {"ev": "refused", "op": "clear", "room": 77, "ref": 3, "httpStatus": 404,
                          "code": "RoomNotFound", "message": "m"},
                         {"ev": "future-kind", "x": 1}, room_event(5, ref, "Bootstrapped"))
        wait_for(lambda: rc.poll() == TransferPoll.Bootstrapped, what="room 5's own event")
        self.assertEqual(self.mgr.rooms.unknown_events, 3)
        self.assertEqual(self.mgr.rooms.streams_lost, 0, "the stream holds")

    def test_an_earlier_room_of_the_same_number(self) -> None:
        old, old_ref = self.open(5)
        old.clear()
        self.stream.next_op()
        new, new_ref = self.open(5)
        self.assertNotEqual(old_ref, new_ref)
        self.stream.send(room_event(5, old_ref, "Success", bootstrapToken=1), room_event(5, new_ref, "Bootstrapped"))
        wait_for(lambda: new.poll() == TransferPoll.Bootstrapped, what="the new room's event")
        self.assertEqual(self.mgr.rooms.unknown_events, 1, "the old room's Success did not reach the new room")

    def test_refusals_are_the_rooms_failures(self) -> None:
        rc, ref = self.open(3)
        self.stream.send({"ev": "refused", "op": "open", "room": 3, "ref": ref, "httpStatus": 503,
                          "code": "TooManyRooms",
                          "message": "1024 rooms are open, the most this agent keeps; clear finished rooms"})
        wait_for(lambda: rc.poll() == TransferPoll.Failed, what="the refusal")
        with self.assertRaises(KVTransferError) as cm:
            rc.failure_exception()
        self.assertEqual(cm.exception.failure_code, FAILURE_AGENT_REFUSED)
        self.assertEqual(cm.exception.failure_reason, "pdtopo agent refused POST /v1/rooms: 503 TooManyRooms: "
                         "1024 rooms are open, the most this agent keeps; clear finished rooms")

    def test_room_failure_and_resync(self) -> None:
        a, ref_a = self.open(1)
        b, ref_b = self.open(2)
        self.stream.send(room_event(1, ref_a, "Failed", failureCode="LostConnection",
                                    failureMessage="lost connection with prefill"),
                         {"ev": "resync", "rooms": 2},
                         room_event(1, ref_a, "Failed", failureCode="LostConnection", failureMessage="x"),
                         room_event(2, ref_b, "WaitingForInput"))
        wait_for(lambda: b.poll() == TransferPoll.WaitingForInput, what="the resync")
        self.assertEqual(self.mgr.rooms.resyncs, 1)
        self.assertEqual(a.poll(), TransferPoll.Failed)
        self.assertEqual(a.failure_code, "LostConnection")
        self.stream.send(room_event(2, ref_b, "Bootstrapped"))  # a stale event: states only move up
        self.stream.send(room_event(2, ref_b, "Transferring"))
        wait_for(lambda: b.poll() == TransferPoll.Transferring, what="Transferring")

    def test_a_line_that_is_not_an_event(self) -> None:
        rc, _ = self.open(1)
        self.stream.send(b"<html>proxy error</html>")
        wait_for(lambda: rc.poll() == TransferPoll.Failed, what="the stream's end")
        self.assertEqual(rc.failure_code, FAILURE_STREAM_LOST)
        self.assertIn("not an event", failure_message(rc))
        again = self.agent.next_stream()  # the manager connects and registers again by itself
        self.assertEqual(again.registration["sessionId"], "127.0.0.1:17000")
        self.stream = again
        wait_for(lambda: self.mgr.rooms.connects == 2, what="the new stream")
        rc2, ref2 = self.open(2)
        again.send(room_event(2, ref2, "Bootstrapped"))
        wait_for(lambda: rc2.poll() == TransferPoll.Bootstrapped, what="a room on the new stream")

    def test_another_engine_took_the_rank(self) -> None:
        rc, _ = self.open(1)
        self.stream.send({"ev": "closed", "code": "EngineReregistered",
                          "message": "the engine of rank 0 registered again with other values"})
        self.stream.close()
        wait_for(lambda: rc.poll() == TransferPoll.Failed, what="the stream's end")
        self.assertEqual(rc.failure_code, FAILURE_STREAM_LOST)
        self.assertIn("EngineReregistered", failure_message(rc))
        self.assertRaises(Exception, self.agent.next_stream, timeout=0.3)  # it does not fight for the rank
        refused = AgentKVReceiver(self.mgr, "10.0.0.1:8998", 2)
        self.assertEqual(refused.poll(), TransferPoll.Failed)
        self.assertEqual(refused.failure_code, FAILURE_AGENT_REFUSED)
        self.assertIn("another engine registered on this rank", failure_message(refused))
        self.mgr.register()  # takes it back
        self.stream = self.agent.next_stream()
        self.open(3)


class AgentThatStopsReading(StreamCase):
    read_ops = False

    def test_writes_that_block_end_the_stream(self) -> None:
        rc = AgentKVReceiver(self.mgr, "10.0.0.1:8998", 1)
        big = list(range(300000))  # a few MB of requests fill the socket's buffers
        for room in range(2, 10):
            AgentKVReceiver(self.mgr, "10.0.0.1:8998", room).prefill(big, 0)
            if self.mgr.rooms.streams_lost:
                break
        self.assertEqual(rc.poll(), TransferPoll.Failed)
        self.assertEqual(rc.failure_code, FAILURE_STREAM_LOST)
        self.assertIn("writing to it failed", failure_message(rc))


if __name__ == "__main__":
    unittest.main()
