# Drives the pdtopo agent through the Python adapter (clients/python) against
# a prefill fleet made of tokenspeed's own code (fleet.py), as the decode
# executor of tokenspeed's cache-contract reference commit would drive its
# own receiver: one AgentKVManager per decode rank built with the arena
# pointer and the engine's CacheTransferContract object, one AgentKVReceiver
# per rank and room, prefill(block_manifest=<the engine's CachePDBlockManifest>), poll
# until Success, the token from pop_prefill_metadata.
#
#   PYTHONPATH=<tokenspeed-env dir>:clients/python \
#     python3 adapter.py VECTORS.json BOOTSTRAP_ADDR SOCKET_DIR [MISMATCH_SOCKET_DIR]
#
# VECTORS.json is the pair's file of pkg/kvwire/testdata/contract; the
# agent serves the pair's decode ranks on SOCKET_DIR/rank-R.sock with the
# plans `pdtopo plan` made of the pair. It checks: every manifest of the
# vectors completes on every decode rank with the fleet's token (1000 +
# room % 1000) in every prefill DP group; every manifest the engine's
# prefill refuses (sent as its bytes) fails its room in the agent before it
# is sent (ManifestRefused); every one it accepts completes, but for the cases pdtopo reads
# more strictly (docs/wire.md). With MISMATCH_SOCKET_DIR, an agent
# whose plan was made for another prefill contract refuses the fleet
# (ContractMismatch). Prints one summary line; exits 1 on any
# disagreement. pdtopo's own code.
import json
import sys
import time

from pdtopo_agent import AgentKVManager, AgentKVReceiver, KVTransferError, TransferPoll
from tokenspeed.runtime.pd.cache_protocol import CachePDBlockManifest, CacheTransferContract

ARENA = 0x7F3A00000000
STRICTER = {"unknown key"}  # accepted by the engine, refused by pdtopo (docs/wire.md)
FINISHED = (TransferPoll.Success, TransferPoll.Failed)


def poll_until(rc, done, seconds=20.0):
    deadline = time.monotonic() + seconds
    while True:
        status = rc.poll()
        if done(status):
            return status
        if time.monotonic() > deadline:
            raise AssertionError(f"room {rc.bootstrap_room} still {TransferPoll.name_of(status)} after {seconds}s")
        time.sleep(0.001)


def managers(vectors, socket_dir, ranks=None):
    contract = CacheTransferContract.from_wire_bytes(vectors["decode"]["contract"].encode())
    return [AgentKVManager.for_rank(rank, f"127.0.0.1:{16000 + rank}", kv_data_ptr=ARENA + (rank << 32),
                                    cache_layout=contract, socket_dir=socket_dir)
            for rank in range(ranks or vectors["decode"]["tp_size"])]


def room_outcome(mgrs, addr, room, manifest):
    """Run one room on every decode rank in the executor's order; return
    [(status, token, failure code, reason)] per rank."""
    receivers = [AgentKVReceiver(m, addr, room) for m in mgrs]
    for rc in receivers:
        poll_until(rc, lambda s: s != TransferPoll.Bootstrapping)
    for rc in receivers:
        rc.prefill(block_manifest=manifest)
    out = []
    for m, rc in zip(mgrs, receivers):
        status = poll_until(rc, lambda s: s in FINISHED)
        if status == TransferPoll.Success:
            out.append((status, m.pop_prefill_metadata(room)[0], rc.bootstrap_token, ""))
            rc.clear()
            continue
        try:
            rc.failure_exception()
        except KVTransferError as exc:
            out.append((status, -1, exc.failure_code, exc.failure_reason))
    return out


def main(vectors_file, addr, socket_dir, mismatch_dir=None):
    with open(vectors_file) as f:
        v = json.load(f)
    dp = v["prefill"].get("dp_size") or 1
    problems = []
    mgrs = managers(v, socket_dir)
    rooms = 0
    for k, m in enumerate(v["manifests"]):
        manifest = CachePDBlockManifest.from_wire_bytes(m["wire"].encode())
        for g in range(dp):
            room = 10_000 + k * dp + g
            for rank, (status, token, rc_token, _) in enumerate(room_outcome(mgrs, addr, room, manifest)):
                want = 1000 + room % 1000
                if status != TransferPoll.Success or token != want or rc_token != want:
                    problems.append(f"room {room} on decode rank {rank}: {TransferPoll.name_of(status)}, token {token}/{rc_token}, want Success with {want}")
            rooms += 1
    refused = stricter = 0
    for k, case in enumerate(v["manifest_refusals"]):
        room = 20_000 + k * dp
        # the bytes as they are (the engine's objects would normalise them)
        outcome = room_outcome(mgrs, addr, room, case["wire"].encode())
        accepted = case["verdict"]["accepted"]
        for rank, (status, _, code, reason) in enumerate(outcome):
            if accepted and case["name"] not in STRICTER:
                if status != TransferPoll.Success:
                    problems.append(f"{case['name']!r}: the engine accepts it, decode rank {rank}'s room {room} {code}: {reason}")
            elif code != "ManifestRefused":
                problems.append(f"{case['name']!r}: the engine refuses it ({case['verdict']}), decode rank {rank}'s room {room}: "
                                f"{TransferPoll.name_of(status)} {code} {reason}")
        refused += not accepted
        stricter += accepted and case["name"] in STRICTER
    mismatch = ""
    if mismatch_dir:
        mm = managers(v, mismatch_dir, ranks=1)[0]
        rc = AgentKVReceiver(mm, addr, 30_000)
        poll_until(rc, lambda s: s in FINISHED)
        try:
            rc.failure_exception()
            problems.append("an agent planned for another prefill contract bootstrapped the room")
        except KVTransferError as exc:
            if exc.failure_code != "ContractMismatch" or "prefillContractSHA256" not in exc.failure_reason:
                problems.append(f"the mismatched plan: {exc.failure_code}: {exc.failure_reason}")
            mismatch = ", another prefill contract refused (ContractMismatch)"
        mm.close()
    for m in mgrs:
        m.close()
    for p in problems:
        print("adapter interop", v["pair"] + ":", p, file=sys.stderr)
    print(f"adapter interop {v['pair']}: {rooms} rooms on {len(mgrs)} decode ranks completed through the Python adapter, "
          f"{refused} manifests the engine refuses refused by the agent, {stricter} read more strictly{mismatch}"
          + (f"; {len(problems)} PROBLEMS" if problems else ""))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
