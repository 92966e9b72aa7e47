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
"""pdtopo_agent: a decode engine's side of the pdtopo receiver agent.

A decode engine rank swaps its KV receiver for AgentKVReceiver and its KV
manager for AgentKVManager; the agent beside it (the pdtopo-agent sidecar)
plans the routes, talks to the prefill's bootstrap server and runs the ZMQ
handshake. Standard library only; see docs/engine-integration.md.
"""

from .errors import (
    FAILURE_AGENT_REFUSED,
    FAILURE_AGENT_UNAVAILABLE,
    FAILURE_MANIFEST_REFUSED,
    FAILURE_OTHER_RANK,
    FAILURE_STREAM_LOST,
    FAILURE_UNKNOWN_STATUS,
    AgentError,
    AgentRefusedError,
    AgentTimeoutError,
    AgentUnavailableError,
    KVTransferError,
)
from .manager import DEFAULT_SOCKET_DIR, SOCKET_DIR_ENV, AgentKVManager, socket_path_for_rank
from .receiver import AgentKVReceiver
from .status import TransferPoll
from .transport import DEFAULT_TIMEOUT, AgentConnection
from .wire import ContractWire, SupportsWireBytes, V1Wire

__all__ = [
    "AgentConnection",
    "AgentError",
    "AgentKVManager",
    "AgentKVReceiver",
    "AgentRefusedError",
    "AgentTimeoutError",
    "AgentUnavailableError",
    "ContractWire",
    "DEFAULT_SOCKET_DIR",
    "DEFAULT_TIMEOUT",
    "FAILURE_AGENT_REFUSED",
    "FAILURE_AGENT_UNAVAILABLE",
    "FAILURE_MANIFEST_REFUSED",
    "FAILURE_OTHER_RANK",
    "FAILURE_STREAM_LOST",
    "FAILURE_UNKNOWN_STATUS",
    "KVTransferError",
    "SOCKET_DIR_ENV",
    "SupportsWireBytes",
    "TransferPoll",
    "V1Wire",
    "socket_path_for_rank",
]
__version__ = "0.1.0"
