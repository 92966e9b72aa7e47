# Contract pairs built with tokenspeed's own cache-recipe pipeline
# (spec.group -> plan.pack -> CacheLayout.bind -> build_cache_transfer_schema
# -> CacheTransferContract). Imported by vectors.py and fleet.py with the
# tokenspeed copy of tokenspeed-env.sh on sys.path; pdtopo's own code.
from dataclasses import dataclass, field
from types import SimpleNamespace

from tokenspeed.runtime.layers.attention.kv_cache.recipes import plan, spec
from tokenspeed.runtime.layers.attention.kv_cache.recipes.transfer import (
    build_cache_transfer_schema,
)
from tokenspeed.runtime.pd.cache_protocol import CacheTransferContract


@dataclass(frozen=True)
class Model:
    """The attention structure a contract is derived from."""

    layer_types: tuple
    kv_heads: int = 8
    head_dim: int = 128
    dtype: str = "bfloat16"
    page: int = 16
    window: int | None = None
    mla_latent: int = 0  # > 0: MLA, one replicated latent field of this width
    # Qwen3.5-like gated-delta state (linear_attention layers).
    linear_key_heads: int = 4
    linear_key_dim: int = 32
    linear_value_heads: int = 8
    linear_value_dim: int = 32
    conv_kernel: int = 4


@dataclass(frozen=True)
class Pair:
    name: str
    about: str
    model: Model
    prefill_tp: int
    decode_tp: int
    prefill_dp: int = 1
    prefill_blocks: int = 47
    decode_blocks: int = 63
    # (prefix_len, prompt_len) of the manifests generated for the pair.
    prompts: tuple = field(default_factory=tuple)


def _text_config(m: Model):
    return SimpleNamespace(
        linear_key_head_dim=m.linear_key_dim,
        linear_num_key_heads=m.linear_key_heads,
        linear_value_head_dim=m.linear_value_dim,
        linear_num_value_heads=m.linear_value_heads,
    )


