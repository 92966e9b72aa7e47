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
"""RoomTable: a rank's rooms, kept up to date from its event stream.

`status` maps each open room to its TransferPoll value; a receiver's poll()
reads it and nothing else. Receivers open, request and clear their rooms
through the table, which writes the operation on the stream and returns:
the answer, if any, arrives as an event. One daemon thread reads the
events and applies them; when the stream ends it fails the rooms that had
not finished and connects again.
"""

from __future__ import annotations

import json
import logging
import threading
from typing import TYPE_CHECKING, Any

from .errors import (
    FAILURE_AGENT_REFUSED,
    FAILURE_AGENT_UNAVAILABLE,
    FAILURE_MANIFEST_REFUSED,
    FAILURE_STREAM_LOST,
    FAILURE_UNKNOWN_STATUS,
    AgentError,
    AgentRefusedError,
)
from .status import TransferPoll
from .stream import StreamConnection, StreamEnded

if TYPE_CHECKING:
    from .receiver import AgentKVReceiver

logger = logging.getLogger("pdtopo_agent")

# Keyed by what the agent's JSON holds, which may be anything.
_BY_NAME: dict[Any, TransferPoll] = {
    name: TransferPoll.from_name(name)
    for name in ("Failed", "Bootstrapping", "Bootstrapped", "WaitingForInput", "Transferring", "Success")
}
_FAILED = TransferPoll.Failed
_SUCCESS = TransferPoll.Success
_BOOTSTRAPPING = TransferPoll.Bootstrapping

_RECONNECT_FIRST, _RECONNECT_MOST = 0.02, 1.0
"""Seconds between attempts to connect again after the stream ended."""


