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

"""Random contract pairs and the engine's planner verdict on each.

A random "model" (cache groups, fields with a global shape, some fields
sharded on an axis, some fused in parts) is laid out for each side's TP
size the way recipes do (local extent = max(global // TP, 1) on the sharded
axis), then, for one pair in three, one side is changed in one respect (a
group attribute, a dtype, a global extent, the prefix granularity, a field
dropped). Contracts are built from the engine's own dataclasses and checked
by its constructors; the verdict and plans come from its planner."""

import random


def random_pairs(n, seed, proto, plan, spec, tplan, engine_plan):
    rng = random.Random(seed)
    out = []
    while len(out) < n:
        P, D = rng.choice([1, 2, 3, 4, 6, 8]), rng.choice([1, 2, 3, 4, 6, 8, 12])
        model = random_model(rng)
        mutate = rng.random() < 0.33
        try:
            prefill = build(proto, plan, spec, model, P)
            decode = build(proto, plan, spec, mutated(rng, model) if mutate else model, D)
        except (ValueError, TypeError, proto.CacheContractError):
            continue  # the engine would not build such a contract either
        v = {
            "prefill": {"tensorParallelSize": P, "dataParallelSize": 1},
            "decode": {"tensorParallelSize": D, "dataParallelSize": 1},
            "prefillContract": prefill.to_wire_bytes().decode("ascii"),
            "decodeContract": decode.to_wire_bytes().decode("ascii"),
            "engine": engine_plan(P, D, prefill, decode),
        }
        v["name"] = "random-%d-p%d-d%d" % (len(out), P, D)
        out.append(v)
    return out


def random_model(rng):
    groups = []
    for g in range(rng.randint(1, 3)):
        state = rng.random() < 0.3
        group = {
            "id": rng.choice(["full_attention", "sliding_attention", "linear_attention_0", "g%d" % g]) + ("" if g == 0 else "_%d" % g),
            "family": "state" if state else "history",
            "retention": rng.choice(["full_history", "sliding_window"]),
            "rows": rng.choice([1, 2, 4, 16]),
            "window": rng.choice([None, 64, 128]),
            "fields": [],
        }
        for f in range(rng.randint(0 if rng.random() < 0.05 else 1, 3)):
            ndim = rng.randint(1, 3)
            shape = [rng.choice([1, 2, 3, 4, 6, 8]) for _ in range(ndim)]
            field = {"id": "layer.%d.%s" % (rng.randint(0, 3), rng.choice(["k", "v", "conv", "ssm", "latent_kv"])) + str(f),
                     "shape": shape, "dtype": rng.choice(["bfloat16", "uint8", "float32"]), "axis": None, "parts": ()}
            if rng.random() < 0.75:
                axis = rng.randrange(ndim)
                field["axis"] = axis
                if rng.random() < 0.25:
                    k = rng.randint(2, 3)
                    unit = rng.choice([1, 2, 4, 8])
                    field["parts"] = tuple(unit * rng.choice([1, 2, 3, 4]) for _ in range(k))
                    shape[axis] = sum(field["parts"])
                else:
                    shape[axis] = rng.choice([1, 2, 3, 4, 6, 8, 12, 16])
            group["fields"].append(field)
        groups.append(group)
    return {"prefix": rng.choice([1, 2, 4]), "groups": groups}


def mutated(rng, model):
    import copy

    m = copy.deepcopy(model)
    g = rng.choice(m["groups"])
    what = rng.randrange(7)
    if what == 0:
        m["prefix"] *= 2
    elif what == 1:
        g["rows"] += 1
    elif what == 2:
        g["window"] = 32 if g["window"] != 32 else 64
    elif what == 3 and g["fields"]:
        f = rng.choice(g["fields"])
        f["dtype"] = "float16" if f["dtype"] != "float16" else "int8"
    elif what == 4 and g["fields"]:
        f = rng.choice(g["fields"])
        if f["axis"] is not None and not f["parts"]:
            f["shape"][f["axis"]] *= 2
        else:
            f["shape"][-1] += 1
    elif what == 5 and g["fields"]:
        g["fields"].pop(rng.randrange(len(g["fields"])))
    else:
        g["family"] = "state" if g["family"] == "history" else "history"
    return m


def build(proto, plan, spec, model, tp):
    """The contract of one rank of a TP-tp fleet of the model."""
    plan_groups, planes, fields, specs, transfer = [], [], [], [], []
    seen = set()
    for g in model["groups"]:
        gid = g["id"]
        if gid in seen:
            continue
        seen.add(gid)
        window = g["window"] if g["retention"] == "sliding_window" else None
        if g["retention"] == "sliding_window" and window is None:
            window = 64
        specs.append(spec.CacheGroupSpec(
            group_id=gid, retention=g["retention"], rows_per_page=g["rows"], entry_stride_tokens=1,
            sliding_window_tokens=window, family=g["family"],
            transfer_policy="latest_snapshot" if g["family"] == "state" and g["retention"] == "full_history" else "full_suffix"))
        plan_groups.append(plan.CacheGroupLayout(group_id=gid, cache_blocks_per_lcm_block=1, page_count=8))
        for f in g["fields"]:
            shape = list(f["shape"])
            if f["axis"] is not None:
                if f["parts"]:
                    distinct = min(tp, min(f["parts"]))
                    while any(p % distinct for p in f["parts"]):
                        distinct -= 1
                    shape[f["axis"]] = sum(f["parts"]) // distinct
                else:
                    shape[f["axis"]] = max(f["shape"][f["axis"]] // tp, 1)
                transfer.append(proto.CacheFieldTransferSpec(f["id"], proto.CacheFieldPartition(f["axis"], f["shape"][f["axis"]], f["parts"])))
            pid = "p.%s.%s" % (gid, f["id"])
            planes.append(plan.CachePlaneLayout(plane_id=pid, bytes_per_lcm_block=4096, arena_offset_bytes=len(planes) * 4096 * 9))
            fields.append(plan.CacheFieldLayout(group_id=gid, field_id=f["id"], plane_id=pid, shape=tuple(shape), dtype=f["dtype"],
                                                field_offset_bytes=0, page_stride_bytes=4096))
    return proto.CacheTransferContract(
        plan=plan.CacheMemoryPlan(prefix_granularity=model["prefix"], lcm_block_bytes=4096, num_lcm_blocks=7,
                                  groups=tuple(plan_groups), planes=tuple(planes), fields=tuple(fields)),
        group_specs=tuple(specs), transfer_schema=proto.CacheTransferSchema(tuple(transfer)))
