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
"""The adapter on the cache-contract wire, against a scripted agent: what it
writes (the contract and the manifests byte for byte), and what it refuses
before writing anything."""

from __future__ import annotations

import json
import os
import tempfile
import unittest
from typing import Any

from pdtopo_agent import (
    FAILURE_MANIFEST_REFUSED,
    AgentKVManager,
    AgentKVReceiver,
    ContractWire,
    KVTransferError,
    TransferPoll,
)
from pdtopo_agent.wire import WireBytesLike

from .fakeagent import FakeAgent, FakeStream, wait_for
from .test_stream import room_event

# Spaces and key order the adapter must keep: the bytes are the engine's.
CONTRACT = b'{"plan": {"prefix_granularity": 16, "groups": []}, "group_specs": [], "transfer_schema": {"fields": []}}'
MANIFEST = b'{"groups":[{"group_id":"full_attention","block_ids":[24,31,38]}],"prefix_len":16,"prompt_len":64}'
ARENA = 0x7F3A00000000
REQUEST = b'{"op":"request","room":%d,"ref":%d,"request":{"kind":"contract","manifest":%s}}'
"""A room's request line on the stream: room, ref, manifest."""


class WireBytes:
    """What tokenspeed holds: an object with to_wire_bytes()."""

    def __init__(self, raw: bytes) -> None:
        self.raw = raw

    def to_wire_bytes(self) -> bytes:
        return self.raw


class ContractStream(unittest.TestCase):
    def setUp(self) -> None:
        self._tmp = tempfile.TemporaryDirectory(prefix="pdtopo-cstream-")
        self.addCleanup(self._tmp.cleanup)
        self.path = os.path.join(self._tmp.name, "rank-0.sock")
        self.agent = FakeAgent(self.path)
        self.addCleanup(self.agent.close)

    def manager(self, cache_layout: WireBytesLike = CONTRACT) -> AgentKVManager[ContractWire]:
        mgr = AgentKVManager(self.path, "127.0.0.1:17000", kv_data_ptr=ARENA, cache_layout=cache_layout, timeout=2)
        self.addCleanup(mgr.close)
        return mgr

    def open(self, mgr: AgentKVManager[ContractWire], stream: FakeStream,
             room: int) -> tuple[AgentKVReceiver[ContractWire], int]:
        rc = AgentKVReceiver(mgr, "10.0.0.1:8998", room)
        op = stream.next_op()
        stream.raw_ops.get(timeout=1)
        self.assertEqual((op["op"], op["room"]), ("open", room))
        return rc, op["ref"]

    def test_the_registration_carries_the_contract_as_it_is(self) -> None:
        layouts: tuple[WireBytesLike, ...] = (CONTRACT, bytearray(CONTRACT), WireBytes(CONTRACT))
        for layout in layouts:
            mgr = self.manager(cache_layout=layout)
            stream = self.agent.next_stream()
            self.assertEqual(stream.raw_registration,
                             b'{"kind":"contract","sessionId":"127.0.0.1:17000","kvDataPtr":%d,"cacheLayout":%s}'
                             % (ARENA, CONTRACT))
            self.assertTrue(mgr.contract_wire)
            self.assertIsInstance(mgr.wire, ContractWire)
            mgr.close()
            stream.close()

    def test_prefill_sends_the_manifest_as_it_is(self) -> None:
        mgr = self.manager()
        stream = self.agent.next_stream()
        manifests: tuple[tuple[int, WireBytesLike], ...] = (
            (1, MANIFEST), (2, WireBytes(MANIFEST)), (3, memoryview(MANIFEST)))
        for room, manifest in manifests:
            rc, ref = self.open(mgr, stream, room)
            if room == 1:
                rc.prefill(manifest)
            else:
                rc.prefill(block_manifest=manifest)  # as tokenspeed's decode executor calls it
            raw = stream.raw_ops.get(timeout=5)
            stream.next_op()
            self.assertEqual(raw, REQUEST % (room, ref, MANIFEST))
            stream.send(room_event(room, ref, "Success", bootstrapToken=100 + room))
            wait_for(lambda: rc.poll() == TransferPoll.Success, what="the Success event")
            self.assertEqual(rc.bootstrap_token, 100 + room)
            self.assertEqual(mgr.pop_prefill_metadata(room), (100 + room, None))

    def test_a_manifest_with_line_breaks(self) -> None:
        mgr = self.manager()
        stream = self.agent.next_stream()
        rc, ref = self.open(mgr, stream, 1)
        rc.prefill(json.dumps(json.loads(MANIFEST), indent=2).encode())  # compacted: one line
        self.assertEqual(stream.raw_ops.get(timeout=5), REQUEST % (1, ref, MANIFEST))
        stream.next_op()
        rc2, _ = self.open(mgr, stream, 2)
        rc2.prefill(b'{"groups":\n[')  # not JSON: the room fails here, nothing is written
        self.assertEqual(rc2.poll(), TransferPoll.Failed)
        self.assertRaises(Exception, stream.raw_ops.get, timeout=0.3)
        with self.assertRaises(KVTransferError) as ctx:
            rc2.failure_exception()
        self.assertEqual(ctx.exception.failure_code, FAILURE_MANIFEST_REFUSED)
        self.assertIn("not JSON", ctx.exception.failure_reason)

    def test_wrong_arguments_raise_at_once(self) -> None:
        mgr = self.manager()
        self.agent.next_stream()
        rc = AgentKVReceiver(mgr, "10.0.0.1:8998", 1)
        self.assertRaises(ValueError, rc.prefill)
        self.assertRaises(TypeError, rc.prefill, [1, 2, 3])
        self.assertRaises(TypeError, rc.prefill, WireBytes("a str"))  # type: ignore[arg-type]  # wrong on purpose
        wrong: tuple[tuple[dict[str, Any], type[Exception]], ...] = (
            ({"kv_data_ptr": ARENA}, ValueError),
            ({"cache_layout": CONTRACT}, ValueError),
            ({"kv_data_ptr": 0, "cache_layout": CONTRACT}, ValueError),
            ({"kv_data_ptr": ARENA, "cache_layout": "a str"}, TypeError),
            ({"kv_data_ptr": "0x1", "cache_layout": CONTRACT}, TypeError),
        )
        for kwargs, exc in wrong:
            with self.subTest(kwargs=kwargs):
                self.assertRaises(exc, AgentKVManager, self.path, "127.0.0.1:17000", **kwargs)
        self.assertRaises(ValueError, AgentKVManager, self.path, "127.0.0.1:17000", [1], kv_data_ptr=ARENA,
                          cache_layout=CONTRACT)
        self.assertRaises(TypeError, AgentKVManager, self.path, "127.0.0.1:17000")

    def test_for_rank(self) -> None:
        mgr = AgentKVManager.for_rank(0, "127.0.0.1:17000", kv_data_ptr=ARENA, cache_layout=WireBytes(CONTRACT),
                                      socket_dir=self._tmp.name, timeout=2)
        self.addCleanup(mgr.close)
        self.assertEqual(self.agent.next_stream().registration["cacheLayout"], json.loads(CONTRACT))


if __name__ == "__main__":
    unittest.main()
