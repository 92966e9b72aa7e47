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
"""The two wires a decode engine speaks, one class each: what the rank
registers with the agent, and what a room's prefill() takes and sends.

tokenspeed's v1 wire is V1Wire: the rank's buffer pointers, and per
room the decode pages, aux slot, prefix length and state slots. Its
cache-contract wire is ContractWire: the arena's address
and the decode contract, and per room the block manifest. The manager
builds one where it learns its wire (its constructor's arguments) and is
typed by it (AgentKVManager[V1Wire], AgentKVManager[ContractWire]), as
are its receivers, so a type checker holds each prefill() call to its
wire's arguments and nothing tests the wire again at run time.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Iterable, Protocol, SupportsIndex, TypeVar, Union

from .convert import index_list, integer, wire_bytes

if TYPE_CHECKING:
    from .receiver import AgentKVReceiver


class SupportsWireBytes(Protocol):
    """What tokenspeed's CacheTransferContract and CachePDBlockManifest
    have: their bytes on the wire."""

    def to_wire_bytes(self) -> bytes: ...


WireBytesLike = Union[bytes, bytearray, memoryview, SupportsWireBytes]
"""A cache contract or a block manifest: its bytes, or the engine's object."""

IndexArray = Iterable[SupportsIndex]
"""Page indices, state slots or buffer pointers: a numpy integer array (the
adapter does not import numpy) or any sequence of integers."""


class V1Wire:
    """tokenspeed's v1 wire: the rank registers its KV and state buffers'
    pointers; a room's request names the decode pages to fill."""

    def __init__(self, kv_data_ptrs: IndexArray, state_data_ptrs: IndexArray = ()) -> None:
        self.kv_data_ptrs = tuple(index_list("kv_data_ptrs", kv_data_ptrs))
        self.state_data_ptrs = tuple(index_list("state_data_ptrs", state_data_ptrs))

    def registration(self, session_id: str) -> dict[str, Any]:
        return {
            "sessionId": session_id,
            "kvDataPtrs": list(self.kv_data_ptrs),
            "stateDataPtrs": list(self.state_data_ptrs),
        }

    def prefill(
        self,
        rc: AgentKVReceiver[V1Wire],
        kv_indices: IndexArray,
        aux_index: SupportsIndex | None = None,
        decode_prefix_len: SupportsIndex | None = 0,
        mla_l1_5_args: None = None,
        mamba_indices: IndexArray | None = None,
    ) -> None:
        """AgentKVReceiver.prefill on this wire. The defaults are the
        reference's; a missing aux_index is refused here, where the
        reference would have failed later."""
        if mla_l1_5_args is not None:
            raise ValueError(
                "mla_l1_5_args: the pdtopo agent does not carry MLA L1.5 page masks "
                "(the reference decode executor passes None)"
            )
        if aux_index is None:
            raise ValueError("aux_index is required: it is the request's slot the prefill writes the aux data to")
        body: dict[str, Any] = {
            "kvIndices": index_list("kv_indices", kv_indices),
            "auxIndex": integer("aux_index", aux_index),
            "decodePrefixLen": 0 if decode_prefix_len is None else integer("decode_prefix_len", decode_prefix_len),
        }
        if mamba_indices is not None:
            body["mambaIndices"] = index_list("mamba_indices", mamba_indices)
        rc.decode_prefix_len = body["decodePrefixLen"]
        if rc._requested():
            rc.kv_mgr.rooms.request(rc, body)


class ContractWire:
    """tokenspeed's cache-contract wire: the rank registers its arena and
    decode contract; a room's request is its block manifest. Both travel
    as the engine's bytes, never decoded here."""

    def __init__(self, kv_data_ptr: SupportsIndex, cache_layout: WireBytesLike) -> None:
        self.kv_data_ptr = integer("kv_data_ptr", kv_data_ptr)
        if not 0 < self.kv_data_ptr < 1 << 64:
            raise ValueError(f"kv_data_ptr must be an address in (0, 2**64), got {self.kv_data_ptr}")
        self.cache_layout = wire_bytes("cache_layout", cache_layout)

    def registration(self, session_id: str) -> bytes:
        # The contract's bytes, written into the body as they are.
        return b"".join((b'{"kind":"contract","sessionId":', json.dumps(session_id).encode(),
                         b',"kvDataPtr":%d,"cacheLayout":' % self.kv_data_ptr, self.cache_layout, b"}"))

    def prefill(self, rc: AgentKVReceiver[ContractWire], block_manifest: WireBytesLike | None = None) -> None:
        """AgentKVReceiver.prefill on this wire: the manifest's bytes go to
        the agent as they are, and it checks them against the decode
        contract (a manifest that does not fit fails the room,
        ManifestRefused)."""
        if block_manifest is None:
            raise ValueError("the cache-contract wire needs the room's block manifest: prefill(block_manifest)")
        manifest = wire_bytes("block_manifest", block_manifest)
        if rc._requested():
            rc.kv_mgr.rooms.request_manifest(rc, manifest)


WireT = TypeVar("WireT", V1Wire, ContractWire)
"""The wire a manager and its receivers speak: V1Wire or ContractWire."""
