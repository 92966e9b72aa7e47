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
"""AgentKVManager: one decode engine rank registered with its agent."""

from __future__ import annotations

import json
import os
import threading
import urllib.parse
from typing import TYPE_CHECKING, Any, Iterable

from .convert import index_list, integer, wire_bytes
from .errors import AgentRefusedError
from .roomtable import RoomTable
from .transport import DEFAULT_TIMEOUT, AgentConnection

if TYPE_CHECKING:
    from .receiver import AgentKVReceiver

SOCKET_DIR_ENV = "PDTOPO_AGENT_SOCKET_DIR"
"""Set in decode pods to the directory of the agent's sockets."""

DEFAULT_SOCKET_DIR = "/run/pdtopo"

MAX_WAIT_SECONDS = 60.0
"""The agent's bound on one long poll (GET /v1/rooms/{room}?wait=...)."""


def socket_path_for_rank(engine_rank: int, socket_dir: str | None = None) -> str:
    """Engine rank R's socket: <socket_dir>/rank-<R>.sock, socket_dir
    defaulting to $PDTOPO_AGENT_SOCKET_DIR, then /run/pdtopo."""
    if isinstance(engine_rank, bool) or not isinstance(engine_rank, int) or engine_rank < 0:
        raise ValueError(f"engine_rank must be a non-negative int, got {engine_rank!r}")
    if not socket_dir:
        socket_dir = os.environ.get(SOCKET_DIR_ENV) or DEFAULT_SOCKET_DIR
    return os.path.join(socket_dir, f"rank-{engine_rank}.sock")


