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
from typing import Any

from .convert import index_list, integer
from .errors import (
    FAILURE_AGENT_REFUSED,
    FAILURE_AGENT_UNAVAILABLE,
    FAILURE_OTHER_RANK,
    FAILURE_UNKNOWN_STATUS,
    AgentError,
    AgentRefusedError,
    AgentUnavailableError,
    KVTransferError,
)
from .manager import AgentKVManager
from .status import TransferPoll

logger = logging.getLogger("pdtopo_agent")

_OTHER_RANK_REASON = "Failed due to an unknown reason from another rank"


class AgentKVReceiver:
    """One room on the decode side, with the reference receiver's methods
    and calling order: construct; poll() until it left Bootstrapping;
    prefill(...); poll() until Success or Failed; clear(), or
    failure_exception() after Failed.

    Unlike the reference, constructing does not block on the bootstrap
    server: poll() says Bootstrapping until the agent has reached the
    prefill, then Bootstrapped. prefill() may also be called at once; the
    agent sends the request as soon as the room bootstraps.

    Failures never raise from the constructor, prefill() or poll(): the
    room becomes Failed and failure_exception() raises KVTransferError
    with the reason (the agent's, or why the agent could not be reached).
    Wrong arguments (not integers, a missing aux_index) raise TypeError /
    ValueError at once: they are the engine's bugs, not the room's.
    """

    # The agent reports spec candidates only for rooms whose plan lets the
    # engine use them (None otherwise), so every receiver may use them.
    supports_remote_spec_candidates = True

    def __init__(self, mgr: AgentKVManager, bootstrap_addr: str, bootstrap_room: int):
        self.kv_mgr = mgr
        self.bootstrap_addr = bootstrap_addr
        self.bootstrap_room = integer("bootstrap_room", bootstrap_room)
        self.session_id = mgr.get_session_id()
        self.conclude_state: int | None = None
        self.init_time: float | None = None
        self.decode_prefix_len = 0
        self._room: dict = {"status": "Bootstrapping", "bootstrapToken": -1, "specCandidateIds": None}
        # (code, message) of a failure the agent did not report
        self._failure: tuple[str, str] | None = None
        self._record(lambda: mgr.open_room(bootstrap_addr, self.bootstrap_room))

    def _record(self, call) -> None:
        """Run an agent call; keep the room it answers, or fail the room."""
        try:
            room = call()
        except AgentUnavailableError as exc:
            self._fail(FAILURE_AGENT_UNAVAILABLE, str(exc))
        except AgentRefusedError as exc:
            self._fail(FAILURE_AGENT_REFUSED, str(exc))
        else:
            if isinstance(room, dict):
                self._room = room
            else:
                self._fail(FAILURE_UNKNOWN_STATUS, f"the agent answered room {self.bootstrap_room} with {room!r}")

    def _fail(self, code: str, message: str) -> None:
        if self._failure is None:
            self._failure = (code, message)
            logger.warning("room %s failed in the adapter: %s", self.bootstrap_room, message)

    def prefill(
        self,
        kv_indices: Any,
        aux_index: int | None = None,
        decode_prefix_len: int | None = 0,
        mla_l1_5_args: Any = None,
        mamba_indices: Any = None,
    ) -> None:
        """Send the room's request: the decode pages to fill (kv_indices),
        the request's aux slot, the decode prefix length and the state slots
        (mamba_indices). Arrays may be numpy arrays or integer sequences."""
        if mla_l1_5_args is not None:
            raise ValueError(
                "mla_l1_5_args: the pdtopo agent does not carry MLA L1.5 page masks "
                "(the reference decode executor passes None)"
            )
        if aux_index is None:
            raise ValueError("aux_index is required: it is the request's slot the prefill writes the aux data to")
        body = {
            "kvIndices": index_list("kv_indices", kv_indices),
            "auxIndex": integer("aux_index", aux_index),
            "decodePrefixLen": 0 if decode_prefix_len is None else integer("decode_prefix_len", decode_prefix_len),
        }
        if mamba_indices is not None:
            body["mambaIndices"] = index_list("mamba_indices", mamba_indices)
        self.decode_prefix_len = body["decodePrefixLen"]
        self.init_time = time.time()
        if self._failure is not None:
            return
        try:
            room = self.kv_mgr.request_room(self.bootstrap_room, body)
        except AgentRefusedError as exc:
            if exc.code != "RoomFinished":  # a finished room's own status says how it ended
                self._fail(FAILURE_AGENT_REFUSED, str(exc))
        except AgentUnavailableError as exc:
            self._fail(FAILURE_AGENT_UNAVAILABLE, str(exc))
        else:
            if isinstance(room, dict):
                self._room = room

    def poll(self) -> int:
        """The room's TransferPoll value. Once Success or Failed, the same
        answer without asking the agent again."""
        if self.conclude_state is not None:
            return self.conclude_state
        if self._failure is None:
            self._record(lambda: self.kv_mgr.get_room(self.bootstrap_room))
        status = self._status()
        if status == TransferPoll.Success:
            self.kv_mgr._store_metadata(self.bootstrap_room, self.bootstrap_token, self.spec_candidate_ids)
        if TransferPoll.finished(status):
            self.conclude_state = status
        return status

    def _status(self) -> int:
        if self._failure is not None:
            return TransferPoll.Failed
        try:
            return TransferPoll.from_name(self._room["status"])
        except (KeyError, TypeError):
            self._fail(FAILURE_UNKNOWN_STATUS, f"the agent answered room {self.bootstrap_room} with {self._room!r}")
            return TransferPoll.Failed

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
        """Forget the room in the agent. Never raises: clearing twice, or a
        room the agent no longer knows, is fine."""
        try:
            self.kv_mgr.clear_room(self.bootstrap_room)
        except AgentRefusedError as exc:
            if exc.code != "RoomNotFound":
                logger.warning("clearing room %s: %s", self.bootstrap_room, exc)
        except AgentError as exc:
            logger.warning("clearing room %s: %s", self.bootstrap_room, exc)

    def failure_exception(self) -> None:
        """Mark the room failed, clear it, and raise KVTransferError with
        why it failed: the agent's reason when it failed on this rank, why
        the agent could not be reached, or "from another rank" when only
        another rank's room failed (the reference's ranks agree on a room)."""
        code, reason = self._failure or ("", "")
        if self._failure is None and self._room.get("status") != "Failed":
            try:  # the engine learnt of the failure elsewhere; the agent may know more
                self._room = self.kv_mgr.get_room(self.bootstrap_room)
            except AgentError:
                pass
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
