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
"""HTTP/1.1 over the agent's unix socket, with the standard library only.

An AgentConnection keeps a few keep-alive connections open and hands one to
each call, so an engine thread pays the connect once, and several threads
can call at once. Every call has a timeout (connecting, sending and reading
the answer); failures become AgentUnavailableError / AgentTimeoutError, and
error answers AgentRefusedError with the agent's code.
"""

from __future__ import annotations

import http.client
import json
import socket
import threading
from typing import Any, Callable

from .errors import AgentRefusedError, AgentTimeoutError, AgentUnavailableError

DEFAULT_TIMEOUT = 5.0
"""Seconds a call may take; the agent answers every call but a long poll
without waiting on the network."""

MAX_ANSWER_BYTES = 1 << 20
"""Rooms and errors are a few hundred bytes; a larger answer is not the agent's."""


class UnixHTTPConnection(http.client.HTTPConnection):
    """http.client's connection, dialling a unix socket instead of TCP."""

    def __init__(self, path: str, timeout: float):
        super().__init__("agent", timeout=timeout)
        self.socket_path = path

    def connect(self) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        try:
            sock.connect(self.socket_path)
        except BaseException:
            sock.close()
            raise
        self.sock = sock


# Errors of a kept connection the agent closed while it was idle (an agent
# restart): the call was not taken, and is tried once more on a new one.
_STALE = (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError)


class AgentConnection:
    """Connections to one agent socket ("/run/pdtopo/rank-0.sock"), or to a
    single-rank agent on loopback TCP ("tcp:127.0.0.1:8941")."""

    def __init__(self, address: str, timeout: float = DEFAULT_TIMEOUT, max_idle: int = 4):
        if timeout is None or timeout <= 0:
            raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
        self.address = address
        self.timeout = float(timeout)
        self.max_idle = max(1, int(max_idle))
        self._idle: list[http.client.HTTPConnection] = []
        self._lock = threading.Lock()
        self._closed = False
        self._new: Callable[[], http.client.HTTPConnection]
        if address.startswith("tcp:"):
            host, sep, port = address[len("tcp:"):].rpartition(":")
            if not sep or not port.isdigit():
                raise ValueError(f"address {address!r}: want a socket path or tcp:HOST:PORT")
            self._new = lambda: http.client.HTTPConnection(host.strip("[]"), int(port), timeout=self.timeout)
            self.endpoint = address
        else:
            self._new = lambda: UnixHTTPConnection(address, self.timeout)
            self.endpoint = "unix:" + address

    def close(self) -> None:
        """Close the kept connections; later calls open new ones."""
        with self._lock:
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()

    def _take(self) -> tuple[http.client.HTTPConnection, bool]:
        with self._lock:
            if self._idle:
                return self._idle.pop(), True
        return self._new(), False

    def _give(self, conn: http.client.HTTPConnection) -> None:
        with self._lock:
            if len(self._idle) < self.max_idle:
                self._idle.append(conn)
                return
        conn.close()

    def call(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        timeout: float | None = None,
    ) -> Any:
        """Send one call; return the decoded JSON answer (None for 204).

        Raises AgentUnavailableError (AgentTimeoutError) when no answer came,
        AgentRefusedError for an error answer.
        """
        name = f"{method} {path.split('?', 1)[0]}"
        payload = None
        headers = {}
        if isinstance(body, (bytes, bytearray)):  # encoded by the caller
            payload = bytes(body)
            headers["Content-Type"] = "application/json"
        elif body is not None:
            payload = json.dumps(body, separators=(",", ":")).encode()
            headers["Content-Type"] = "application/json"
        limit = self.timeout if timeout is None else float(timeout)
        for attempt in (0, 1):
            conn, reused = self._take()
            try:
                conn.timeout = limit
                if conn.sock is not None:
                    conn.sock.settimeout(limit)
                conn.request(method, path, body=payload, headers=headers)
                resp = conn.getresponse()
                size = resp.getheader("Content-Length")
                if size is not None and size.isdigit() and int(size) > MAX_ANSWER_BYTES:
                    conn.close()
                    raise AgentRefusedError(name, resp.status, "", f"a {size}-byte answer is not the agent's")
                raw = resp.read()
            except TimeoutError as exc:
                conn.close()
                raise AgentTimeoutError(self.endpoint, name, f"no answer within {limit:g}s") from exc
            except _STALE as exc:
                conn.close()
                if reused and attempt == 0:
                    continue
                raise AgentUnavailableError(self.endpoint, name, _describe(exc)) from exc
            except (OSError, http.client.HTTPException) as exc:
                conn.close()
                raise AgentUnavailableError(self.endpoint, name, _describe(exc)) from exc
            if resp.will_close:
                conn.close()
            else:
                self._give(conn)
            return _answer(name, resp.status, raw)
        raise AssertionError("unreachable")  # the loop returns or raises


def _describe(exc: BaseException) -> str:
    if isinstance(exc, FileNotFoundError):
        return "no such socket"
    if isinstance(exc, ConnectionRefusedError):
        return "nothing listens on the socket (connection refused)"
    return f"{type(exc).__name__}: {exc}"


def _answer(name: str, status: int, raw: bytes) -> Any:
    if 200 <= status <= 299:
        if status == 204 or not raw:
            return None
        try:
            return json.loads(raw)
        except ValueError as exc:
            raise AgentRefusedError(name, status, "", f"the answer is not JSON: {raw[:200]!r}") from exc
    code, message = "", raw[:200].decode("utf-8", "replace").strip()
    try:
        err = json.loads(raw)["error"]
        code, message = str(err.get("code", "")), str(err.get("message", ""))
    except (ValueError, KeyError, TypeError, AttributeError):
        pass
    raise AgentRefusedError(name, status, code, message)
