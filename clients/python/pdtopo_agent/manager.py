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

import os
import threading
import urllib.parse
from typing import TYPE_CHECKING, Any, Generic, SupportsIndex, cast, overload

from .convert import integer
from .errors import AgentRefusedError
from .roomtable import RoomTable
from .transport import DEFAULT_TIMEOUT, AgentConnection
from .wire import ContractWire, IndexArray, V1Wire, WireBytesLike, WireT

if TYPE_CHECKING:
    from .receiver import AgentKVReceiver

SOCKET_DIR_ENV = "PDTOPO_AGENT_SOCKET_DIR"
"""Set in decode pods to the directory of the agent's sockets."""

DEFAULT_SOCKET_DIR = "/run/pdtopo"

MAX_WAIT_SECONDS = 60.0
"""The agent's bound on one long poll (GET /v1/rooms/{room}?wait=...)."""

MAX_TP_SIZE = 16384
"""The largest tensor parallel size the agent accepts (the planner's bound)."""


def socket_path_for_rank(engine_rank: int, socket_dir: str | None = None) -> str:
    """Engine rank R's socket: <socket_dir>/rank-<R>.sock, socket_dir
    defaulting to $PDTOPO_AGENT_SOCKET_DIR, then /run/pdtopo."""
    if isinstance(engine_rank, bool) or not isinstance(engine_rank, int) or engine_rank < 0:
        raise ValueError(f"engine_rank must be a non-negative int, got {engine_rank!r}")
    if not socket_dir:
        socket_dir = os.environ.get(SOCKET_DIR_ENV) or DEFAULT_SOCKET_DIR
    return os.path.join(socket_dir, f"rank-{engine_rank}.sock")


def _wire(
    kv_data_ptrs: IndexArray | None,
    state_data_ptrs: IndexArray,
    kv_data_ptr: SupportsIndex | None,
    cache_layout: WireBytesLike | None,
) -> V1Wire | ContractWire:
    """The wire the constructor's arguments name, checked."""
    if kv_data_ptr is not None or cache_layout is not None:
        if kv_data_ptrs is not None or tuple(state_data_ptrs):
            raise ValueError("give either the v1 wire's buffer pointers (kv_data_ptrs, state_data_ptrs) "
                             "or the cache-contract wire's kv_data_ptr and cache_layout, not both")
        if kv_data_ptr is None or cache_layout is None:
            raise ValueError("the cache-contract wire needs both kv_data_ptr (the arena's address) "
                             "and cache_layout (the decode contract)")
        return ContractWire(kv_data_ptr, cache_layout)
    if kv_data_ptrs is None:
        raise TypeError("kv_data_ptrs is required on the v1 wire "
                        "(or kv_data_ptr= and cache_layout= on the cache-contract wire)")
    return V1Wire(kv_data_ptrs, state_data_ptrs)


