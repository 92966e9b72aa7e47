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

"""Stand-ins for what SGLang's rule code names but that is not the rule.

engine.py executes SGLang's own classes (extracted from its files) in a
namespace built here. Everything in this file is pdtopo's: a logger with
SGLang's warning_once, the environment settings object, NetworkAddress, an
in-process transport for the bootstrap server's HTTP calls (the handlers
answering are SGLang's own), and empty base classes. None of SGLang's code
is here.
"""

import logging
import urllib.parse
from types import SimpleNamespace


class _Logger:
    """logging.Logger plus the warning_once SGLang adds to its loggers."""

    def __init__(self, name):
        self._log = logging.getLogger(name)
        self._once = set()

    def __getattr__(self, name):
        return getattr(self._log, name)

    def warning_once(self, msg, *args):
        if msg not in self._once:
            self._once.add(msg)
            self._log.warning(msg, *args)


class _Env:
    def __init__(self, default):
        self._default = default

    def get(self):
        return self._default


class _Envs:
    """sglang.srt.environ.envs: every setting at its default that matters."""

    _defaults = {
        "SGLANG_DISAGGREGATION_BOOTSTRAP_ENTRY_CLEANUP_INTERVAL": 120,
        "SGLANG_DISAGGREGATION_ALL_CP_RANKS_TRANSFER": False,
        "SGLANG_DISAGG_STAGING_BUFFER": False,
    }

    def __getattr__(self, name):
        return _Env(self._defaults.get(name))


class NetworkAddress:
    """sglang.srt.utils.network.NetworkAddress, as far as the rules use it."""

    def __init__(self, host, port):
        self.host, self.port = host, port
        self.is_ipv6 = False

    @classmethod
    def parse(cls, text):
        host, _, port = text.rpartition(":")
        return cls(host, int(port))

    def resolved(self):
        return self

    def to_url(self):
        return f"http://{self.host}:{self.port}"

    def to_tcp(self):
        return f"tcp://{self.host}:{self.port}"

    def to_host_port_str(self):
        return f"{self.host}:{self.port}"


class _Request:
    """What SGLang's aiohttp handlers read of a request."""

    def __init__(self, method, query=None, body=None):
        self.method = method
        self.query = query or {}
        self._body = body

    async def json(self):
        return self._body


class _Response:
    def __init__(self, status, text):
        self.status_code = status
        self.text = text

    def json(self):
        import json

        return json.loads(self.text)


class InProcessHTTP:
    """The `requests` module as SGLang's conn.py calls it, answered in
    process by registered bootstrap servers (SGLang's own handlers) on one
    event loop instead of over a socket."""

    def __init__(self, loop):
        self._loop = loop
        self._servers = {}
        self.calls = []

    def serve(self, host_port, server):
        self._servers[host_port] = server

    def _dispatch(self, method, url, body=None):
        u = urllib.parse.urlsplit(url)
        server = self._servers.get(u.netloc)
        if server is None:
            raise ConnectionError(f"no bootstrap server at {u.netloc}")
        query = dict(urllib.parse.parse_qsl(u.query, keep_blank_values=True))
        self.calls.append((method, u.path, query))
        if u.path != "/route":
            raise ValueError(f"unexpected path {u.path}")
        resp = self._loop.run_until_complete(
            server._handle_route(_Request(method, query, body))
        )
        return _Response(resp.status, resp.text)

    def get(self, url, timeout=None):
        return self._dispatch("GET", url)

    def put(self, url, json=None, timeout=None):
        return self._dispatch("PUT", url, json)


class _Empty:
    pass


def base_namespace():
    """Names SGLang's extracted classes need that are not rules."""
    import asyncio
    import concurrent.futures
    import dataclasses
    import enum
    import threading
    import time
    import typing

    import numpy as np
    from aiohttp import web

    ns = {name: getattr(typing, name) for name in typing.__all__}
    ns.update(
        asyncio=asyncio,
        concurrent=concurrent,
        dataclasses=dataclasses,
        enum=enum,
        np=np,
        threading=threading,
        time=time,
        web=web,
        envs=_Envs(),
        NetworkAddress=NetworkAddress,
        logger=_Logger("sglang.srt.disaggregation"),
        get_memory=lambda: SimpleNamespace(enable_unified_memory=False),
        # CommonKVReceiver's class body makes a ZMQ context for the sockets
        # its metadata messages use; the rules send none.
        zmq=SimpleNamespace(Context=_Empty),
    )
    for name in (
        "BaseKVManager",
        "BaseKVReceiver",
        "BaseKVSender",
        "BaseKVBootstrapServer",
    ):
        ns[name] = type(name, (), {})
    ns["StagingManagerMixin"] = type("StagingManagerMixin", (_Empty,), {})
    return ns