class AgentKVManager:
    """Registers an engine rank's transfer session and KV/state buffers with
    the pdtopo agent on socket_path and keeps the rank's rooms for its
    receivers.

    Two wires, as the engine runs: tokenspeed's v1 wire takes
    the buffer pointers, kv_data_ptrs and state_data_ptrs; its
    cache-contract wire takes, by keyword, the arena's address
    kv_data_ptr and the decode contract cache_layout, which is bytes or any
    object with to_wire_bytes() (the engine's CacheTransferContract): its
    bytes are sent to the agent, and by it to the prefill ranks, as they
    are. The receivers' prefill() then takes the room's block manifest.

    It stands where the reference decode engine's KV manager stands for its
    receivers: session id, the table of room states the receivers' poll()
    reads, and the bootstrap token / spec candidates of finished rooms
    (pop_prefill_metadata). It plans no routes, calls no bootstrap server
    and opens no ZMQ socket: the agent does all of that.

    The registration opens the rank's event stream (POST /v1/engine/stream):
    receivers open, request and clear rooms on it without waiting for an
    answer, and one background thread applies the agent's events to the
    table. When the stream ends (the agent restarted), the rooms that had
    not finished fail (AgentStreamLost) and the thread connects and
    registers again by itself.

    Raises AgentUnavailableError when no agent answers on socket_path, and
    AgentRefusedError when the agent refuses the registration (e.g. a buffer
    count that differs from the plan's, code InvalidArgument).
    """

    def __init__(
        self,
        socket_path: str,
        session_id: str,
        kv_data_ptrs: Iterable[int] | None = None,
        state_data_ptrs: Iterable[int] = (),
        *,
        kv_data_ptr: int | None = None,
        cache_layout: Any = None,
        timeout: float = DEFAULT_TIMEOUT,
        max_connections: int = 4,
    ):
        if not isinstance(session_id, str) or not session_id:
            raise ValueError(f'session_id must be the transfer engine\'s "host:port", got {session_id!r}')
        self.socket_path = socket_path
        self.session_id = session_id
        self.kv_data_ptr: int | None = None
        self.cache_layout: bytes | None = None  # the contract's wire bytes, on the cache-contract wire
        if kv_data_ptr is not None or cache_layout is not None:
            if kv_data_ptrs is not None or tuple(state_data_ptrs):
                raise ValueError("give either the v1 wire's buffer pointers (kv_data_ptrs, state_data_ptrs) "
                                 "or the cache-contract wire's kv_data_ptr and cache_layout, not both")
            if kv_data_ptr is None or cache_layout is None:
                raise ValueError("the cache-contract wire needs both kv_data_ptr (the arena's address) and cache_layout (the decode contract)")
            self.kv_data_ptr = integer("kv_data_ptr", kv_data_ptr)
            if not 0 < self.kv_data_ptr < 1 << 64:
                raise ValueError(f"kv_data_ptr must be an address in (0, 2**64), got {self.kv_data_ptr}")
            self.cache_layout = wire_bytes("cache_layout", cache_layout)
            kv_data_ptrs = ()
        elif kv_data_ptrs is None:
            raise TypeError("kv_data_ptrs is required on the v1 wire (or kv_data_ptr= and cache_layout= on the cache-contract wire)")
        self.kv_data_ptrs = tuple(index_list("kv_data_ptrs", kv_data_ptrs))
        self.state_data_ptrs = tuple(index_list("state_data_ptrs", state_data_ptrs))
        self.connection = AgentConnection(socket_path, timeout=timeout, max_idle=max_connections)
        self._metadata_lock = threading.Lock()
        self.bootstrap_token_table: dict[int, int] = {}
        self.spec_candidate_ids_table: dict[int, list[int]] = {}
        self.rooms = RoomTable(self.connection.address, self.connection.endpoint, self._registration(), self.connection.timeout)
        self.rooms.connect()
        self.rooms.start()

    def _registration(self) -> dict | bytes:
        if self.cache_layout is not None:  # the contract's bytes, written into the body as they are
            return b"".join((b'{"kind":"contract","sessionId":', json.dumps(self.session_id).encode(),
                             b',"kvDataPtr":%d,"cacheLayout":' % self.kv_data_ptr, self.cache_layout, b"}"))
        return {
            "sessionId": self.session_id,
            "kvDataPtrs": list(self.kv_data_ptrs),
            "stateDataPtrs": list(self.state_data_ptrs),
        }

    def register(self) -> None:
        """(Re-)register the rank's session and buffers: connect the stream
        if it is down (also after another engine took the rank: this takes
        it back), else PUT /v1/engine (the same values again change
        nothing)."""
        if not self.rooms.connect():
            self.connection.call("PUT", "/v1/engine", self._registration())

    @property
    def contract_wire(self) -> bool:
        """Whether the rank registered for the cache-contract wire."""
        return self.cache_layout is not None

    @classmethod
    def for_rank(
        cls,
        engine_rank: int,
        session_id: str,
        kv_data_ptrs: Iterable[int] | None = None,
        state_data_ptrs: Iterable[int] = (),
        *,
        socket_dir: str | None = None,
        **kwargs: Any,
    ) -> "AgentKVManager":
        """The manager of engine_rank, on its socket in socket_dir (see
        socket_path_for_rank); kv_data_ptr= and cache_layout= (keywords)
        register it for the cache-contract wire."""
        return cls(socket_path_for_rank(engine_rank, socket_dir), session_id, kv_data_ptrs, state_data_ptrs, **kwargs)

    def get_session_id(self) -> str:
        return self.session_id

    def close(self) -> None:
        """Close the stream (the agent forgets the rank's rooms) and the
        kept connections."""
        self.rooms.close()
        self.connection.close()

    def __enter__(self) -> "AgentKVManager":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # The reference manager's metadata of finished rooms, filled when a
    # receiver's poll sees Success and consumed by the engine once.

    def pop_bootstrap_token(self, bootstrap_room: int) -> int:
        """The room's bootstrap token (first output token), or -1."""
        with self._metadata_lock:
            return self.bootstrap_token_table.pop(bootstrap_room, -1)

    def pop_prefill_metadata(self, bootstrap_room: int) -> tuple[int, list[int] | None]:
        """(bootstrap token or -1, spec candidate ids or None) of a room
        that succeeded."""
        with self._metadata_lock:
            return (
                self.bootstrap_token_table.pop(bootstrap_room, -1),
                self.spec_candidate_ids_table.pop(bootstrap_room, None),
            )

    def _store_metadata(self, bootstrap_room: int, token: int, spec_candidate_ids: list[int] | None) -> None:
        with self._metadata_lock:
            if token != -1:
                self.bootstrap_token_table[bootstrap_room] = token
            if spec_candidate_ids is not None:
                self.spec_candidate_ids_table[bootstrap_room] = spec_candidate_ids

    # The receivers' rooms, on the stream.

    def _open(self, receiver: "AgentKVReceiver") -> None:
        self.rooms.open(receiver)

    # The agent's room calls one by one over HTTP, for engines and tools
    # that want them directly (rooms opened here are not the stream's).
    # Each returns the room's JSON answer (a dict) or raises an AgentError.

    def open_room(self, bootstrap_addr: str, bootstrap_room: int) -> dict:
        """Open a room. An agent that restarted since the registration
        (EngineNotRegistered) gets the registration again, then the room."""
        body = {"bootstrapAddr": bootstrap_addr, "room": bootstrap_room}
        try:
            return self.connection.call("POST", "/v1/rooms", body)
        except AgentRefusedError as exc:
            if exc.code != "EngineNotRegistered":
                raise
        self.register()
        return self.connection.call("POST", "/v1/rooms", body)

    def request_room(self, bootstrap_room: int, body: dict | bytes) -> dict:
        """Send a room's request: a v1 body (dict), or encoded bytes, e.g.
        b'{"kind":"contract","manifest":' + manifest + b'}'."""
        return self.connection.call("POST", f"/v1/rooms/{bootstrap_room}/request", body)

    def get_room(self, bootstrap_room: int) -> dict:
        return self.connection.call("GET", f"/v1/rooms/{bootstrap_room}")

    def wait_room(self, bootstrap_room: int, seconds: float) -> dict:
        """The room once it finished, or after seconds at the latest (a long
        poll: no busy polling)."""
        if not 0 < seconds <= MAX_WAIT_SECONDS:
            raise ValueError(f"seconds must be in (0, {MAX_WAIT_SECONDS:g}], got {seconds!r}")
        wait = urllib.parse.quote(f"{int(seconds * 1000)}ms")
        return self.connection.call(
            "GET", f"/v1/rooms/{bootstrap_room}?wait={wait}", timeout=self.connection.timeout + seconds
        )

    def clear_room(self, bootstrap_room: int) -> None:
        self.connection.call("DELETE", f"/v1/rooms/{bootstrap_room}")

    def healthz(self) -> dict:
        return self.connection.call("GET", "/healthz")

    def readyz(self) -> dict:
        return self.connection.call("GET", "/readyz")

