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
"""Arguments as the reference engine passes them (numpy arrays, numpy
integers, lists), turned into JSON values without importing numpy."""

from __future__ import annotations

import operator
from typing import Any


def index_list(name: str, values: Any) -> list[int]:
    """A one-dimensional integer array (numpy, array.array, list, tuple,
    range) as a list of Python ints."""
    dtype = getattr(values, "dtype", None)
    if dtype is not None:  # numpy and look-alikes: check, then one C-level copy
        if getattr(dtype, "kind", None) not in ("i", "u"):
            raise TypeError(f"{name} must hold integers, got an array of dtype {dtype}")
        if getattr(values, "ndim", 1) != 1:
            raise ValueError(f"{name} must be one-dimensional, got shape {getattr(values, 'shape', '?')}")
        out: list[int] = values.tolist()
        return out
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        raise TypeError(f"{name} must be a sequence of integers, got {type(values).__name__}")
    try:
        return [operator.index(v) for v in values]
    except TypeError:
        bad = next(v for v in values if not _is_index(v))
        raise TypeError(f"{name} must hold integers, found {bad!r} ({type(bad).__name__})") from None


def _is_index(v: Any) -> bool:
    try:
        operator.index(v)
    except TypeError:
        return False
    return True


def wire_bytes(name: str, value: Any) -> bytes:
    """A cache contract or block manifest as its wire bytes: bytes (or
    bytearray, memoryview) as they are, or what the object's
    to_wire_bytes() returns, as tokenspeed's CacheTransferContract and
    CachePDBlockManifest do. bytes are not copied."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    to_wire = getattr(value, "to_wire_bytes", None)
    if not callable(to_wire):
        raise TypeError(f"{name} must be bytes or an object with to_wire_bytes(), got {type(value).__name__}")
    out = to_wire()
    if not isinstance(out, (bytes, bytearray, memoryview)):
        raise TypeError(f"{name}.to_wire_bytes() returned {type(out).__name__}, not bytes")
    return bytes(out)


def integer(name: str, value: Any) -> int:
    """An integer argument (a Python or numpy integer)."""
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{name} must be an integer, got {value!r} ({type(value).__name__})") from None
