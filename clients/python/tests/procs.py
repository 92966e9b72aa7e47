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
"""The real agent and prefill peer as processes, for the end-to-end tests.

The binaries come from $PDTOPO_TEST_BIN_DIR (the Go test that runs these
tests builds them there), or are built with `go build` on first use.
"""

from __future__ import annotations

import atexit
import json
import os
import re
import select
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[3]
SAMPLES = REPO / "config" / "samples"
BIN_ENV = "PDTOPO_TEST_BIN_DIR"

_bin_dir: Path | None = None


def bin_dir() -> Path:
    global _bin_dir
    if _bin_dir is None:
        given = os.environ.get(BIN_ENV)
        if given:
            _bin_dir = Path(given)
        else:
            out = Path(tempfile.mkdtemp(prefix="pdtopo-bin-"))
            atexit.register(shutil.rmtree, out, True)
            subprocess.run(
                ["go", "build", "-o", str(out) + "/", "./cmd/receiver-agent", "./cmd/prefill-peer", "./cmd/pdtopo"],
                cwd=REPO,
                check=True,
            )
            _bin_dir = out
    return _bin_dir


def plan_file(manifest: Path, into: Path) -> Path:
    """The manifest's plans, as `pdtopo plan -o json` writes them."""
    out = into / (manifest.stem + ".plans.json")
    with open(out, "wb") as f:
        subprocess.run([str(bin_dir() / "pdtopo"), "plan", "-f", str(manifest), "-o", "json"], stdout=f, check=True)
    return out


def dead_address() -> str:
    """A loopback address nothing listens on: a bootstrap server that is down."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return "127.0.0.1:%d" % s.getsockname()[1]


class Process:
    def __init__(self, args: list[str], log: Path):
        self.log = log
        self._log = open(log, "wb")
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=self._log)

    def stop(self, sig: int = signal.SIGINT) -> str:
        """Stop the process and return what it printed after starting."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            out, _ = self.proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            out, _ = self.proc.communicate()
        self._log.close()
        return out.decode(errors="replace")

    def stderr(self) -> str:
        self._log.flush()
        return self.log.read_text(errors="replace")


_COUNTS = re.compile(
    r"engine rank (?P<rank>\d+): (?P<registrations>\d+) registrations, (?P<requests>\d+) requests "
    r"\((?P<dummies>\d+) dummy\), (?P<completed>\d+) rooms completed, \d+ statuses sent, (?P<errors>\d+) errors"
)


class PrefillPeer(Process):
    """cmd/prefill-peer playing a PDPair manifest's prefill side, every room
    answered with one behaviour (succeed, fail, silent, die)."""

    def __init__(self, manifest: Path | None, workdir: Path, *extra: str):
        layout = ["-f", str(manifest)] if manifest is not None else []  # else in extra (--contract)
        super().__init__(
            [str(bin_dir() / "prefill-peer"), *layout, "--bootstrap-port", "0", "--quiet", *extra],
            workdir / f"peer-{time.monotonic_ns()}.log",
        )
        line = self._read_line(deadline=time.monotonic() + 15)
        if not line.startswith("bootstrap "):
            raise RuntimeError(f"prefill-peer printed {line!r}; stderr: {self.stderr()}")
        self.bootstrap_addr = line.split()[1]

    def _read_line(self, deadline: float) -> str:
        buf = b""
        assert self.proc.stdout is not None  # Popen(stdout=PIPE)
        fd = self.proc.stdout.fileno()
        while not buf.endswith(b"\n"):
            left = deadline - time.monotonic()
            if left <= 0 or self.proc.poll() is not None:
                raise RuntimeError(f"prefill-peer did not start: {buf!r}; stderr: {self.stderr()}")
            ready, _, _ = select.select([fd], [], [], left)
            if ready:
                b = os.read(fd, 1)
                if not b:
                    continue
                buf += b
        return buf.decode().strip()

    def counts(self) -> dict[int, dict[str, int]]:
        """Stop the peer; per prefill engine rank, what it saw (its report)."""
        out = self.stop()
        counts = {}
        for m in _COUNTS.finditer(out):
            counts[int(m["rank"])] = {k: int(v) for k, v in m.groupdict().items() if k != "rank"}
        return counts


CONTRACT_VECTORS = REPO / "pkg" / "kvwire" / "testdata" / "contract"


