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
"""tokenspeed's own bootstrap server (MooncakeKVBootstrapServer), as its
prefill instance runs it, on 127.0.0.1:PORT until stdin closes:

    PYTHONPATH=<chaos/env.sh dir> python3 bootstrap.py PORT

Prints "ready" once the server answers as a fresh one; exits non-zero when
another process holds the port (the caller picks another). pdtopo's own code; the server is the
engine's, from the tokenspeed-env directory.
"""

import os
import sys
import time
import urllib.request

from tokenspeed.runtime.pd.mooncake.conn import MooncakeKVBootstrapServer


def main(port: int) -> None:
    server = MooncakeKVBootstrapServer(port)
    fresh = b'{"prefill_tp_size": null, "prefill_dp_size": null'
    for _ in range(100):
        # the server's thread ends when it cannot bind: another process may
        # hold the port and answer instead, so the answer must be a fresh
        # server's (no rank registered) and the thread alive
        time.sleep(0.05)
        if not server.thread.is_alive():
            sys.exit(f"the bootstrap server could not serve port {port} (taken?)")
        try:
            url = f"http://127.0.0.1:{port}/route?engine_rank=-1&target_dp_group=-1"
            with urllib.request.urlopen(url, timeout=1) as r:
                body = r.read(len(fresh))
        except OSError:
            continue
        if body != fresh:
            sys.exit(f"port {port} answers {body[:100]!r}: another server holds it")
        if server.thread.is_alive():
            break
    else:
        sys.exit(f"the bootstrap server on port {port} never answered")
    print("ready", flush=True)
    sys.stdin.read()
    os._exit(0)  # the server's thread is a daemon, but be quick


if __name__ == "__main__":
    main(int(sys.argv[1]))