def _fields(m: Model, tp: int):
    local_heads = max(m.kv_heads // tp, 1)

    def fields_for_layer(layer_id, group_id, occurrence):
        kind = m.layer_types[layer_id]
        if kind == spec.LINEAR_ATTENTION:
            key_width = m.linear_key_dim * m.linear_key_heads
            conv_dim = (2 * key_width + m.linear_value_dim * m.linear_value_heads) // tp
            return (
                plan.CacheFieldSpec(
                    f"layer.{layer_id}.ssm",
                    f"{group_id}.{occurrence}.ssm",
                    (m.linear_value_heads // tp, m.linear_value_dim, m.linear_key_dim),
                    "float32",
                ),
                plan.CacheFieldSpec(
                    f"layer.{layer_id}.conv",
                    f"{group_id}.{occurrence}.conv",
                    (conv_dim, m.conv_kernel - 1),
                    m.dtype,
                    exact_page_stride=False,
                ),
            )
        if m.mla_latent:
            return (
                plan.CacheFieldSpec(
                    f"layer.{layer_id}.latent_kv",
                    f"slot.{occurrence}",
                    (m.page, 1, m.mla_latent),
                    m.dtype,
                ),
            )
        shape = (m.page, local_heads, m.head_dim)
        return (
            plan.CacheFieldSpec(f"layer.{layer_id}.k", f"{group_id}.{occurrence}.k", shape, m.dtype),
            plan.CacheFieldSpec(f"layer.{layer_id}.v", f"{group_id}.{occurrence}.v", shape, m.dtype),
        )

    return fields_for_layer


def contract(m: Model, tp: int, blocks: int) -> CacheTransferContract:
    """One rank's contract of a TP-`tp` instance of model m."""
    types = m.layer_types
    if any(t == spec.LINEAR_ATTENTION for t in types):
        group_ids = spec.split_recurrent_state_groups(types)
    else:
        group_ids = spec.layer_group_ids(layer_types=types, sliding_window_tokens=m.window)
    groups = spec.group(
        layer_types=types,
        group_ids=group_ids,
        sliding_window_tokens=m.window,
        prefix_granularity=m.page,
        fields_for_layer=_fields(m, tp),
        pd_disaggregation_enabled=True,
    )
    layout = plan.pack(
        groups,
        prefix_granularity=m.page,
        cache_blocks_per_lcm_block={s.group_id: 1 for s, _ in groups},
        # One block of every group per LCM block, as OrdinaryRecipe packs;
        # small groups then pad their planes, which is allowed here.
        max_padding_fraction=64.0,
    )
    memory_plan = layout.bind(blocks)
    config = SimpleNamespace(
        num_attention_layers=len(types),
        num_key_value_heads=m.kv_heads,
        hf_config=_text_config(m),
        hf_text_config=_text_config(m),
    )
    schema = build_cache_transfer_schema(memory_plan, model_config=config)
    return CacheTransferContract(
        plan=memory_plan,
        group_specs=tuple(s for s, _ in groups),
        transfer_schema=schema,
    )


FULL = spec.FULL_ATTENTION
LINEAR = spec.LINEAR_ATTENTION
SLIDING = "sliding_attention"

PAIRS = (
    Pair(
        "gqa-p4-d2",
        "Llama-like GQA, 8 KV heads: prefill TP 4 (2 heads a rank) to decode TP 2 (4 heads)",
        Model((FULL,) * 4),
        prefill_tp=4,
        decode_tp=2,
        prompts=((0, 1), (0, 37), (32, 100), (16, 17)),
    ),
    Pair(
        "gqa-p2-d4",
        "the same model, prefill TP 2 to decode TP 4: each decode rank takes half a prefill rank's heads",
        Model((FULL,) * 4),
        prefill_tp=2,
        decode_tp=4,
        prompts=((0, 16), (48, 49)),
    ),
    Pair(
        "gqa-replicas-p8-d2",
        "2 KV heads replicated over prefill TP 8; decode TP 2 holds one head a rank: idle prefill ranks are dummies of decode rank 0",
        Model((FULL,) * 2, kv_heads=2),
        prefill_tp=8,
        decode_tp=2,
        prompts=((0, 20), (16, 64)),
    ),
    Pair(
        "gqa-nonmultiple-p3-d2",
        "6 KV heads, prefill TP 3 (2 heads) to decode TP 2 (3 heads): TP sizes that do not divide each other",
        Model((FULL,) * 2, kv_heads=6),
        prefill_tp=3,
        decode_tp=2,
        prompts=((0, 33),),
    ),
    Pair(
        "gqa-dp2-p4-d2",
        "prefill world 4 in 2 DP groups of TP 2, decode TP 2",
        Model((FULL,) * 2),
        prefill_tp=2,
        prefill_dp=2,
        decode_tp=2,
        prompts=((0, 40),),
    ),
    Pair(
        "mla-p2-d4",
        "MLA: one replicated 576-wide latent field a layer, prefill TP 2 to decode TP 4",
        Model((FULL,) * 3, mla_latent=576, page=64),
        prefill_tp=2,
        decode_tp=4,
        prompts=((0, 65), (128, 300)),
    ),
    Pair(
        "hybrid-qwen35-p4-d2",
        "Qwen3.5-like hybrid: three gated-delta state groups (latest_snapshot, partitioned conv and ssm) and full attention, prefill TP 4 to decode TP 2",
        Model((LINEAR, LINEAR, LINEAR, FULL), kv_heads=4, head_dim=64, page=128),
        prefill_tp=4,
        decode_tp=2,
        prompts=((0, 1), (0, 300), (256, 1000)),
    ),
    Pair(
        "sliding-p2-d2",
        "gpt-oss-like alternating sliding (window 128) and full attention, equal TP 2",
        Model((SLIDING, FULL, SLIDING, FULL), kv_heads=8, head_dim=64, page=16, window=128),
        prefill_tp=2,
        decode_tp=2,
        prompts=((0, 100), (0, 500), (256, 500)),
    ),
)
