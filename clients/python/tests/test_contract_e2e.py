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
"""The adapter on the cache-contract wire against the real agent and the
contract-era prefill peer, with contracts and manifests tokenspeed's own
code built (pkg/kvwire/testdata/contract), in the calling order of
the decode executor of tokenspeed's cache-contract reference commit
(conformance/tokenspeed/reference.env)."""

from __future__ import annotations

import tempfile
import time
import unittest
from pathlib import Path

from pdtopo_agent import AgentKVManager, AgentKVReceiver, AgentRefusedError, ContractWire, KVTransferError, TransferPoll

from . import procs
from .test_agent_e2e import left_bootstrapping, poll_until

ARENA = 0x7F3A00000000
TOKEN = 4242


class WireBytes:
    """What tokenspeed holds: an object with to_wire_bytes()."""

    def __init__(self, raw: bytes) -> None:
        self.raw = raw

    def to_wire_bytes(self) -> bytes:
        return self.raw


class ContractPair:
    """A pair's prefill peer and the agent of its decode ranks (DP group 0)."""

    def __init__(self, test: unittest.TestCase, name: str) -> None:
        tmp = tempfile.TemporaryDirectory(prefix="pdtopo-contract-")
        test.addCleanup(tmp.cleanup)
        self.dir = Path(tmp.name)
        self.vectors = procs.contract_pair(name)
        plans, contract = procs.contract_files(self.vectors, self.dir)
        self.peer = procs.contract_peer(self.vectors, contract, self.dir, "--token", str(TOKEN))
        test.addCleanup(self.peer.stop)
        self.ranks = self.vectors["decode"]["tp_size"]
        self.agent = procs.Agent(plans, self.dir, 0, self.ranks)
        test.addCleanup(self.agent.stop)
        self.decode_contract = self.vectors["decode"]["contract"].encode()

    def manager(self, test: unittest.TestCase, rank: int,
                contract: bytes | None = None) -> AgentKVManager[ContractWire]:
        mgr = AgentKVManager.for_rank(rank, f"127.0.0.1:{17000 + rank}", kv_data_ptr=ARENA + (rank << 32),
                                      cache_layout=WireBytes(contract or self.decode_contract),
                                      socket_dir=str(self.dir))
        test.addCleanup(mgr.close)
        return mgr

    def manifest(self, name: str) -> bytes:
        wire: str = next(m["wire"] for m in self.vectors["manifest_refusals"] if m["name"] == name)
        return wire.encode()


