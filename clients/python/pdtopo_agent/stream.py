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
"""The engine stream: one connection to a rank's agent socket, upgraded from
POST /v1/engine/stream to newline-delimited JSON (docs/receiver-agent.md).

StreamConnection.open registers the engine and returns the connection
after the agent's hello; send() writes operation lines, read_events()
returns the next batch of event objects. Standard library only.
"""

from __future__ import annotations

import json
import socket
from typing import Any

from .errors import AgentRefusedError, AgentTimeoutError, AgentUnavailableError
from .transport import _answer, _describe

PROTOCOL = "pdtopo-stream.v1"
PATH = "/v1/engine/stream"
CALL = "POST " + PATH

MAX_LINE = (32 << 20) + 4096
"""The longest line either side sends (an operation carries at most a
request body of 32 MiB)."""

_MAX_HEAD = 64 << 10
_RECV = 1 << 18


class StreamProtocolError(Exception):
    """The agent sent something that is not the stream protocol."""


class StreamEnded(Exception):
    """The stream ended: end of file, a broken connection, or a line that is
    not the protocol; str() says which."""


def connect(address: str, timeout: float) -> socket.socket:
    """A connected socket to an agent address: a unix socket path, or
    tcp:HOST:PORT (a single-rank agent on loopback)."""
    if address.startswith("tcp:"):
        host, _, port = address[len("tcp:"):].rpartition(":")
        return socket.create_connection((host.strip("[]"), int(port)), timeout=timeout)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        sock.connect(address)
    except BaseException:
        sock.close()
        raise
    return sock


class StreamConnection:
    """One open engine stream."""

    def __init__(self, sock: socket.socket, hello: dict[str, Any], rest: bytes, endpoint: str):
        self.sock = sock
        self.hello = hello
        self.endpoint = endpoint
        self._rest = rest  # bytes received after the last complete line
        self.pending: list[dict[str, Any]] = []  # events read with the hello
        self.closed_by_agent: tuple[str, str] | None = None  # the closed line's code and message

    @classmethod
    def open(cls, address: str, endpoint: str, registration: dict[str, Any] | bytes,
             timeout: float) -> StreamConnection:
        """Connect, register (a body, or its encoded bytes), and return the
        stream after its hello.

        Raises AgentUnavailableError (AgentTimeoutError) when the agent
        cannot be reached or does not answer, AgentRefusedError when it
        refuses the registration (the answer PUT /v1/engine would give).
        """
        body = registration if isinstance(registration, bytes) else encode(registration)
        request = (
            f"POST {PATH} HTTP/1.1\r\nHost: agent\r\nConnection: Upgrade\r\nUpgrade: {PROTOCOL}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
        ).encode() + body
        try:
            sock = connect(address, timeout)
        except TimeoutError as exc:
            raise AgentTimeoutError(endpoint, CALL, f"no answer within {timeout:g}s") from exc
        except OSError as exc:
            raise AgentUnavailableError(endpoint, CALL, _describe(exc)) from exc
        try:
            sock.sendall(request)
            status, rest = _read_head(sock, endpoint)
            if status != 101:
                raise _refusal(sock, status, rest, endpoint)
            conn = cls(sock, {}, rest, endpoint)
            events = conn.read_events()
            while not events:
                events = conn.read_events()
        except TimeoutError as exc:
            sock.close()
            raise AgentTimeoutError(endpoint, CALL, f"no answer within {timeout:g}s") from exc
        except (OSError, StreamEnded) as exc:
            sock.close()
            why = _describe(exc) if isinstance(exc, OSError) else str(exc)
            raise AgentUnavailableError(endpoint, CALL, why) from exc
        except BaseException:
            sock.close()
            raise
        hello = events[0]
        if hello.get("ev") != "hello":
            sock.close()
            raise AgentRefusedError(CALL, 101, "", f"the stream's first line is not a hello: {hello!r:.200}")
        conn.hello = hello
        conn.pending = events[1:]
        return conn

    def send(self, data: bytes) -> None:
        """Write operation lines; OSError when the connection broke (or the
        agent did not read within the socket's timeout)."""
        self.sock.sendall(data)

    def read_events(self) -> list[dict[str, Any]]:
        """The next events (at least one, unless the wait timed out: then
        an empty list). Raises StreamEnded at the end of the stream."""
        if self.pending:
            out, self.pending = self.pending, []
            return out
        data = self._rest
        if b"\n" not in data:
            try:
                chunk = self.sock.recv(_RECV)
            except TimeoutError:
                return []
            except OSError as exc:
                raise StreamEnded(_describe(exc)) from exc
            if not chunk:
                if self.closed_by_agent is not None:
                    code, message = self.closed_by_agent
                    raise StreamEnded(f"the agent closed it: {code}: {message}")
                raise StreamEnded("end of file: the agent restarted or stopped")
            data = data + chunk if data else chunk
        end = data.rfind(b"\n")
        if end < 0:
            if len(data) > MAX_LINE:
                raise StreamEnded(f"a line longer than {MAX_LINE} bytes is not the protocol")
            self._rest = data
            return []
        self._rest = data[end + 1:]
        lines = data[:end]
        events: list[dict[str, Any]] | None
        try:
            events = json.loads(b"[" + lines.replace(b"\n", b",") + b"]")
        except ValueError:
            events = None
        if events is None or not all(type(ev) is dict for ev in events):
            raise StreamEnded(f"the agent sent a line that is not an event: {_first_bad(lines)!r:.200}")
        for ev in events:
            if ev.get("ev") == "closed":
                self.closed_by_agent = (str(ev.get("code", "")), str(ev.get("message", "")))
        return events

    def close(self) -> None:
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()


def _first_bad(lines: bytes) -> bytes:
    for line in lines.split(b"\n"):
        try:
            if type(json.loads(line)) is dict:
                continue
        except ValueError:
            pass
        return line
    return lines[:200]


def _read_head(sock: socket.socket, endpoint: str) -> tuple[int, bytes]:
    """The answer's status and whatever followed its head."""
    buf = b""
    while b"\r\n\r\n" not in buf:
        chunk = sock.recv(_RECV)
        if not chunk:
            raise StreamEnded("the agent closed the connection before answering")
        buf += chunk
        if len(buf) > _MAX_HEAD:
            raise AgentRefusedError(CALL, 0, "", "the answer's head is not the agent's")
    head, _, rest = buf.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ", 2)
    if len(parts) < 2 or not parts[1].isdigit():
        raise AgentRefusedError(CALL, 0, "", f"the answer {lines[0]!r:.100} is not HTTP")
    status = int(parts[1])
    if status != 101:
        fields = (h.partition(":") for h in lines[1:])
        length = next((int(v) for k, _, v in fields
                       if k.strip().lower() == "content-length" and v.strip().isdigit()), None)
        return status, _read_body(sock, rest, length)
    return status, rest


def _read_body(sock: socket.socket, rest: bytes, length: int | None) -> bytes:
    """An error answer's body (at most 1 MiB)."""
    want = min(length if length is not None else 1 << 20, 1 << 20)
    while len(rest) < want:
        chunk = sock.recv(_RECV)
        if not chunk:
            break
        rest += chunk
    return rest[:want]


def _refusal(sock: socket.socket, status: int, body: bytes, endpoint: str) -> BaseException:
    sock.close()
    try:
        _answer(CALL, status, body)
    except AgentRefusedError as exc:
        return exc
    return AgentRefusedError(CALL, status, "", "the agent answered without upgrading the connection")


def encode(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode()
