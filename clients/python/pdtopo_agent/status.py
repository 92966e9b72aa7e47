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


class TransferPoll:
    """The reference engine's TransferPoll values (plain ints)."""

    Failed = 0
    Bootstrapping = 1
    Bootstrapped = 2
    WaitingForInput = 3
    Transferring = 4
    Success = 5

    _BY_NAME = {
        "Failed": Failed,
        "Bootstrapping": Bootstrapping,
        "Bootstrapped": Bootstrapped,
        "WaitingForInput": WaitingForInput,
        "Transferring": Transferring,
        "Success": Success,
    }
    _NAMES = {v: k for k, v in _BY_NAME.items()}

    @classmethod
    def from_name(cls, name: str) -> int:
        """The number of a state name as the agent reports it ("Success" → 5);
        KeyError for a name that is not a state."""
        return cls._BY_NAME[name]

    @classmethod
    def name_of(cls, value: int) -> str:
        return cls._NAMES.get(value, f"TransferPoll({value})")

    @classmethod
    def finished(cls, value: int) -> bool:
        return value in (cls.Success, cls.Failed)
