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

"""Byte strings for the contract decoder and the engine's verdict on each.

Every case is a mutation of one small valid contract (a key removed, a key
added, a value of another type, bytes in another encoding, ...), decoded
by the engine's CacheTransferContract.from_wire_bytes. Accepted cases also
record the SHA-256 of the engine's re-encoding (to_wire_bytes)."""

import base64
import copy
import hashlib
import json

MAX = 256 << 10

REPLACEMENTS = [None, True, 0, -1, 2, 1.5, float("nan"), "", "x", [], [2, 1], {}]


def paths(v, prefix=()):
    """Every key path and list index path of a JSON value."""
    if isinstance(v, dict):
        for k, x in v.items():
            yield prefix + (k,)
            yield from paths(x, prefix + (k,))
    elif isinstance(v, list):
        for i, x in enumerate(v):
            yield prefix + (i,)
            yield from paths(x, prefix + (i,))


def at(v, path):
    for p in path[:-1]:
        v = v[p]
    return v


def dumps(v):
    return json.dumps(v, separators=(",", ":")).encode()


def verdict(proto, raw):
    try:
        c = proto.CacheTransferContract.from_wire_bytes(raw)
    except Exception as exc:  # the engine's refusal, whatever its type
        return {"accepted": False, "error": type(exc).__name__}
    try:
        canonical = c.to_wire_bytes()
    except Exception as exc:
        return {"accepted": True, "canonicalError": type(exc).__name__}
    return {"accepted": True, "canonicalSHA256": hashlib.sha256(canonical).hexdigest()}


def case(proto, name, raw):
    """One case: the bytes as text when they are printable UTF-8, else as
    base64; a run of trailing spaces is written as a count."""
    out = {"name": name}
    body = raw.rstrip(b" ")
    if len(raw) - len(body) > 64:
        out["trailingSpaces"] = len(raw) - len(body)
    else:
        body = raw
    try:
        text = body.decode("utf-8")
        if "\x00" in text:
            raise UnicodeError
        out["text"] = text
    except UnicodeError:
        out["base64"] = base64.b64encode(body).decode("ascii")
    out.update(verdict(proto, raw))
    return out


def nested(raw, depth):
    """The contract with an extra key holding arrays nested so that the
    whole document nests depth levels."""
    return b'{"extra":' + b"[" * (depth - 1) + b"]" * (depth - 1) + b"," + raw[1:]


