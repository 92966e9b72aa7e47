#!/usr/bin/python3
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

"""Judges the pdtopo CLI against the engines' own verdicts, end to end.

For a sample of the cases of a verdicts file made by running vLLM's or
SGLang's rule code (conformance/vllm/nixl/generate.sh,
conformance/sglang/generate.sh), writes the pair as a PDPair whose
spec.model.hfConfig is the model's config.json (hfconfigs.py), runs
`pdtopo plan -f - -o json` and checks the three properties issue 28's
held-out check judges:

  1. exit 0 exactly when the engine accepts the pair, but where pdtopo is
     documented stricter (docs/engines/*.md: vLLM's NHD multi-source read,
     SGLang's missing divisibility check), which must exit 3;
  2. exit 3 when the engine refuses it;
  3. for an accepted pair, every decode rank's targets (prefill rank and
     dummy flag, in the engine's order) equal the engine's, and so its
     non-dummy targets equal the ranks the engine reads.

Local, not CI: it needs a verdicts file and a pdtopo binary.

  check.py --engine sglang --verdicts conformance/sglang/testdata/verdicts.json --pdtopo /tmp/sv/pdtopo
  check.py --engine vllm --verdicts /tmp/vllm-4000.json --pdtopo bin/pdtopo --sample 0

Exit status 0 when every case agrees, 1 otherwise (each disagreement is
printed with the manifest that shows it).
"""

import argparse
import concurrent.futures
import json
import os
import random
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from hfconfigs import HF_CONFIGS  # noqa: E402


def sglang_role(c, side):
    role = {
        "tensorParallelSize": c[side + "TP"],
        "tokensPerPage": c[side + "PageSize"],
        "kvCacheDtype": c[side + "KVCacheDtype"],
    }
    if c[side + "DP"] > 1:
        role["dataParallelSize"] = c[side + "DP"]
    if c[side + "PP"] > 1:
        role["pipelineParallelSize"] = c[side + "PP"]
    return role


def vllm_role(c, side):
    return {
        "tensorParallelSize": c[side + "TP"],
        "tokensPerPage": c[side + "BlockSize"],
        "kvCacheLayout": c[side + "KVCacheLayout"],
        "kvCacheDtype": c[side + "KVCacheDtype"],
    }


def manifest(engine, c):
    if engine == "sglang":
        eng = {"name": "sglang", "kvConnector": c["backend"]}
        prefill, decode = sglang_role(c, "prefill"), sglang_role(c, "decode")
    else:
        eng = {"name": "vllm", "kvConnector": "NixlConnector"}
        prefill, decode = vllm_role(c, "prefill"), vllm_role(c, "decode")
    return {
        "apiVersion": "pd.pdtopo.dev/v1alpha1",
        "kind": "PDPair",
        "metadata": {"name": "conformance-case"},
        "spec": {
            "engine": eng,
            "model": {"hfConfig": HF_CONFIGS[c["model"]]},
            "prefill": prefill,
            "decode": decode,
        },
    }


def expected(engine, c):
    """(exit status, {decode TP rank: [(prefill TP rank, is dummy), ...]})
    the engine's verdict asks of pdtopo."""
    if engine == "sglang":
        if c["engineVerdict"] != "accepted" or c["engineWrong"]:
            return 3, None
        # The plan has one entry per decode TP rank; with decode PP > 1 the
        # PP ranks of one TP rank read the same prefill TP ranks.
        return 0, {
            d["decodeTPRank"]: [(t["prefillTPRank"], t["isDummy"]) for t in d["targets"]]
            for d in c["decodeRanks"]
            if d["decodePPRank"] == 0
        }
    stricter = c["accepted"] and c["decodeKVCacheLayout"] == "NHD" and any(
        len(d["attnRead"]) > 1 for d in c["decodeRanks"]
    )
    if not c["accepted"] or stricter:
        return 3, None
    return 0, {
        d["rank"]: [(r, r not in d["read"]) for r in d["handshake"]] for d in c["decodeRanks"]
    }


def run(pdtopo, engine, c):
    doc = manifest(engine, c)
    p = subprocess.run(
        [pdtopo, "plan", "-f", "-", "-o", "json"],
        input=json.dumps(doc), capture_output=True, text=True, timeout=60,
    )
    want_rc, want_targets = expected(engine, c)
    problems = []
    if p.returncode != want_rc:
        problems.append(f"exit {p.returncode}, want {want_rc}: {p.stderr.strip()[:400]}")
    elif want_rc == 0:
        got = {}
        for plan in json.loads(p.stdout)["plans"]:
            got[plan["decodeTPRank"]] = [(t["prefillTPRank"], t["isDummy"]) for t in plan["targets"]]
        for rank, want in sorted(want_targets.items()):
            have = got.get(rank)
            if have != want:
                reads = lambda ts: sorted(r for r, dummy in ts or [] if not dummy)  # noqa: E731
                kind = "non-dummy targets differ" if reads(have) != reads(want) else "order or dummies differ"
                problems.append(f"decode rank {rank}: {kind}: {have}, engine {want}")
        if set(got) != set(want_targets):
            problems.append(f"decode ranks {sorted(got)}, engine {sorted(want_targets)}")
    return problems, doc


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--engine", choices=["sglang", "vllm"], required=True)
    ap.add_argument("--verdicts", required=True)
    ap.add_argument("--pdtopo", required=True, help="a pdtopo binary")
    ap.add_argument("--sample", type=int, default=400, help="cases to run (0: all)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()

    with open(args.verdicts) as f:
        cases = json.load(f)["cases"]
    missing = sorted({c["model"] for c in cases} - set(HF_CONFIGS))
    if missing:
        sys.exit(f"hfconfigs.py has no config.json for {missing}")
    if 0 < args.sample < len(cases):
        cases = random.Random(args.seed).sample(cases, args.sample)

    failed = 0
    tally = {0: 0, 3: 0}
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for c, (problems, doc) in zip(cases, pool.map(lambda c: run(args.pdtopo, args.engine, c), cases)):
            tally[expected(args.engine, c)[0]] += 1
            if problems:
                failed += 1
                print(f"case {c.get('id', '?')} {c['model']}:", *problems, sep="\n  ")
                print("  manifest:", json.dumps(doc["spec"]["prefill"]), "→", json.dumps(doc["spec"]["decode"]))
    print(f"{len(cases)} cases ({tally[0]} to accept, {tally[3]} to refuse): {failed} disagree")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