class RoomTable:
    def __init__(self, address: str, endpoint: str, registration: dict[str, Any] | bytes, timeout: float):
        self.address = address
        self.endpoint = endpoint
        self.registration = registration
        self.timeout = timeout
        self.status: dict[int, int] = {}  # what poll() reads
        self.rooms: dict[int, AgentKVReceiver[Any]] = {}
        # _lock guards the tables, the connection and the writes on it;
        # _connecting serialises connection attempts (done without _lock).
        self._lock = threading.Lock()
        self._connecting = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._conn: StreamConnection | None = None
        self._next_ref = 1
        self._closed = False
        self._thread: threading.Thread | None = None
        # Counters for tests and troubleshooting.
        self.connects = 0
        self.resyncs = 0
        self.unknown_events = 0
        self.streams_lost = 0
        self.last_loss = ""
        # Set when the agent ended the stream because another engine
        # registered on the rank: this one does not take it back by itself.
        self.replaced_by = ""

    # The connection.

    def connect(self) -> bool:
        """Open the stream unless it is open; True if this call opened it.
        Raises the AgentError of a failed attempt."""
        with self._connecting:
            if self._conn is not None or self._closed:
                return False
            conn = StreamConnection.open(self.address, self.endpoint, self.registration, self.timeout)
            with self._lock:
                if self._closed:
                    conn.close()
                    return False
                self._conn = conn
                self.connects += 1
                self.replaced_by = ""
                self._changed.notify_all()
            if conn.hello.get("replaced"):
                logger.warning("the agent at %s replaced an older registration of this rank (registration %s)",
                               self.endpoint, conn.hello.get("registration"))
            if conn.pending:
                self._apply(conn, conn.pending)
                conn.pending = []
            return True

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name=f"pdtopo-agent-stream {self.endpoint}", daemon=True)
        self._thread.start()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            conn, self._conn = self._conn, None
            self._changed.notify_all()
        if conn is not None:
            conn.close()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(self.timeout + 1)

    def _run(self) -> None:
        """Read events while the stream holds; connect again when it ends."""
        wait = _RECONNECT_FIRST
        while True:
            with self._lock:
                while self._conn is None and not self._closed:
                    if self.replaced_by:  # until register() takes the rank back
                        self._changed.wait()
                    elif not self._changed.wait(wait):
                        break  # time to try again
                    # else someone else connected, or closed
                if self._closed:
                    return
                conn = self._conn
            if conn is None:
                try:
                    self.connect()
                    wait = _RECONNECT_FIRST
                except AgentError as exc:
                    wait = min(wait * 2, _RECONNECT_MOST)
                    logger.debug("connecting to the agent at %s again: %s", self.endpoint, exc)
                continue
            wait = _RECONNECT_FIRST
            try:
                while True:
                    events = conn.read_events()
                    if events:
                        self._apply(conn, events)
            except StreamEnded as exc:
                self._lost(conn, str(exc))

    # Operations, called by receivers from the engine's threads.

    def open(self, rc: AgentKVReceiver[Any]) -> None:
        room = rc.bootstrap_room
        if self.replaced_by:
            rc._fail(FAILURE_AGENT_REFUSED,
                     f"pdtopo agent at {self.endpoint}: another engine registered on this rank ({self.replaced_by}); "
                     "AgentKVManager.register() takes the rank back")
            return
        if self._conn is None and not self._closed:
            try:
                self.connect()
            except AgentError as exc:
                code = FAILURE_AGENT_REFUSED if isinstance(exc, AgentRefusedError) else FAILURE_AGENT_UNAVAILABLE
                rc._fail(code, str(exc))
                return
        with self._lock:
            conn = self._conn
            if conn is None:
                rc._fail(FAILURE_AGENT_UNAVAILABLE, f"pdtopo agent at {self.endpoint}: the stream is closed "
                         f"({self.last_loss or 'the manager was closed'})")
                return
            if room in self.rooms:
                rc._fail(FAILURE_AGENT_REFUSED, str(AgentRefusedError(
                    "POST /v1/rooms", 409, "RoomExists",
                    f"room {room} is already open; clear it before reusing its number")))
                return
            ref = self._next_ref
            self._next_ref = ref + 1
            rc._ref, rc._conn = ref, conn
            self.rooms[room] = rc
            self.status[room] = _BOOTSTRAPPING
            self._send(conn, b'{"op":"open","room":%d,"ref":%d,"bootstrapAddr":%s}\n' % (
                room, ref, json.dumps(rc.bootstrap_addr).encode()))

    def request(self, rc: AgentKVReceiver[Any], body: dict[str, Any]) -> None:
        line = b'{"op":"request","room":%d,"ref":%d,"request":%s}\n' % (
            rc.bootstrap_room, rc._ref, json.dumps(body, separators=(",", ":")).encode())
        with self._lock:
            conn = self._conn
            if conn is not None and self._owns(rc) and rc._conn is conn and self.status[rc.bootstrap_room] != _FAILED:
                self._send(conn, line)

    def request_manifest(self, rc: AgentKVReceiver[Any], manifest: bytes) -> None:
        """The room's request on the cache-contract wire: the manifest's
        bytes written into the line as they are (one copy, no decoding; the
        agent reads them). A manifest with a line break would end the line:
        it is compacted first, or, if it is not JSON, fails the room."""
        if b"\n" in manifest or b"\r" in manifest:
            try:
                manifest = json.dumps(json.loads(manifest), separators=(",", ":")).encode()
            except ValueError as exc:
                with self._lock:
                    if self._owns(rc) and self.status[rc.bootstrap_room] not in (_SUCCESS, _FAILED):
                        rc._fail(FAILURE_MANIFEST_REFUSED, f"room {rc.bootstrap_room}'s block manifest "
                                 f"({len(manifest)} bytes) is not JSON: {exc}; nothing was sent")
                        self.status[rc.bootstrap_room] = _FAILED
                return
        head = b'{"op":"request","room":%d,"ref":%d,"request":{"kind":"contract","manifest":' % (
            rc.bootstrap_room, rc._ref)
        line = b"".join((head, manifest, b"}}\n"))
        with self._lock:
            conn = self._conn
            if conn is not None and self._owns(rc) and rc._conn is conn and self.status[rc.bootstrap_room] != _FAILED:
                self._send(conn, line)

    def clear(self, rc: AgentKVReceiver[Any]) -> None:
        """Forget the room here and in the agent; a room cleared already,
        or whose stream ended, is not sent."""
        room = rc.bootstrap_room
        with self._lock:
            if not self._owns(rc):
                return
            del self.rooms[room]
            self.status.pop(room, None)
            if rc._conn is self._conn and rc._conn is not None:
                self._send(rc._conn, b'{"op":"clear","room":%d,"ref":%d}\n' % (room, rc._ref))

    def _owns(self, rc: AgentKVReceiver[Any]) -> bool:
        return self.rooms.get(rc.bootstrap_room) is rc

    def _send(self, conn: StreamConnection, line: bytes) -> None:
        """Write a line; the caller holds _lock. A write that fails ends the
        stream (a line cut in the middle cannot be taken back)."""
        try:
            conn.send(line)
        except OSError as exc:
            self._lost_locked(conn, f"writing to it failed: {type(exc).__name__}: {exc}")

    # Events, applied by the reader thread.

    def _apply(self, conn: StreamConnection, events: list[dict[str, Any]]) -> None:
        with self._lock:
            if conn is not self._conn:
                return
            rooms, status = self.rooms, self.status
            for ev in events:
                kind = ev.get("ev")
                if kind == "room":
                    room: Any = ev.get("room")  # the agent's JSON: an int when it is one of ours
                    rc = rooms.get(room)
                    if rc is None or rc._ref != ev.get("ref") or rc._conn is not conn:
                        self.unknown_events += 1
                        continue
                    new = _BY_NAME.get(ev.get("status"))
                    cur = status[room]
                    if cur == _SUCCESS or cur == _FAILED:
                        continue
                    if new is None:
                        rc._fail(FAILURE_UNKNOWN_STATUS, f"the agent reported room {room} as {ev.get('status')!r}, "
                                 "which this adapter does not know (upgrade it)")
                        status[room] = _FAILED
                    elif new == _FAILED or new > cur:
                        rc._room = ev  # before the status: a poll that sees Success finds the token
                        status[room] = new
                elif kind == "refused":
                    self._refused(conn, ev)
                elif kind == "resync":
                    self.resyncs += 1

    def _refused(self, conn: StreamConnection, ev: dict[str, Any]) -> None:
        room: Any = ev.get("room")  # the agent's JSON: an int when it is one of ours
        op, code = ev.get("op"), str(ev.get("code", ""))
        rc = self.rooms.get(room)
        if rc is None or rc._ref != ev.get("ref") or rc._conn is not conn:
            self.unknown_events += 1  # a clear's refusal too: the room is gone here already
            return
        if op == "request" and code == "RoomFinished":
            return  # the room's own status says how it ended
        if self.status[room] in (_SUCCESS, _FAILED):
            return
        call = "POST /v1/rooms" if op == "open" else f"POST /v1/rooms/{room}/request"
        status = ev.get("httpStatus")
        refusal = AgentRefusedError(call, status if type(status) is int else 0, code, str(ev.get("message", "")))
        rc._fail(FAILURE_AGENT_REFUSED, str(refusal))
        self.status[room] = _FAILED

    def _lost(self, conn: StreamConnection, why: str) -> None:
        with self._lock:
            self._lost_locked(conn, why)

    def _lost_locked(self, conn: StreamConnection, why: str) -> None:
        """The stream ended: every room it carried that had not finished
        fails, since no event about it can come any more."""
        if conn is not self._conn:
            return
        self._conn = None
        self.streams_lost += 1
        self.last_loss = why
        if conn.closed_by_agent is not None and conn.closed_by_agent[0] in ("StreamReplaced", "EngineReregistered"):
            self.replaced_by = f"{conn.closed_by_agent[0]}: {conn.closed_by_agent[1]}"
        conn.close()
        failed = 0
        for room, rc in self.rooms.items():
            st = self.status[room]
            if rc._conn is conn and st != _SUCCESS and st != _FAILED:
                rc._fail(FAILURE_STREAM_LOST, (
                    f"the event stream to the pdtopo agent at {self.endpoint} ended ({why}) while room {room} was "
                    f"{TransferPoll.name_of(st)}: its outcome is unknown (rooms do not outlive the stream)"),
                    quiet=True)
                self.status[room] = _FAILED
                failed += 1
        logger.warning("the event stream to the pdtopo agent at %s ended (%s): %d unfinished rooms failed; %s",
                       self.endpoint, why, failed,
                       "not connecting again: another engine took the rank" if self.replaced_by else "connecting again")
        self._changed.notify_all()
