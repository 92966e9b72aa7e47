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
"""A scripted agent on a real unix socket, speaking the engine stream's
handshake, for the faults the real agent never commits: lines that are not
events, events for rooms nobody opened, an agent that stops reading."""

from __future__ import annotations

import json
import os
import queue
import socket
import threading
import time
from typing import Any, Callable


class FakeStream:
    """One accepted stream: what the client registered and sent, and a way
    to send it lines."""

    def __init__(self, conn: socket.socket, registration: dict[str, Any], raw_registration: bytes = b"") -> None:
        self.conn = conn
        self.registration = registration
        self.raw_registration = raw_registration  # the body as it came
        self.ops: queue.Queue[dict[str, Any]] = queue.Queue()
        self.raw_ops: queue.Queue[bytes] = queue.Queue()  # the same lines, as they came
        self.read = True

    def send(self, *lines: bytes | dict[str, Any]) -> None:
        data = b"".join((json.dumps(x).encode() if isinstance(x, dict) else x) + b"\n" for x in lines)
        self.conn.sendall(data)

    def next_op(self, timeout: float = 5) -> dict[str, Any]:
        return self.ops.get(timeout=timeout)

    def close(self) -> None:
        try:
            self.conn.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.conn.close()


class FakeAgent:
    def __init__(self, path: str, read_ops: bool = True) -> None:
        self.path = path
        self.read_ops = read_ops
        self.streams: queue.Queue[FakeStream] = queue.Queue()
        self.accepted = 0
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.bind(path)
        self.sock.listen(8)
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.accepted += 1
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        buf = b""
        while b"\r\n\r\n" not in buf:
            chunk = conn.recv(65536)
            if not chunk:
                return
            buf += chunk
        head, _, rest = buf.partition(b"\r\n\r\n")
        length = next(int(h.split(b":")[1]) for h in head.split(b"\r\n") if h.lower().startswith(b"content-length:"))
        while len(rest) < length:
            rest += conn.recv(65536)
        raw, rest = rest[:length], rest[length:]
        registration = json.loads(raw)
        conn.sendall(b"HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: pdtopo-stream.v1\r\n\r\n")
        fs = FakeStream(conn, registration, raw)
        fs.send({"ev": "hello", "protocol": 1, "engineRank": 0, "sessionId": registration["sessionId"],
                 "registration": 1, "replaced": False})
        self.streams.put(fs)
        if not self.read_ops:
            return  # the connection stays open, never read
        while True:
            while b"\n" in rest:
                line, _, rest = rest.partition(b"\n")
                fs.raw_ops.put(line)
                fs.ops.put(json.loads(line))
            try:
                chunk = conn.recv(65536)
            except OSError:
                return
            if not chunk:
                return
            rest += chunk

    def next_stream(self, timeout: float = 5) -> FakeStream:
        return self.streams.get(timeout=timeout)

    def close(self) -> None:
        self.sock.close()
        if os.path.exists(self.path):
            os.unlink(self.path)


def wait_for(cond: Callable[[], object], seconds: float = 5, what: str = "the condition") -> None:
    deadline = time.monotonic() + seconds
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} did not happen within {seconds}s")
        time.sleep(0.005)