def contract_pair(name: str) -> dict[str, Any]:
    """A pair of the cache-contract wire as tokenspeed's own code built it
    (pkg/kvwire/testdata/contract/NAME.json): both contracts, TP sizes, the
    manifests its decode builds and the ones its prefill refuses."""
    pair: dict[str, Any] = json.loads((CONTRACT_VECTORS / f"{name}.json").read_text())
    return pair


def contract_files(pair: dict[str, Any], into: Path) -> tuple[Path, Path]:
    """(the plans `pdtopo plan -o json` makes of a PDPair carrying the
    pair's contracts inline, the prefill contract's file for prefill-peer)."""
    pre, dec = pair["prefill"], pair["decode"]
    dp = pre.get("dp_size") or 1
    pdpair = {
        "apiVersion": "pd.pdtopo.dev/v1alpha1", "kind": "PDPair", "metadata": {"name": pair["pair"]},
        "spec": {
            "wire": "CacheContract",
            "prefill": {"tensorParallelSize": pre["tp_size"] * dp, "dataParallelSize": dp},
            "decode": {"tensorParallelSize": dec["tp_size"]},
            "cacheContracts": {"prefill": {"inline": pre["contract"]}, "decode": {"inline": dec["contract"]}},
        },
    }
    manifest = into / f"{pair['pair']}.pdpair.json"  # JSON is YAML
    manifest.write_text(json.dumps(pdpair))
    contract = into / f"{pair['pair']}.prefill-contract.json"
    contract.write_text(pre["contract"])
    return plan_file(manifest, into), contract


def contract_peer(pair: dict[str, Any], contract: Path, workdir: Path, *extra: str) -> PrefillPeer:
    """cmd/prefill-peer playing the pair's prefill side on the contract wire."""
    dp = pair["prefill"].get("dp_size") or 1
    return PrefillPeer(None, workdir, "--tp", str(pair["prefill"]["tp_size"] * dp), "--dp", str(dp), "--contract",
                       str(contract), *extra)


class Agent(Process):
    """cmd/receiver-agent serving engine ranks first..first+count-1 of a
    decode pod, one unix socket per rank in socket_dir."""

    def __init__(self, plans: Path, socket_dir: Path, first_rank: int, rank_count: int, *extra: str):
        self.socket_dir = socket_dir
        self.ranks = list(range(first_rank, first_rank + rank_count))
        super().__init__(
            [
                str(bin_dir() / "receiver-agent"),
                f"--first-rank={first_rank}",
                f"--rank-count={rank_count}",
                f"--socket-dir={socket_dir}",
                "--status-host=127.0.0.1",
                "--probe-addr=127.0.0.1:0",
                f"--plan-file={plans}",
                "--log-level=warn",
                *extra,
            ],
            socket_dir / f"agent-{first_rank}.log",
        )
        self.wait_ready(time.monotonic() + 20)

    def socket(self, rank: int) -> str:
        return str(self.socket_dir / f"rank-{rank}.sock")

    def stop(self, sig: int = signal.SIGTERM) -> str:
        return super().stop(sig)

    def alive(self) -> bool:
        return self.proc.poll() is None

    def wait_ready(self, deadline: float) -> None:
        from pdtopo_agent import AgentConnection, AgentError

        for rank in self.ranks:
            conn = AgentConnection(self.socket(rank), timeout=1)
            while True:
                try:
                    conn.call("GET", "/healthz")
                    break
                except AgentError as exc:
                    if not self.alive() or time.monotonic() > deadline:
                        raise RuntimeError(f"agent rank {rank} never answered ({exc}); stderr: {self.stderr()}")
                    time.sleep(0.02)
            conn.close()


def buffer_counts(manifest: Path) -> tuple[int, int]:
    """(KV buffers, state buffers) a decode rank of the manifest's pair
    registers, as `pdtopo plan` summarises the layout."""
    out = subprocess.run([str(bin_dir() / "pdtopo"), "plan", "-f", str(manifest)], capture_output=True, text=True,
                         check=True)
    # PDPair x: prefill TP 8 DP 1 → decode TP 4 DP 1, MHA, 160 KV + 0 state buffers, 1 token(s)/page
    words = out.stdout.splitlines()[0].replace(",", "").split()
    at = words.index("KV")
    return int(words[at - 1]), int(words[at + 2])


def engine_pointers(kv: int, state: int) -> tuple[list[int], list[int]]:
    """Made-up buffer addresses of a decode rank: one per buffer."""
    return [0x7F0000000000 + (i << 20) for i in range(kv)], [0x7E0000000000 + (i << 20) for i in range(state)]
