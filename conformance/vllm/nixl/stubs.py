# Copyright 2026 The pdtopo Authors. Licensed under the Apache License 2.0.
"""Stand-ins for what vLLM's NIXL rule modules import but do not decide with.

vLLM's connector modules import torch, msgspec, the NIXL wrapper, the
distributed state, the platform, attention backends and the KV-cache spec
classes. None of those decide whether a prefill/decode pair is accepted: the
rules live in TransferTopology (kv_connector/utils.py), compute_tp_mapping
(nixl/tp_mapping.py), compute_nixl_compatibility_hash (nixl/metadata.py),
KVCacheLayout (v1/kv_cache_layout.py) and the handshake methods of
NixlBaseConnectorWorker (nixl/base_worker.py). Those are loaded from a vLLM
source tree by load_vllm(); everything else they import is a small module
written here, so the rule code runs unchanged on a machine without torch,
CUDA or NIXL. Nothing of vLLM's code is in this file.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import logging
import os
import re
import sys
import types

# The vLLM modules that carry the rules, loaded from the source tree, in
# import order (each imports only stand-ins and the ones before it).
REAL_MODULES = (
    "vllm/v1/kv_cache_layout.py",
    "vllm/backends/distributed/kv_transfer/kv_connector/utils.py",
    "vllm/backends/distributed/kv_transfer/kv_connector/v1/nixl/tp_mapping.py",
    "vllm/backends/distributed/kv_transfer/kv_connector/v1/nixl/metadata.py",
    "vllm/backends/distributed/kv_transfer/kv_connector/v1/nixl/utils.py",
    "vllm/backends/distributed/kv_transfer/kv_connector/v1/nixl/base_worker.py",
)

# The version string both roles report in verdicts.py: the hash compares it,
# and two real engines differ whenever their builds do (see
# docs/engines/vllm.md); versions.py sets it per role.
STUB_VLLM_VERSION = "0.0.0+pdtopo-stub"

# The factors compute_nixl_compatibility_hash hashed, in call order: the
# driver reads them back to say which factor two roles disagree on.
hashed_factors: list[dict] = []


def _module(name: str, **attrs) -> types.ModuleType:
    mod = sys.modules.get(name)
    if mod is None:
        mod = types.ModuleType(name)
        mod.__path__ = []  # every stand-in may be a package
        sys.modules[name] = mod
        parent, _, child = name.rpartition(".")
        if parent:
            setattr(_module(parent), child, mod)
    for k, v in attrs.items():
        setattr(mod, k, v)
    return mod


class _Anything:
    """A class usable as a base, an annotation or a value nobody calls."""

    def __init__(self, *args, **kwargs):
        pass


def _torch() -> None:
    class Tensor(_Anything):
        pass

    class Size(tuple):
        pass

    class device(_Anything):  # noqa: N801 - torch's name
        pass

    class dtype(_Anything):  # noqa: N801 - torch's name
        pass

    _module("torch", Tensor=Tensor, Size=Size, device=device, dtype=dtype,
            long="torch.int64", int64="torch.int64",
            accelerator=types.SimpleNamespace(synchronize=lambda: None))


def _third_party() -> None:
    _torch()
    # msgspec is used only inside the socket handshake, which the driver
    # does not run; `regex` is used for a request-id pattern `re` compiles.
    _module("msgspec", msgpack=types.SimpleNamespace(), DecodeError=Exception,
            ValidationError=Exception)
    sys.modules.setdefault("regex", re)
    try:
        import zmq  # noqa: F401 - pyzmq when present
    except ImportError:
        _module("zmq", REQ=3, ROUTER=6, RCVTIMEO=27, Socket=_Anything, Context=_Anything)


def _logger(name: str) -> logging.Logger:
    log = logging.getLogger(name)
    # vLLM's logger has the *_once variants; the rules log through them.
    log.info_once = log.info  # type: ignore[attr-defined]
    log.warning_once = log.warning  # type: ignore[attr-defined]
    log.debug_once = log.debug  # type: ignore[attr-defined]
    return log


def hash_factors(factors: dict) -> str:
    """Stand-in of vllm.foundation.config.utils.hash_factors: a SHA-256 of
    the factors. The engine compares two hashes for equality only, so any
    injective digest of the same factors gives the same verdicts."""
    hashed_factors.append(dict(factors))
    blob = json.dumps(factors, sort_keys=True, default=str).encode()
    return hashlib.sha256(blob).hexdigest()


class _Platform:
    device_type = "cuda"

    def get_nixl_supported_devices(self) -> dict:
        return {}

    def get_nixl_memory_type(self):
        return None

    def is_rocm(self) -> bool:
        return False

    def set_device(self, device_id: int) -> None:
        pass


class NixlWrapper:
    """Stand-in of the NIXL agent: hands out names and handles, moves nothing."""

    def __init__(self, name: str = "agent", config=None):
        self.name = name
        self._next = 0

    def _handle(self) -> int:
        self._next += 1
        return self._next

    def add_remote_agent(self, agent_metadata: bytes) -> str:
        return agent_metadata.decode() if isinstance(agent_metadata, bytes) else str(agent_metadata)

    def get_xfer_descs(self, blocks_data, memory_type):
        return blocks_data

    def get_reg_descs(self, caches_data, memory_type):
        return caches_data

    def prep_xfer_dlist(self, agent_name, descs) -> int:
        return self._handle()

    def register_memory(self, descs, backends=None) -> None:
        pass

    def get_agent_metadata(self) -> bytes:
        return self.name.encode()


class MambaConvSplitInfo:
    """Stand-in of the conv-state split of ssm_conv_transfer_utils (not in
    the index pdtopo read vLLM from): conv sub-projections of equal size per
    rank, each split by TP, and the SSM temporal state after them. It only
    places descriptors; no rule of the pair reads it."""

    def __init__(self, conv_sub_bytes: list[int], ssm_bytes: int):
        self._subs = list(conv_sub_bytes)
        offsets, at = [], 0
        for size in self._subs:
            offsets.append((at, size))
            at += size
        self.local_conv_offsets = offsets
        self.ssm_sizes = (at, ssm_bytes)

    def remote_conv_offsets(self, local_offset: int, tp_ratio: int) -> list[tuple[int, int]]:
        if tp_ratio >= 1:  # each remote sub-projection holds tp_ratio of ours
            out, at = [], 0
            for size in self._subs:
                out.append((at + local_offset * size, size))
                at += size * tp_ratio
            return out
        ratio = -tp_ratio  # each remote sub-projection is a 1/ratio slice of ours
        out, at = [], 0
        for size in self._subs:
            out.append((at, size // ratio))
            at += size // ratio
        return out


def derive_mamba_conv_split(mamba_spec, tp_size: int) -> MambaConvSplitInfo:
    raise NotImplementedError("the driver builds MambaConvSplitInfo from the model geometry")


def _spec_classes() -> dict:
    """Stand-ins of vllm.v1.kv_cache_interface's spec classes: the rules ask
    only which kind a group is (issubclass/isinstance), so the hierarchy is
    vLLM's (MLA and full attention are attention specs, Mamba is not) and
    the classes are empty."""

    class KVCacheSpec:
        pass

    class AttentionSpec(KVCacheSpec):
        pass

    class FullAttentionSpec(AttentionSpec):
        pass

    class MLAAttentionSpec(FullAttentionSpec):
        pass

    class SlidingWindowSpec(AttentionSpec):
        pass

    class SlidingWindowMLASpec(SlidingWindowSpec):
        pass

    class CircularBufferSpec(AttentionSpec):
        pass

    class MambaSpec(KVCacheSpec):
        tp_replicated = False

    class UniformTypeKVCacheSpecs(KVCacheSpec):
        def __init__(self, kv_cache_specs=None):
            self.kv_cache_specs = kv_cache_specs or {}

    def iter_layer_specs(spec):
        if isinstance(spec, UniformTypeKVCacheSpecs):
            return iter(spec.kv_cache_specs.values())
        return iter((spec,))

    return {c.__name__: c for c in (
        KVCacheSpec, AttentionSpec, FullAttentionSpec, MLAAttentionSpec, SlidingWindowSpec,
        SlidingWindowMLASpec, CircularBufferSpec, MambaSpec, UniformTypeKVCacheSpecs,
    )} | {"iter_layer_specs": iter_layer_specs, "KVCacheConfig": _Anything}


def _vllm_stand_ins() -> None:
    kvc = "vllm.backends.distributed.kv_transfer.kv_connector"
    _module("vllm", __version__=STUB_VLLM_VERSION)
    _module("vllm.foundation.config", VllmConfig=_Anything,
            get_current_vllm_config_or_none=lambda: None,
            get_layers_from_vllm_config=lambda *a, **k: {},
            set_current_vllm_config=contextlib.nullcontext)
    _module("vllm.foundation.config.utils", hash_factors=hash_factors)
    _module("vllm.foundation.observability.logger", init_logger=_logger)
    _module("vllm.foundation.utilities.torch_utils", async_tensor_h2d=lambda *a, **k: None)
    _module("vllm.foundation.utilities.gpu_sync_debug", gpu_sync_allowed=contextlib.nullcontext)
    _module("vllm.foundation.utilities.network_utils",
            make_zmq_path=lambda scheme, host, port: f"{scheme}://{host}:{port}",
            make_zmq_socket=lambda **k: None)
    _module("vllm.backends.platform", current_platform=_Platform())
    _module("vllm.backends.distributed.nixl_utils", NixlWrapper=NixlWrapper, nixl_agent_config=None)
    _module("vllm.backends.distributed.parallel_state",
            get_pcp_group=lambda: types.SimpleNamespace(rank_in_group=0),
            get_tensor_model_parallel_rank=lambda: 0,
            get_tensor_model_parallel_world_size=lambda: 1)
    _module(f"{kvc}.factory", KVConnectorFactory=_Anything)
    _module(f"{kvc}.v1.base", CopyBlocksOp=_Anything, KVConnectorHandshakeMetadata=object,
            KVConnectorMetadata=object)
    _module(f"{kvc}.v1.metrics", KVConnectorStats=_Anything)
    _module(f"{kvc}.v1.nixl.stats", NixlKVConnectorStats=_Anything)
    _module(f"{kvc}.v1.ssm_conv_transfer_utils", MambaConvSplitInfo=MambaConvSplitInfo,
            derive_mamba_conv_split=derive_mamba_conv_split)
    _module("vllm.model_executor.layers.attention_layer_base", AttentionLayerBase=_Anything)
    _module("vllm.v1.attention.backend", AttentionBackend=_Anything, AttentionMetadata=_Anything)
    _module("vllm.v1.outputs", KVConnectorOutput=_Anything, ModelRunnerOutput=_Anything)
    _module("vllm.v1.worker.block_table", BlockTable=_Anything)
    _module("vllm.v1.worker.utils", select_common_block_size=lambda block_size, backends: block_size)


def load_vllm(src: str) -> dict[str, types.ModuleType]:
    """Install the stand-ins, then load REAL_MODULES from the vLLM source
    tree src under their own names; returns them by file path."""
    _third_party()
    _vllm_stand_ins()
    loaded = {}
    for rel in REAL_MODULES:
        path = os.path.join(src, rel)
        if not os.path.isfile(path):
            raise SystemExit(f"{path}: not found (VLLM_SRC must be a vLLM source tree)")
        name = rel[: -len(".py")].replace("/", ".")
        spec = importlib.util.spec_from_file_location(name, path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        parent, _, child = name.rpartition(".")
        setattr(_module(parent), child, mod)
        spec.loader.exec_module(mod)
        loaded[rel] = mod
        if rel == "vllm/v1/kv_cache_layout.py":
            # kv_cache_interface re-exports the real layout enum.
            _module("vllm.v1.kv_cache_interface", KVCacheLayout=mod.KVCacheLayout, **_spec_classes())
    return loaded