class AgentKVManager(Generic[WireT]):
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

    The manager's wire is self.wire, a V1Wire or a ContractWire, and its
    type says which (AgentKVManager[V1Wire], AgentKVManager[ContractWire]):
    the receivers take it from there.

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

    # One overload per wire: the arguments name the wire, and the manager is
    # typed by it (AgentKVManager[V1Wire] or [ContractWire]), so are its
    # receivers, and a type checker holds their prefill() to that wire.

    @overload
    def __init__(
        self: AgentKVManager[V1Wire],
        socket_path: str,
        session_id: str,
        kv_data_ptrs: IndexArray,
        state_data_ptrs: IndexArray = (),
        *,
        tp_size: SupportsIndex | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        max_connections: int = 4,
    ) -> None: ...

    @overload
    def __init__(
        self: AgentKVManager[ContractWire],
        socket_path: str,
        session_id: str,
        *,
        kv_data_ptr: SupportsIndex,
        cache_layout: WireBytesLike,
        tp_size: SupportsIndex | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        max_connections: int = 4,
    ) -> None: ...

    def __init__(
        self,
        socket_path: str,
        session_id: str,
        kv_data_ptrs: IndexArray | None = None,
        state_data_ptrs: IndexArray = (),
        *,
        kv_data_ptr: SupportsIndex | None = None,
        cache_layout: WireBytesLike | None = None,
        tp_size: SupportsIndex | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        max_connections: int = 4,
    ) -> None:
        if not isinstance(session_id, str) or not session_id:
            raise ValueError(f'session_id must be the transfer engine\'s "host:port", got {session_id!r}')
        self.socket_path = socket_path
        self.session_id = session_id
        # The overload the arguments match is the wire _wire returns.
        self.wire: WireT = _wire(kv_data_ptrs, state_data_ptrs, kv_data_ptr, cache_layout)  # type: ignore[assignment]
        # The wire's values, where they always were.
        self.kv_data_ptr: int | None = None
        self.cache_layout: bytes | None = None  # the contract's wire bytes, on the cache-contract wire
        self.kv_data_ptrs: tuple[int, ...] = ()
        self.state_data_ptrs: tuple[int, ...] = ()
        if isinstance(self.wire, ContractWire):
            self.kv_data_ptr, self.cache_layout = self.wire.kv_data_ptr, self.wire.cache_layout
        else:
            self.kv_data_ptrs, self.state_data_ptrs = self.wire.kv_data_ptrs, self.wire.state_data_ptrs
        # The engine's tensor parallel size, said at registration: the agent
        # refuses one that is not its pod's admitted decode layout's (409
        # DecodeLayoutMismatch, a pod of the old template mid-rollout).
        self.tp_size: int | None = None if tp_size is None else integer("tp_size", tp_size)
        if self.tp_size is not None and not 1 <= self.tp_size <= MAX_TP_SIZE:
            raise ValueError(f"tp_size must be between 1 and {MAX_TP_SIZE}, got {self.tp_size}")
        self.connection = AgentConnection(socket_path, timeout=timeout, max_idle=max_connections)
        self._metadata_lock = threading.Lock()
        self.bootstrap_token_table: dict[int, int] = {}
        self.spec_candidate_ids_table: dict[int, list[int]] = {}
        self.rooms = RoomTable(self.connection.address, self.connection.endpoint, self._registration(),
                               self.connection.timeout)
        self.rooms.connect()
        self.rooms.start()

    def _registration(self) -> dict[str, Any] | bytes:
        reg = self.wire.registration(self.session_id)
        if self.tp_size is None:
            return reg
        if isinstance(reg, dict):
            return {**reg, "tpSize": self.tp_size}
        return reg[:-1] + b',"tpSize":%d}' % self.tp_size  # the contract wire's body, one JSON object

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
        return isinstance(self.wire, ContractWire)

    @overload
    @classmethod
    def for_rank(
        cls,
        engine_rank: int,
        session_id: str,
        kv_data_ptrs: IndexArray,
        state_data_ptrs: IndexArray = (),
        *,
        socket_dir: str | None = None,
        tp_size: SupportsIndex | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        max_connections: int = 4,
    ) -> AgentKVManager[V1Wire]: ...

    @overload
    @classmethod
    def for_rank(
        cls,
        engine_rank: int,
        session_id: str,
        *,
        socket_dir: str | None = None,
        kv_data_ptr: SupportsIndex,
        cache_layout: WireBytesLike,
        tp_size: SupportsIndex | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        max_connections: int = 4,
    ) -> AgentKVManager[ContractWire]: ...

    @classmethod
    def for_rank(
        cls,
        engine_rank: int,
        session_id: str,
        kv_data_ptrs: IndexArray | None = None,
        state_data_ptrs: IndexArray = (),
        *,
        socket_dir: str | None = None,
        kv_data_ptr: SupportsIndex | None = None,
        cache_layout: WireBytesLike | None = None,
        tp_size: SupportsIndex | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        max_connections: int = 4,
    ) -> AgentKVManager[Any]:
        """The manager of engine_rank, on its socket in socket_dir (see
        socket_path_for_rank); kv_data_ptr= and cache_layout= (keywords)
        register it for the cache-contract wire."""
        return cls(  # type: ignore[call-overload, no-any-return]  # the arguments are checked at run time
            socket_path_for_rank(engine_rank, socket_dir), session_id, kv_data_ptrs, state_data_ptrs,
            kv_data_ptr=kv_data_ptr, cache_layout=cache_layout, tp_size=tp_size, timeout=timeout,
            max_connections=max_connections)

    def get_session_id(self) -> str:
        return self.session_id

    def close(self) -> None:
        """Close the stream (the agent forgets the rank's rooms) and the
        kept connections."""
        self.rooms.close()
        self.connection.close()

    def __enter__(self) -> AgentKVManager[WireT]:
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

    def _open(self, receiver: AgentKVReceiver[WireT]) -> None:
        self.rooms.open(receiver)

    # The agent's room calls one by one over HTTP, for engines and tools
    # that want them directly (rooms opened here are not the stream's).
    # Each returns the room's JSON answer (a dict) or raises an AgentError.

    def _call(self, method: str, path: str, body: dict[str, Any] | bytes | None = None, *,
              timeout: float | None = None) -> dict[str, Any]:
        # The agent answers these calls with a JSON object (docs/receiver-agent.md).
        return cast("dict[str, Any]", self.connection.call(method, path, body, timeout=timeout))

    def open_room(self, bootstrap_addr: str, bootstrap_room: int) -> dict[str, Any]:
        """Open a room. An agent that restarted since the registration
        (EngineNotRegistered) gets the registration again, then the room."""
        body = {"bootstrapAddr": bootstrap_addr, "room": bootstrap_room}
        try:
            return self._call("POST", "/v1/rooms", body)
        except AgentRefusedError as exc:
            if exc.code != "EngineNotRegistered":
                raise
        self.register()
        return self._call("POST", "/v1/rooms", body)

    def request_room(self, bootstrap_room: int, body: dict[str, Any] | bytes) -> dict[str, Any]:
        """Send a room's request: a v1 body (dict), or encoded bytes, e.g.
        b'{"kind":"contract","manifest":' + manifest + b'}'."""
        return self._call("POST", f"/v1/rooms/{bootstrap_room}/request", body)

    def get_room(self, bootstrap_room: int) -> dict[str, Any]:
        return self._call("GET", f"/v1/rooms/{bootstrap_room}")

    def wait_room(self, bootstrap_room: int, seconds: float) -> dict[str, Any]:
        """The room once it finished, or after seconds at the latest (a long
        poll: no busy polling)."""
        if not 0 < seconds <= MAX_WAIT_SECONDS:
            raise ValueError(f"seconds must be in (0, {MAX_WAIT_SECONDS:g}], got {seconds!r}")
        wait = urllib.parse.quote(f"{int(seconds * 1000)}ms")
        return self._call(
            "GET", f"/v1/rooms/{bootstrap_room}?wait={wait}", timeout=self.connection.timeout + seconds
        )

    def clear_room(self, bootstrap_room: int) -> None:
        self.connection.call("DELETE", f"/v1/rooms/{bootstrap_room}")

    def healthz(self) -> dict[str, Any]:
        return self._call("GET", "/healthz")

    def readyz(self) -> dict[str, Any]:
        return self._call("GET", "/readyz")