def deepest_nesting(proto, raw):
    """The deepest nesting from_wire_bytes decodes from this call depth
    (Python's recursion limit counts the caller's frames too)."""
    lo, hi = 2, 5000
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if verdict(proto, nested(raw, mid))["accepted"]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def decode_cases(proto, contract):
    base = json.loads(contract.to_wire_bytes())
    raw = dumps(base)
    cases = [case(proto, "base", raw)]

    def mutated(name, fn):
        v = copy.deepcopy(base)
        fn(v)
        cases.append(case(proto, name, dumps(v)))

    for path in list(paths(base)):
        label = ".".join(str(p) for p in path)
        parent = at(base, path)
        if isinstance(parent, dict):
            mutated("delete " + label, lambda v, p=path: at(v, p).pop(p[-1]))
        else:
            mutated("drop " + label, lambda v, p=path: at(v, p).pop(p[-1]))
        for r in REPLACEMENTS:
            mutated("set %s=%s" % (label, json.dumps(r)), lambda v, p=path, r=r: at(v, p).__setitem__(p[-1], copy.deepcopy(r)))
        if isinstance(parent[path[-1]], dict):
            mutated("unknown key in " + label, lambda v, p=path: at(v, p)[p[-1]].__setitem__("extra", 1))
    mutated("unknown top-level key", lambda v: v.__setitem__("extra", {"anything": [1, 2]}))

    # Targeted: group spec shapes, partitions, ids.
    def spec0(v):
        return v["group_specs"][0]

    def part0(v):
        return v["transfer_schema"]["fields"][0]["partition"]

    mutated("checkpoint state group", lambda v: spec0(v).update(rows_per_page=None, entry_stride_tokens=None, family="state", checkpoint_granularity=4))
    mutated("checkpoint with rows", lambda v: spec0(v).update(family="state", checkpoint_granularity=4))
    mutated("checkpoint history family", lambda v: spec0(v).update(rows_per_page=None, entry_stride_tokens=None, checkpoint_granularity=4))
    mutated("checkpoint zero", lambda v: spec0(v).update(rows_per_page=None, entry_stride_tokens=None, family="state", checkpoint_granularity=0))
    mutated("rows only", lambda v: spec0(v).pop("entry_stride_tokens"))
    mutated("parts valid", lambda v: part0(v).update(global_parts=[1, 1]))
    mutated("parts one", lambda v: part0(v).update(global_parts=[2]))
    mutated("parts sum", lambda v: part0(v).update(global_parts=[1, 2]))
    mutated("parts seventeen", lambda v: part0(v).update(global_extent=34, global_parts=[2] * 17))
    mutated("parts string", lambda v: part0(v).update(global_parts="ab"))
    mutated("parts empty string", lambda v: part0(v).update(global_parts=""))
    mutated("parts empty object", lambda v: part0(v).update(global_parts={}))
    mutated("axis out of range", lambda v: part0(v).update(axis=3))
    mutated("axis negative", lambda v: part0(v).update(axis=-1))
    mutated("extent below local", lambda v: part0(v).update(global_extent=0))
    mutated("extent not divisible", lambda v: part0(v).update(global_extent=3))
    mutated("extent big", lambda v: part0(v).update(global_extent=2 ** 80))
    mutated("local float", lambda v: v["plan"]["fields"][0]["shape"].__setitem__(1, 1.0))
    mutated("local float nan", lambda v: v["plan"]["fields"][0]["shape"].__setitem__(1, float("nan")))
    mutated("local negative", lambda v: v["plan"]["fields"][0]["shape"].__setitem__(1, -1))
    mutated("local zero", lambda v: v["plan"]["fields"][0]["shape"].__setitem__(1, 0))
    mutated("local bool", lambda v: v["plan"]["fields"][0]["shape"].__setitem__(1, True))
    mutated("shape string", lambda v: v["plan"]["fields"][1].update(shape="abc"))
    mutated("shape object", lambda v: v["plan"]["fields"][1].update(shape={"a": 1}))
    mutated("duplicate transfer field", lambda v: v["transfer_schema"]["fields"].append(copy.deepcopy(v["transfer_schema"]["fields"][0])))
    mutated("unknown transfer field", lambda v: v["transfer_schema"]["fields"][0].update(field_id="layer.9.k"))
    mutated("transfer ids 1 and 1.0", lambda v: [v["plan"]["fields"][0].update(field_id=1), v["plan"]["fields"][1].update(field_id=2),
                                                  v["transfer_schema"]["fields"][0].update(field_id=1), v["transfer_schema"]["fields"][1].update(field_id=1.0)])
    mutated("duplicate plan field id", lambda v: v["plan"]["fields"][1].update(field_id=v["plan"]["fields"][0]["field_id"]))
    mutated("non-ascii ids", lambda v: v["plan"]["groups"][0].update(group_id="gr\u00fcppe \U0001f600"))
    mutated("dtype fp8", lambda v: v["plan"]["fields"][0].update(dtype="float8_e4m3fn"))
    mutated("dtype torch prefix", lambda v: v["plan"]["fields"][0].update(dtype="torch.bfloat16"))
    mutated("floats everywhere", lambda v: v["plan"].update(prefix_granularity=1e16, lcm_block_bytes=1e-5, num_lcm_blocks=-0.0))

    # Bytes: size, encodings, JSON as Python reads it.
    text = raw.decode()
    deepest = deepest_nesting(proto, raw)
    for name, b in [
        ("empty", b""),
        ("not an object", b"[1, 2]"),
        ("whitespace around", b" \t\r\n" + raw + b"\n "),
        ("form feed after", raw + b"\x0c"),
        ("trailing data", raw + b"{}"),
        ("exactly the limit", raw + b" " * (MAX - len(raw))),
        ("one past the limit", raw + b" " * (MAX - len(raw) + 1)),
        ("utf-8 bom", b"\xef\xbb\xbf" + raw),
        ("two utf-8 boms", b"\xef\xbb\xbf\xef\xbb\xbf" + raw),
        ("utf-16 bom", text.encode("utf-16")),
        ("utf-16-le", text.encode("utf-16-le")),
        ("utf-16-be", text.encode("utf-16-be")),
        ("utf-32 bom", text.encode("utf-32")),
        ("utf-32-le", text.encode("utf-32-le")),
        ("utf-32-be", text.encode("utf-32-be")),
        ("utf-16 odd length", text.encode("utf-16-le") + b"\x00"),
        ("invalid utf-8", raw.replace(b'"k"', b'"\xff"', 1) if b'"k"' in raw else raw[:-1] + b"\xff}"),
        ("overlong utf-8", raw.replace(b'"full_attention"', b'"\xc0\xaf"')),
        ("encoded surrogate", raw.replace(b'"full_attention"', b'"\xed\xa0\x80"')),
        ("escaped lone surrogate", raw.replace(b'"full_attention"', b'"\\ud800x"')),
        ("escaped pair", raw.replace(b'"full_attention"', b'"\\ud83d\\ude00"')),
        ("escaped uppercase hex", raw.replace(b'"full_attention"', b'"\\u00C9"')),
        ("bad escape", raw.replace(b'"full_attention"', b'"\\x41"')),
        ("control character", raw.replace(b'"full_attention"', b'"a\tb"')),
        ("NaN", raw.replace(b'"prefix_granularity":2', b'"prefix_granularity":NaN')),
        ("Infinity", raw.replace(b'"prefix_granularity":2', b'"prefix_granularity":-Infinity')),
        ("nan lowercase", raw.replace(b'"prefix_granularity":2', b'"prefix_granularity":nan')),
        ("leading zero", raw.replace(b'"prefix_granularity":2', b'"prefix_granularity":02')),
        ("exponent", raw.replace(b'"prefix_granularity":2', b'"prefix_granularity":2e0')),
        ("bare exponent", raw.replace(b'"prefix_granularity":2', b'"prefix_granularity":2e')),
        ("fraction without digits", raw.replace(b'"prefix_granularity":2', b'"prefix_granularity":2.')),
        ("huge float", raw.replace(b'"prefix_granularity":2', b'"prefix_granularity":1e400')),
        ("int of 4300 digits", raw.replace(b'"prefix_granularity":2', b'"prefix_granularity":' + b"9" * 4300)),
        ("int of 4301 digits", raw.replace(b'"prefix_granularity":2', b'"prefix_granularity":' + b"9" * 4301)),
        ("negative int of 4300 digits", raw.replace(b'"prefix_granularity":2', b'"prefix_granularity":-' + b"9" * 4300)),
        ("duplicate key, last wins", raw.replace(b'"prefix_granularity":2', b'"prefix_granularity":"x","prefix_granularity":2')),
        ("duplicate key, last bad", raw.replace(b'"num_lcm_blocks":7', b'"num_lcm_blocks":7,"groups":5')),
        ("nested %d deep (the deepest the engine decodes here)" % deepest, nested(raw, deepest)),
        ("nested %d deep" % (deepest + 1), nested(raw, deepest + 1)),
        ("trailing comma", raw[:-1] + b",}"),
        ("single quotes", raw.replace(b'"plan"', b"'plan'")),
    ]:
        cases.append(case(proto, name, b))
    return cases
