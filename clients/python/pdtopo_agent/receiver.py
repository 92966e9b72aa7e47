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
"""AgentKVReceiver: the reference decode receiver's surface, over the agent."""

from __future__ import annotations

import logging
import time
from typing import Any, Generic, SupportsIndex, overload

from .convert import integer
from .errors import FAILURE_AGENT_REFUSED, FAILURE_OTHER_RANK, KVTransferError
from .manager import AgentKVManager
from .status import TransferPoll
from .stream import StreamConnection
from .wire import ContractWire, IndexArray, V1Wire, WireBytesLike, WireT

logger = logging.getLogger("pdtopo_agent")

_OTHER_RANK_REASON = "Failed due to an unknown reason from another rank"


_FAILED = TransferPoll.Failed
_SUCCESS = TransferPoll.Success


class AgentKVReceiver(Generic[WireT]):
    """One room on the decode side, with the reference receiver's methods
    and calling order: construct; poll() until it left Bootstrapping;
    prefill(...); poll() until Success or Failed; clear(), or
    failure_exception() after Failed.

    poll() reads the room's state from the manager's table, which the
    agent's events keep up to date: it never calls the agent. The
    constructor, prefill() and clear() write their operation on the rank's
    stream and return without waiting for an answer; a refusal arrives as
    the room's failure. Unlike the reference, constructing does not block
    on the bootstrap server: poll() says Bootstrapping until the agent has
    reached the prefill, then Bootstrapped. prefill() may also be called at
    once; the agent sends the request as soon as the room bootstraps.

    Failures never raise from the constructor, prefill() or poll(): the
    room becomes Failed and failure_exception() raises KVTransferError
    with the reason (the agent's, or why the agent could not be reached).
    Wrong arguments (not integers, a missing aux_index) raise TypeError /
    ValueError at once: they are the engine's bugs, not the room's.

    A receiver speaks its manager's wire (AgentKVReceiver[V1Wire] or
    [ContractWire]): prefill() takes that wire's arguments, and the wire
    (mgr.wire) turns them into the room's request.
    """

    # The agent reports spec candidates only for rooms whose plan lets the
    # engine use them (None otherwise), so every receiver may use them.
    supports_remote_spec_candidates = True

    def __init__(self, mgr: AgentKVManager[WireT], bootstrap_addr: str, bootstrap_room: SupportsIndex) -> None:
        self.kv_mgr: AgentKVManager[WireT] = mgr
        self._wire: WireT = mgr.wire
        self.bootstrap_addr = bootstrap_addr
        self.bootstrap_room = integer("bootstrap_room", bootstrap_room)
        self.session_id = mgr.get_session_id()
        self.conclude_state: int | None = None
        self.init_time: float | None = None
        self.decode_prefix_len = 0
        # the agent's latest event about the room (the fields of its Room)
        self._room: dict[str, Any] = {"status": "Bootstrapping", "bootstrapToken": -1, "specCandidateIds": None}
        # (code, message) of a failure the agent did not report
        self._failure: tuple[str, str] | None = None
        self._ref = 0  # the stream's number for this opening of the room
        self._conn: StreamConnection | None = None  # the stream the room was opened on
        self._table = mgr.rooms.status
        mgr.rooms.open(self)

    def _fail(self, code: str, message: str, quiet: bool = False) -> None:
        """Record a failure the agent did not report (it refused a call, or
        could not be reached). A room not in the table concludes at once."""
        if self._failure is None:
            self._failure = (code, message)
            if not quiet:
                logger.warning("room %s failed in the adapter: %s", self.bootstrap_room, message)
        if self.kv_mgr.rooms.rooms.get(self.bootstrap_room) is not self and self.conclude_state is None:
            self.conclude_state = _FAILED

    # One overload per wire, chosen by the receiver's type (its manager's
    # wire); at run time the wire object takes the arguments as they came.

    @overload
    def prefill(
        self: AgentKVReceiver[V1Wire],
        kv_indices: IndexArray,
        aux_index: SupportsIndex,
        decode_prefix_len: SupportsIndex | None = 0,
        mla_l1_5_args: None = None,
        mamba_indices: IndexArray | None = None,
    ) -> None: ...

    @overload
    def prefill(self: AgentKVReceiver[ContractWire], block_manifest: WireBytesLike) -> None: ...

    def prefill(self, *args: Any, **kwargs: Any) -> None:
        """Send the room's request, as the engine's receiver of the rank's
        wire takes it.

        On the cache-contract wire:
        prefill(block_manifest), the room's CachePDBlockManifest or its
        to_wire_bytes(); the bytes go to the agent as they are, and the
        agent checks them against the decode contract before sending them
        to the prefill ranks (a manifest that does not fit fails the room,
        ManifestRefused).

        On the v1 wire: prefill(kv_indices, aux_index,
        decode_prefix_len=0, mla_l1_5_args=None, mamba_indices=None), the
        decode pages to fill, the request's aux slot, the decode prefix
        length and the state slots. Arrays may be numpy arrays or integer
        sequences."""
        self._wire.prefill(self, *args, **kwargs)

    def _requested(self) -> bool:
        """Note that prefill() was called; whether the room still takes a
        request (one that failed or finished sends nothing)."""
        self.init_time = time.time()
        return self._failure is None and self.conclude_state is None

    def poll(self) -> int:
        """The room's TransferPoll value, read from the manager's table.
        Once Success or Failed, the same answer."""
        if self.conclude_state is not None:
            return self.conclude_state
        try:
            status = self._table[self.bootstrap_room]
        except KeyError:  # cleared before it finished
            self._fail(FAILURE_AGENT_REFUSED, f"room {self.bootstrap_room} was cleared before it finished")
            return _FAILED
        if status == _SUCCESS or status == _FAILED:
            return self._conclude(status)
        return status

    def _conclude(self, status: int) -> int:
        if status == _SUCCESS:
            self.kv_mgr._store_metadata(self.bootstrap_room, self.bootstrap_token, self.spec_candidate_ids)
        self.conclude_state = status
        return status

    @property
    def bootstrap_token(self) -> int:
        """The first token the prefill generated, -1 if none (after Success)."""
        return int(self._room.get("bootstrapToken", -1))

    @property
    def spec_candidate_ids(self) -> list[int] | None:
        """The prefill's speculative candidates (after Success), or None."""
        return self._room.get("specCandidateIds")

    @property
    def failure_code(self) -> str:
        """The stable code of the room's failure ("" unless it failed)."""
        if self._failure is not None:
            return self._failure[0]
        return self._room.get("failureCode") or ""

    def clear(self) -> None:
        """Forget the room, here and in the agent. Never raises: clearing
        twice, or a room the agent no longer knows, is fine."""
        self.kv_mgr.rooms.clear(self)

    def failure_exception(self) -> None:
        """Mark the room failed, clear it, and raise KVTransferError with
        why it failed: the agent's reason when it failed on this rank, why
        the agent could not be reached, or "from another rank" when only
        another rank's room failed (the reference's ranks agree on a room)."""
        code, reason = self._failure or ("", "")
        if self._failure is None:
            if self._room.get("status") == "Failed":
                code = self._room.get("failureCode") or ""
                reason = self._room.get("failureMessage") or ""
            else:
                code, reason = FAILURE_OTHER_RANK, _OTHER_RANK_REASON
            self._failure = (code, reason)
        if self.conclude_state is None:
            self.conclude_state = TransferPoll.Failed
        self.clear()
        raise KVTransferError(self.bootstrap_room, reason, self.bootstrap_addr, code)
