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
"""TransferPoll: a room's state, numbered as the reference engine numbers it."""

from __future__ import annotations

import enum


class TransferPoll(enum.IntEnum):
    """A room's state, with the reference engine's TransferPoll values.

    An IntEnum: each member equals the reference's plain int (Success == 5),
    so an engine comparing poll() results with its own constants, or
    indexing with them, keeps working, and names print as names.
    """

    Failed = 0
    Bootstrapping = 1
    Bootstrapped = 2
    WaitingForInput = 3
    Transferring = 4
    Success = 5

    @classmethod
    def from_name(cls, name: str) -> TransferPoll:
        """The state of a name as the agent reports it ("Success" → Success);
        KeyError for a name that is not a state."""
        if name not in cls.__members__:
            raise KeyError(name)
        return cls.__members__[name]

    @classmethod
    def name_of(cls, value: int) -> str:
        """The name of a state value, or "TransferPoll(N)" for a number that
        is not one."""
        try:
            return cls(value).name
        except ValueError:
            return f"TransferPoll({value})"

    @classmethod
    def finished(cls, value: int) -> bool:
        """Whether a room in this state is over: Success or Failed."""
        return value in (cls.Success, cls.Failed)
