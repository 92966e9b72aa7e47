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
"""The package as an engine installs it: TransferPoll's values, the typing
marker in the wheel, and one version."""

from __future__ import annotations

import enum
import os
import shutil
import subprocess
import sys
import tempfile
import tomllib
import unittest
import zipfile

import pdtopo_agent
from pdtopo_agent import TransferPoll

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The reference engine's TransferPoll (tokenspeed's runtime/pd/base/status.py):
# engines compare poll() with these numbers.
REFERENCE_VALUES = {
    "Failed": 0,
    "Bootstrapping": 1,
    "Bootstrapped": 2,
    "WaitingForInput": 3,
    "Transferring": 4,
    "Success": 5,
}


class TransferPollTest(unittest.TestCase):
    def test_int_enum_with_the_reference_values(self) -> None:
        self.assertTrue(issubclass(TransferPoll, enum.IntEnum))
        self.assertEqual({m.name: int(m) for m in TransferPoll}, REFERENCE_VALUES)
        for name, value in REFERENCE_VALUES.items():
            self.assertEqual(TransferPoll[name], value)  # equal to the plain int
            self.assertIs(TransferPoll(value), TransferPoll[name])

    def test_names(self) -> None:
        self.assertIs(TransferPoll.from_name("Success"), TransferPoll.Success)
        with self.assertRaises(KeyError):
            TransferPoll.from_name("Done")
        with self.assertRaises(KeyError):
            TransferPoll.from_name("__class__")
        self.assertEqual(TransferPoll.name_of(2), "Bootstrapped")
        self.assertEqual(TransferPoll.name_of(TransferPoll.Transferring), "Transferring")
        self.assertEqual(TransferPoll.name_of(9), "TransferPoll(9)")

    def test_finished(self) -> None:
        finished = {m.name for m in TransferPoll if TransferPoll.finished(m)}
        self.assertEqual(finished, {"Success", "Failed"})
        self.assertTrue(TransferPoll.finished(5))
        self.assertFalse(TransferPoll.finished(4))


class PackageTest(unittest.TestCase):
    def test_one_version(self) -> None:
        with open(os.path.join(HERE, "pyproject.toml"), "rb") as f:
            project = tomllib.load(f)
        self.assertNotIn("version", project["project"],
                         "pyproject.toml writes the version: it belongs to pdtopo_agent.__version__")
        self.assertIn("version", project["project"]["dynamic"])
        self.assertEqual(project["tool"]["setuptools"]["dynamic"]["version"], {"attr": "pdtopo_agent.__version__"})

    def test_wheel_ships_py_typed_and_the_version(self) -> None:
        """Build the wheel, as pip would, from a copy of the sources, and read
        it: the PEP 561 marker is inside, and its version is __version__."""
        with tempfile.TemporaryDirectory() as tmp:
            src = os.path.join(tmp, "src")
            os.mkdir(src)
            for name in ("pyproject.toml", "README.md"):
                shutil.copy(os.path.join(HERE, name), src)
            shutil.copytree(os.path.join(HERE, "pdtopo_agent"), os.path.join(src, "pdtopo_agent"),
                            ignore=shutil.ignore_patterns("__pycache__"))
            out = os.path.join(tmp, "dist")
            build = subprocess.run(
                [sys.executable, "-c",
                 "import sys, setuptools.build_meta as b; print(b.build_wheel(sys.argv[1]))", out],
                cwd=src, capture_output=True, text=True, timeout=300,
            )
            self.assertEqual(build.returncode, 0,
                             "building the wheel needs setuptools and wheel (apt: python3-setuptools python3-wheel):\n"
                             + build.stdout + build.stderr)
            wheel = os.path.join(out, build.stdout.strip().splitlines()[-1])
            with zipfile.ZipFile(wheel) as z:
                names = z.namelist()
                self.assertIn("pdtopo_agent/py.typed", names)
                metadata = z.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode().splitlines()
        self.assertIn(f"Version: {pdtopo_agent.__version__}", metadata)
        self.assertIn("Classifier: Typing :: Typed", metadata)


if __name__ == "__main__":
    unittest.main()