class ContractRooms(unittest.TestCase):
    def test_rooms_complete_for_every_decode_rank(self) -> None:
        for name in ("gqa-replicas-p8-d2", "gqa-dp2-p4-d2", "hybrid-qwen35-p4-d2", "mla-p2-d4"):
            with self.subTest(pair=name):
                self.rooms_complete(name)

    def rooms_complete(self, name: str) -> None:
        p = ContractPair(self, name)
        managers = [p.manager(self, r) for r in range(p.ranks)]
        dp = p.vectors["prefill"].get("dp_size") or 1
        manifests = [m["wire"].encode() for m in p.vectors["manifests"]]
        for k, manifest in enumerate(manifests):
            for group in range(dp):  # room % dp picks the prefill DP group
                room = 1000 + k * dp + group
                receivers = [AgentKVReceiver(mgr, p.peer.bootstrap_addr, room) for mgr in managers]
                for rc in receivers:  # the executor waits for Bootstrapped, then prefills
                    self.assertEqual(poll_until(self, rc, left_bootstrapping), TransferPoll.Bootstrapped)
                for rc in receivers:
                    rc.prefill(block_manifest=WireBytes(manifest))
                for rank, (mgr, rc) in enumerate(zip(managers, receivers)):
                    status = poll_until(self, rc, lambda s: s in (TransferPoll.Success, TransferPoll.Failed))
                    self.assertEqual(status, TransferPoll.Success,
                                     f"decode rank {rank}, room {room}: {rc.failure_code}")
                    self.assertEqual(rc.bootstrap_token, TOKEN)
                    self.assertEqual(mgr.pop_prefill_metadata(room)[0], TOKEN)
                    rc.clear()
        time.sleep(0.5)  # idle ranks answer nothing: give their last messages time to land before the peer stops
        counts = p.peer.counts()
        rooms = len(manifests)  # per DP group
        for engine_rank, c in counts.items():
            tp = engine_rank % p.vectors["prefill"]["tp_size"]
            met = [d for d, r in enumerate(p.vectors["ranks"]) if tp in r["targets"] or tp in r["dummies"]]
            dummies = [d for d, r in enumerate(p.vectors["ranks"]) if tp in r["dummies"]]
            self.assertEqual((c["registrations"], c["requests"], c["dummies"], c["errors"]),
                             (len(met), len(met) * rooms, len(dummies) * rooms, 0),
                             f"prefill engine rank {engine_rank}: {c}")

    def test_a_manifest_outside_the_arena_is_refused_and_never_sent(self) -> None:
        p = ContractPair(self, "gqa-replicas-p8-d2")
        mgr = p.manager(self, 0)
        rc = AgentKVReceiver(mgr, p.peer.bootstrap_addr, 7)
        rc.prefill(p.manifest("block id = page_count"))  # at once: the agent holds it until the room bootstraps
        self.assertEqual(poll_until(self, rc, lambda s: s == TransferPoll.Failed), TransferPoll.Failed)
        with self.assertRaises(KVTransferError) as ctx:
            rc.failure_exception()
        self.assertEqual(ctx.exception.failure_code, "ManifestRefused")
        for part in ("ManifestBlockOutsideArena", "block id 64", "[1, 64)"):
            self.assertIn(part, ctx.exception.failure_reason)
        ok = AgentKVReceiver(mgr, p.peer.bootstrap_addr, 8)
        ok.prefill(p.manifest("block id = page_count - 1"))  # the engine takes the last page
        self.assertEqual(poll_until(self, ok, lambda s: s in (TransferPoll.Success, TransferPoll.Failed)),
                         TransferPoll.Success)
        time.sleep(0.5)  # as above: the dummies' messages
        counts = p.peer.counts()
        self.assertEqual(sum(c["requests"] for c in counts.values()), 7,
                         f"only room 8's pre-allocations (1 source, 6 dummies): {counts}")

    def test_another_decode_contract_is_refused(self) -> None:
        p = ContractPair(self, "gqa-p4-d2")
        other = procs.contract_pair("gqa-p2-d4")["decode"]["contract"].encode()
        with self.assertRaises(AgentRefusedError) as ctx:
            p.manager(self, 0, contract=other)
        self.assertEqual(ctx.exception.code, "ContractMismatch")
        self.assertIn("decodeContractSHA256", ctx.exception.message)

    def test_engine_tp_on_the_contract_wire(self) -> None:
        # tpSize travels in the contract wire's registration too: the plan
        # is for decode TP 2, so TP 4 is refused naming both, TP 2 registers.
        p = ContractPair(self, "gqa-p4-d2")
        with self.assertRaises(AgentRefusedError) as ctx:
            AgentKVManager.for_rank(0, "127.0.0.1:17000", kv_data_ptr=ARENA, cache_layout=WireBytes(p.decode_contract),
                                    socket_dir=str(p.dir), tp_size=4)
        self.assertEqual((ctx.exception.http_status, ctx.exception.code), (409, "DecodeLayoutMismatch"))
        self.assertIn("tensor parallel size 4", ctx.exception.message)
        self.assertIn("tensor parallel size 2", ctx.exception.message)
        mgr = AgentKVManager.for_rank(0, "127.0.0.1:17000", kv_data_ptr=ARENA,
                                      cache_layout=WireBytes(p.decode_contract), socket_dir=str(p.dir), tp_size=2)
        mgr.close()


if __name__ == "__main__":
    unittest.main()
