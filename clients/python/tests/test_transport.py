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
"""AgentConnection against small HTTP servers on real unix sockets: what
happens when the agent is absent, silent, refuses, or drops a kept
connection."""

from __future__ import annotations

import http.server
import json
import os
import random
import socket
import socketserver
import tempfile
import threading
import time
import unittest
from typing import Any

from pdtopo_agent import (
    AgentConnection,
    AgentKVManager,
    AgentRefusedError,
    AgentTimeoutError,
    AgentUnavailableError,
    socket_path_for_rank,
)
from pdtopo_agent.transport import _answer


class _Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as the agent serves
    server: _CountingServer

    def do_GET(self) -> None:
        self.server.calls.append((self.command, self.path, None))
        status, body, close = self.server.answer
        raw = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)
        if close:  # answer keep-alive, then drop the connection while it is idle
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
            self.close_connection = True

    def do_PUT(self) -> None:
        n = int(self.headers.get("Content-Length", "0"))
        self.server.calls.append((self.command, self.path, json.loads(self.rfile.read(n))))
        self._reply()

    def do_POST(self) -> None:
        self.server.upgrades.append((self.headers.get("Connection"), self.headers.get("Upgrade")))
        self.do_PUT()

    def _reply(self) -> None:
        status, body, _ = self.server.answer
        raw = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def log_message(self, format: str, *args: Any) -> None:
        pass


class _CountingServer(_Server):
    def __init__(self, path: str) -> None:
        super().__init__(path, _Handler)
        self.accepted = 0
        self.calls: list[tuple[str, str, Any]] = []
        self.upgrades: list[tuple[str | None, str | None]] = []
        self.answer: tuple[int, Any, bool] = (200, {"status": "ok"}, False)

    def get_request(self) -> tuple[Any, Any]:
        conn, addr = super().get_request()
        self.accepted += 1
        return conn, addr


class Transport(unittest.TestCase):
    def setUp(self) -> None:
        self._tmp = tempfile.TemporaryDirectory(prefix="pdtopo-transport-")
        self.addCleanup(self._tmp.cleanup)
        self.path = os.path.join(self._tmp.name, "rank-0.sock")

    def serve(self) -> _CountingServer:
        srv = _CountingServer(self.path)
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        self.addCleanup(srv.server_close)
        self.addCleanup(srv.shutdown)
        return srv

    def test_reuses_one_connection(self) -> None:
        srv = self.serve()
        conn = AgentConnection(self.path)
        for _ in range(25):
            self.assertEqual(conn.call("GET", "/healthz"), {"status": "ok"})
        self.assertEqual(srv.accepted, 1)

    def test_retries_once_when_a_kept_connection_was_dropped(self) -> None:
        srv = self.serve()
        srv.answer = (200, {"status": "ok"}, True)
        conn = AgentConnection(self.path)
        for _ in range(3):
            self.assertEqual(conn.call("GET", "/healthz"), {"status": "ok"})
        self.assertEqual(srv.accepted, 3)
        self.assertEqual(len(srv.calls), 3, "each call reached the server exactly once")

    def test_absent_agent(self) -> None:
        conn = AgentConnection(self.path)
        with self.assertRaises(AgentUnavailableError) as cm:
            conn.call("GET", "/healthz")
        self.assertNotIsInstance(cm.exception, AgentTimeoutError)
        self.assertIn("no such socket", str(cm.exception))
        self.assertIn(self.path, str(cm.exception))
        with self.assertRaises(AgentUnavailableError):
            AgentKVManager(self.path, "127.0.0.1:1", [1, 2])

    def test_stale_socket_file(self) -> None:
        s = socket.socket(socket.AF_UNIX)
        s.bind(self.path)  # a socket file nobody listens on: a dead agent's
        self.addCleanup(s.close)
        with self.assertRaises(AgentUnavailableError) as cm:
            AgentConnection(self.path).call("GET", "/healthz")
        self.assertIn("connection refused", str(cm.exception))

    def test_silent_agent_times_out(self) -> None:
        s = socket.socket(socket.AF_UNIX)
        s.bind(self.path)
        s.listen(1)  # accepted by the kernel, never answered
        self.addCleanup(s.close)
        conn = AgentConnection(self.path, timeout=0.2)
        start = time.monotonic()
        with self.assertRaises(AgentTimeoutError) as cm:
            conn.call("GET", "/healthz")
        self.assertLess(time.monotonic() - start, 5)
        self.assertIn("0.2s", str(cm.exception))

    def test_refusal_carries_the_agents_code(self) -> None:
        srv = self.serve()
        refusal = "the engine registers 2 KV and 1 state buffers but the plan was made for 4 KV and 0 state buffers"
        srv.answer = (400, {"error": {"code": "InvalidArgument", "message": refusal}}, False)
        with self.assertRaises(AgentRefusedError) as cm:
            AgentKVManager(self.path, "127.0.0.1:1", [5, 6], [7])
        e = cm.exception
        self.assertEqual((e.http_status, e.code, e.message, e.call),
                         (400, "InvalidArgument", refusal, "POST /v1/engine/stream"))
        self.assertEqual(srv.calls, [("POST", "/v1/engine/stream",
                                      {"sessionId": "127.0.0.1:1", "kvDataPtrs": [5, 6], "stateDataPtrs": [7]})])
        self.assertEqual(srv.upgrades, [("Upgrade", "pdtopo-stream.v1")])

    def test_answer_that_is_not_the_agents(self) -> None:
        srv = self.serve()
        srv.answer = (502, "bad gateway", False)
        with self.assertRaises(AgentRefusedError) as cm:
            AgentConnection(self.path).call("GET", "/healthz")
        self.assertEqual((cm.exception.http_status, cm.exception.code), (502, ""))

    def test_bad_arguments(self) -> None:
        with self.assertRaises(ValueError):
            AgentConnection(self.path, timeout=0)
        with self.assertRaises(ValueError):
            AgentConnection("tcp:nohost")
        with self.assertRaises(ValueError):
            AgentKVManager(self.path, "", [1])


