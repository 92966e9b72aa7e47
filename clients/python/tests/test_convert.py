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
"""Arguments as engines pass them: numpy arrays (when numpy is present),
array.array, lists, numpy-like objects, and the errors for anything else."""

from __future__ import annotations

import array
import unittest
from typing import Any

from pdtopo_agent.convert import index_list, integer

try:
    import numpy
except ImportError:  # the numpy test skips itself (go test fails on a skip)
    numpy = None  # type: ignore[assignment]  # the module, or None without it


class _ArrayLike:
    """What the adapter may rely on of a numpy array: dtype.kind, ndim, tolist()."""

    class _DType:
        def __init__(self, kind: str) -> None:
            self.kind = kind

        def __str__(self) -> str:
            return {"i": "int64", "f": "float32"}[self.kind]

    def __init__(self, values: list[Any], kind: str = "i", ndim: int = 1) -> None:
        self.values, self.dtype, self.ndim, self.shape = values, self._DType(kind), ndim, (len(values),)

    def tolist(self) -> list[Any]:
        return list(self.values)


class Convert(unittest.TestCase):
    def test_sequences(self) -> None:
        for given in ([1, 2, 3], (1, 2, 3), range(1, 4), array.array("q", [1, 2, 3]), _ArrayLike([1, 2, 3])):
            got = index_list("kv_indices", given)
            self.assertEqual(got, [1, 2, 3], repr(given))
            self.assertTrue(all(type(v) is int for v in got))
        self.assertEqual(index_list("kv_indices", []), [])

    @unittest.skipIf(numpy is None, "numpy is not installed")
    def test_numpy(self) -> None:
        self.assertEqual(index_list("kv_indices", numpy.arange(4, dtype=numpy.int64)), [0, 1, 2, 3])
        self.assertEqual(index_list("kv_indices", [numpy.int64(9)]), [9])
        self.assertEqual(integer("aux_index", numpy.int32(5)), 5)
        with self.assertRaisesRegex(TypeError, "float64"):
            index_list("kv_indices", numpy.zeros(2))
        with self.assertRaisesRegex(ValueError, "one-dimensional"):
            index_list("kv_indices", numpy.zeros((2, 2), dtype=numpy.int64))

    def test_refusals_name_the_argument(self) -> None:
        with self.assertRaisesRegex(TypeError, r"kv_indices must hold integers, found 1\.5"):
            index_list("kv_indices", [1, 1.5])
        with self.assertRaisesRegex(TypeError, "mamba_indices must hold integers, got an array of dtype float32"):
            index_list("mamba_indices", _ArrayLike([1.0], kind="f"))
        with self.assertRaisesRegex(ValueError, "one-dimensional"):
            index_list("kv_indices", _ArrayLike([[1]], ndim=2))
        for bad in ("12", b"12", 12, None):
            with self.assertRaisesRegex(TypeError, "kv_indices must be a sequence of integers"):
                index_list("kv_indices", bad)
        with self.assertRaisesRegex(TypeError, "aux_index must be an integer"):
            integer("aux_index", "3")


if __name__ == "__main__":
    unittest.main()
