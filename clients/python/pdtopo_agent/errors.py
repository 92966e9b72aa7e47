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
"""Exceptions of the adapter.

AgentError and its subclasses are calls to the agent that did not work;
KVTransferError is a room that failed, shaped like the reference engine's
exception of the same name (bootstrap_room, failure_reason,
remote_endpoint), plus the agent's stable failure_code.
"""

from __future__ import annotations


class AgentError(Exception):
    """A call to the pdtopo receiver agent did not work."""


class AgentUnavailableError(AgentError):
    """The agent could not be reached: no socket, nothing listening on it,
    a broken connection, or no answer in time."""

    def __init__(self, endpoint: str, call: str, cause: BaseException | str):
        self.endpoint = endpoint
        self.call = call
        self.cause = cause
        super().__init__(
            f"pdtopo agent at {endpoint} did not answer {call}: {cause} "
            "(is the pdtopo-agent sidecar running and serving this engine rank?)"
        )


class AgentTimeoutError(AgentUnavailableError):
    """The agent did not answer within the call's timeout."""


class AgentRefusedError(AgentError):
    """The agent answered the call with an error: an HTTP status, the
    agent's stable code (e.g. RoomExists, InvalidArgument, NoPlanLoaded) and its
    message."""

    def __init__(self, call: str, http_status: int, code: str, message: str):
        self.call = call
        self.http_status = http_status
        self.code = code
        self.message = message
        super().__init__(
            f"pdtopo agent refused {call}: {http_status} {code or '(no code)'}: {message}"
        )


class KVTransferError(Exception):
    """A room that failed, as the reference decode receiver's
    failure_exception() raises it."""

    def __init__(
        self,
        bootstrap_room: int,
        failure_reason: str,
        remote_endpoint: str | None = None,
        failure_code: str = "",
    ):
        super().__init__(failure_reason)
        self.bootstrap_room = bootstrap_room
        self.failure_reason = failure_reason
        self.remote_endpoint = remote_endpoint
        self.failure_code = failure_code

    def __str__(self) -> str:
        if self.remote_endpoint:
            return (
                f"KVTransferError(bootstrap_room={self.bootstrap_room}, "
                f"remote_endpoint={self.remote_endpoint}): {self.failure_reason}"
            )
        return f"KVTransferError(bootstrap_room={self.bootstrap_room}): {self.failure_reason}"


# Failure codes of rooms that failed in the adapter rather than in the agent
# (the agent's own codes are in docs/engine-integration.md).
FAILURE_AGENT_UNAVAILABLE = "AgentUnavailable"
FAILURE_AGENT_REFUSED = "AgentRefused"
FAILURE_STREAM_LOST = "AgentStreamLost"
FAILURE_OTHER_RANK = "FailedOnAnotherRank"
FAILURE_UNKNOWN_STATUS = "UnknownStatus"
FAILURE_MANIFEST_REFUSED = "ManifestRefused"
"""A block manifest the adapter could not put on the stream (it has a line
break and is not JSON); the agent refuses the ones it cannot use with the
same code."""