class Answers(unittest.TestCase):
    """Whatever bytes come back, a call ends in a value or an AgentRefusedError."""

    def test_arbitrary_answers(self) -> None:
        rng = random.Random(12)
        seeds = [b'{"error":{"code":"RoomNotFound","message":"m"}}', b'{"error":"flat"}', b"null", b"[1]", b"\xff", b""]
        for i in range(3000):
            if i < len(seeds):
                raw = seeds[i % len(seeds)]
            else:
                raw = bytes(rng.randrange(256) for _ in range(rng.randrange(40)))
            if i % 3 == 0 and raw:
                raw = bytearray(seeds[i % len(seeds)])
                raw[rng.randrange(len(raw))] = rng.randrange(256)
                raw = bytes(raw)
            status = rng.choice([200, 201, 204, 400, 404, 409, 500, 503])
            try:
                _answer("GET /v1/rooms/1", status, raw)
            except AgentRefusedError as exc:
                self.assertEqual(exc.http_status, status)
                self.assertIsInstance(exc.code, str)
                self.assertIsInstance(exc.message, str)


class SocketPaths(unittest.TestCase):
    def test_rank_sockets(self) -> None:
        self.assertEqual(socket_path_for_rank(3, "/tmp/s"), "/tmp/s/rank-3.sock")
        self.assertEqual(socket_path_for_rank(12, "/tmp/s"), "/tmp/s/rank-12.sock")
        old = os.environ.pop("PDTOPO_AGENT_SOCKET_DIR", None)
        try:
            self.assertEqual(socket_path_for_rank(0), "/run/pdtopo/rank-0.sock")
            os.environ["PDTOPO_AGENT_SOCKET_DIR"] = "/x"
            self.assertEqual(socket_path_for_rank(1), "/x/rank-1.sock")
        finally:
            os.environ.pop("PDTOPO_AGENT_SOCKET_DIR", None)
            if old is not None:
                os.environ["PDTOPO_AGENT_SOCKET_DIR"] = old
        for bad in (-1, "0", 1.0, True):
            with self.assertRaises(ValueError):
                socket_path_for_rank(bad, "/tmp/s")  # type: ignore[arg-type]  # wrong on purpose


if __name__ == "__main__":
    unittest.main()
