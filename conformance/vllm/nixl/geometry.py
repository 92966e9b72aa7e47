# Copyright 2026 The pdtopo Authors. Licensed under the Apache License 2.0.
"""Public models' KV-cache geometry, and what each TP rank registers.

The numbers are the models' Hugging Face config.json fields. The rank
geometry is what vLLM's register_kv_caches would find on a rank of that
model at that TP, block size and dtype — one NIXL region per attention KV
tensor, K and V packed in one block, the MLA latent as one block, a hybrid
model's Mamba groups sharing the attention tensors — computed here because
register_kv_caches needs real torch tensors. Only the handshake rules run
vLLM's code; this module only feeds them the shapes a real rank would.
"""

from __future__ import annotations

from dataclasses import dataclass

# Bytes per element of a --kv-cache-dtype string, with "auto" the model's
# dtype (every model here is bfloat16).
DTYPE_BYTES = {"auto": 2, "bfloat16": 2, "fp8": 1}


@dataclass(frozen=True)
class Model:
    name: str  # the Hugging Face id, what both roles pass as --model
    kind: str  # "gqa", "mla", "hybrid-swa" (sliding window + full), "hybrid-mamba"
    num_hidden_layers: int
    num_attention_heads: int
    num_kv_heads: int  # config num_key_value_heads (MLA: the engine uses 1)
    head_dim: int
    kv_lora_rank: int = 0  # MLA
    qk_rope_head_dim: int = 0  # MLA
    sliding_window: int = 0
    full_attention_interval: int = 0  # hybrid Mamba: one attention layer in this many
    linear_num_key_heads: int = 0  # hybrid Mamba (Gated DeltaNet)
    linear_num_value_heads: int = 0
    linear_key_head_dim: int = 0
    linear_value_head_dim: int = 0
    linear_conv_kernel_dim: int = 0

    @property
    def use_mla(self) -> bool:
        return self.kind == "mla"

    @property
    def has_mamba(self) -> bool:
        return self.kind == "hybrid-mamba"

    @property
    def total_num_kv_heads(self) -> int:
        # TransferTopology is built with 1 for MLA (register_kv_caches).
        return 1 if self.use_mla else self.num_kv_heads

    @property
    def head_size(self) -> int:
        return self.kv_lora_rank + self.qk_rope_head_dim if self.use_mla else self.head_dim

    @property
    def group_kinds(self) -> tuple[str, ...]:
        """The KV-cache groups' spec class names, as the hybrid manager groups
        layers: full attention alone; sliding window and full attention in
        two groups of equal size; a Mamba hybrid's attention layers in one
        group and its linear layers in groups of the same size."""
        if self.kind == "hybrid-swa":
            return ("FullAttentionSpec", "SlidingWindowSpec")
        if self.kind == "hybrid-mamba":
            return ("FullAttentionSpec",) + ("MambaSpec",) * (self.full_attention_interval - 1)
        if self.kind == "mla":
            return ("MLAAttentionSpec",)
        return ("FullAttentionSpec",)

    @property
    def num_regions(self) -> int:
        """NIXL regions: one per KV tensor. Groups of a hybrid model share
        tensors (one per layer of a group), so a hybrid registers a group's
        layer count."""
        return self.num_hidden_layers // len(self.group_kinds)


MODELS = (
    Model("meta-llama/Meta-Llama-3-8B", "gqa", 32, 32, 8, 128),
    Model("meta-llama/Meta-Llama-3-70B", "gqa", 80, 64, 8, 128),
    Model("Qwen/Qwen3-32B", "gqa", 64, 64, 8, 128),
    Model("Qwen/Qwen3-30B-A3B", "gqa", 48, 32, 4, 128),
    Model("deepseek-ai/DeepSeek-V3", "mla", 61, 128, 128, 128, kv_lora_rank=512, qk_rope_head_dim=64),
    Model("openai/gpt-oss-120b", "hybrid-swa", 36, 64, 8, 64, sliding_window=128),
    Model("Qwen/Qwen3-Next-80B-A3B-Instruct", "hybrid-mamba", 48, 16, 2, 256,
          full_attention_interval=4, linear_num_key_heads=16, linear_num_value_heads=32,
          linear_key_head_dim=128, linear_value_head_dim=128, linear_conv_kernel_dim=4),
)

# Common public models beside them, so that a held-out set of their pairs
# meets no model the sample has not (config.json numbers; text_config for the
# multimodal ones). They enter the seeded sample of the whole grid, not the
# every-TP-pair grid, which keeps the committed file under the repository's
# 1 MiB (a local --sample 4000 covers them well). Llama 4's chunked-local
# layers and Gemma 3's 5:1 sliding pattern are grouped here as one group or
# the two-group hybrid-swa: the region count is the same on both roles, and
# what the rules compare per region does not depend on the grouping.
SAMPLED_MODELS = MODELS + (
    Model("meta-llama/Llama-3.1-70B-Instruct", "gqa", 80, 64, 8, 128),
    Model("mistralai/Mixtral-8x7B-Instruct-v0.1", "gqa", 32, 32, 8, 128),
    Model("zai-org/GLM-4.5", "gqa", 92, 96, 8, 128),
    Model("meta-llama/Llama-4-Scout-17B-16E-Instruct", "gqa", 48, 40, 8, 128),
    Model("google/gemma-3-27b-it", "hybrid-swa", 62, 32, 16, 128, sliding_window=1024),
    Model("moonshotai/Kimi-K2-Instruct", "mla", 61, 64, 64, 128, kv_lora_rank=512, qk_rope_head_dim=64),
    Model("openai/gpt-oss-20b", "hybrid-swa", 24, 64, 8, 64, sliding_window=128),
)


@dataclass(frozen=True)
class RankGeometry:
    block_lens: list[int]
    block_strides: list[int]
    region_is_mla: list[bool]
    base_addrs: list[int]
    conv_sub_bytes: list[int]  # hybrid Mamba: conv sub-projections per rank
    ssm_bytes: int  # hybrid Mamba: SSM temporal state per rank


def rank_geometry(m: Model, tp: int, rank: int, block_size: int, dtype: str, engine: int) -> RankGeometry:
    """What register_kv_caches registers on rank of a role at tp."""
    nbytes = DTYPE_BYTES[dtype]
    if m.use_mla:
        page = block_size * m.head_size * nbytes
    else:
        local_heads = max(1, m.num_kv_heads // tp)  # GQA replication caps at one head
        page = 2 * block_size * local_heads * m.head_dim * nbytes
    regions = m.num_regions
    # Distinct, non-overlapping addresses per engine, rank and region.
    base = [((engine * 64 + rank) << 40) + (i << 32) for i in range(regions)]
    conv_subs, ssm = [], 0
    if m.has_mamba:
        width = m.linear_conv_kernel_dim - 1
        key = m.linear_num_key_heads * m.linear_key_head_dim // tp
        value = m.linear_num_value_heads * m.linear_value_head_dim // tp
        conv_subs = [key * width * nbytes, key * width * nbytes, value * width * nbytes]
        ssm = (m.linear_num_value_heads // tp) * m.linear_key_head_dim * m.linear_value_head_dim * nbytes
    return RankGeometry(
        block_lens=[page] * regions,
        block_strides=[page] * regions,
        region_is_mla=[m.use_mla] * regions,
        base_addrs=base,
        conv_sub_bytes=conv_subs,
        ssm_bytes=ssm,
    )
