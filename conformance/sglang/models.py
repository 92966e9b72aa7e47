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

"""Public models' attention geometry, from each model's Hugging Face
config.json (the fields named beside each number).

kind: gqa (dense attention), mla (DeepSeek's latent attention: SGLang's
is_mla_backend), swa (hybrid sliding-window: SGLang's SWA pool, a SWA
state component), mamba (hybrid linear attention: SGLang's
HybridLinearKVPool, a MAMBA state component). stateTypes are the state
components SGLang's setup_state_kv_args gives such a pool.
"""

MODELS = [
    # meta-llama/Meta-Llama-3-8B-Instruct: num_attention_heads 32,
    # num_key_value_heads 8, num_hidden_layers 32, head_dim 4096/32.
    dict(
        name="meta-llama/Meta-Llama-3-8B-Instruct",
        kind="gqa",
        heads=32,
        kvHeads=8,
        layers=32,
        headDim=128,
        stateTypes=[],
    ),
    # meta-llama/Meta-Llama-3-70B-Instruct: 64 heads, 8 KV heads, 80 layers.
    dict(
        name="meta-llama/Meta-Llama-3-70B-Instruct",
        kind="gqa",
        heads=64,
        kvHeads=8,
        layers=80,
        headDim=128,
        stateTypes=[],
    ),
    # Qwen/Qwen3-8B: 32 heads, 8 KV heads, 36 layers, head_dim 128.
    dict(
        name="Qwen/Qwen3-8B",
        kind="gqa",
        heads=32,
        kvHeads=8,
        layers=36,
        headDim=128,
        stateTypes=[],
    ),
    # Qwen/Qwen3-30B-A3B: 32 heads, 4 KV heads, 48 layers, head_dim 128.
    dict(
        name="Qwen/Qwen3-30B-A3B",
        kind="gqa",
        heads=32,
        kvHeads=4,
        layers=48,
        headDim=128,
        stateTypes=[],
    ),
    # Qwen/Qwen2.5-1.5B-Instruct: 12 heads, 2 KV heads, 28 layers: the one
    # model here that loads at TP 6 (12 % 6 == 0, 6 % 2 == 0).
    dict(
        name="Qwen/Qwen2.5-1.5B-Instruct",
        kind="gqa",
        heads=12,
        kvHeads=2,
        layers=28,
        headDim=128,
        stateTypes=[],
    ),
    # bigcode/starcoder: n_head 48, multi_query (one KV head), n_layer 40,
    # n_embd 6144: loads at TP 6 and at TP 8 and 16, so a TP 6 prefill
    # meets decode TPs it does not divide.
    dict(
        name="bigcode/starcoder",
        kind="gqa",
        heads=48,
        kvHeads=1,
        layers=40,
        headDim=128,
        stateTypes=[],
    ),
    # deepseek-ai/DeepSeek-V3: MLA (kv_lora_rank 512, qk_rope_head_dim 64),
    # 128 heads, 61 layers.
    dict(
        name="deepseek-ai/DeepSeek-V3",
        kind="mla",
        heads=128,
        kvHeads=1,
        layers=61,
        headDim=576,
        stateTypes=[],
    ),
    # deepseek-ai/DeepSeek-V3.2-Exp: MLA plus the DSA indexer (index_topk
    # 2048): SGLang's DSATokenToKVPool, a DSA state component.
    dict(
        name="deepseek-ai/DeepSeek-V3.2-Exp",
        kind="mla",
        heads=128,
        kvHeads=1,
        layers=61,
        headDim=576,
        stateTypes=["dsa"],
    ),
    # openai/gpt-oss-120b: 64 heads, 8 KV heads, 36 layers, head_dim 64,
    # sliding_window 128 on alternating layer_types.
    dict(
        name="openai/gpt-oss-120b",
        kind="swa",
        heads=64,
        kvHeads=8,
        layers=36,
        headDim=64,
        stateTypes=["swa"],
    ),
    # Qwen/Qwen3-Next-80B-A3B-Instruct: 16 heads, 2 KV heads, head_dim 256,
    # 48 layers with full_attention_interval 4; linear attention (Gated
    # DeltaNet) linear_num_key_heads 16, linear_num_value_heads 32.
    dict(
        name="Qwen/Qwen3-Next-80B-A3B-Instruct",
        kind="mamba",
        heads=16,
        kvHeads=2,
        layers=48,
        headDim=256,
        stateTypes=["mamba"],
        linearHeads=(16, 32),
    ),
]


# Common public models beside the ones above, so that a held-out set of
# their pairs meets no model the sample has not. SGLang's verdict reads of
# a model only whether it is MLA and which state components its pool
# ships; the kind follows SGLang's own tests: MLA by architecture
# (model_config.py's MLA list), a SWA state only for the architectures of
# is_hybrid_swa_model (Llama 4 and gpt-oss here, not Gemma 2/3, whose
# sliding window is a mask over a full pool).
MODELS += [
    # meta-llama/Llama-3.1-8B-Instruct: 32 heads, 8 KV heads, 32 layers.
    dict(name="meta-llama/Llama-3.1-8B-Instruct", kind="gqa", heads=32, kvHeads=8, layers=32,
         headDim=128, stateTypes=[]),
    # meta-llama/Llama-3.1-70B-Instruct: 64 heads, 8 KV heads, 80 layers.
    dict(name="meta-llama/Llama-3.1-70B-Instruct", kind="gqa", heads=64, kvHeads=8, layers=80,
         headDim=128, stateTypes=[]),
    # Qwen/Qwen2.5-72B-Instruct: 64 heads, 8 KV heads, 80 layers.
    dict(name="Qwen/Qwen2.5-72B-Instruct", kind="gqa", heads=64, kvHeads=8, layers=80,
         headDim=128, stateTypes=[]),
    # mistralai/Mixtral-8x7B-Instruct-v0.1: 32 heads, 8 KV heads, 32 layers.
    dict(name="mistralai/Mixtral-8x7B-Instruct-v0.1", kind="gqa", heads=32, kvHeads=8, layers=32,
         headDim=128, stateTypes=[]),
    # google/gemma-3-27b-it (text_config): 32 heads, 16 KV heads of 128,
    # 62 layers, sliding on five of six: a full pool in SGLang.
    dict(name="google/gemma-3-27b-it", kind="gqa", heads=32, kvHeads=16, layers=62,
         headDim=128, stateTypes=[]),
    # google/gemma-2-27b-it: 32 heads, 16 KV heads of 128, 46 layers.
    dict(name="google/gemma-2-27b-it", kind="gqa", heads=32, kvHeads=16, layers=46,
         headDim=128, stateTypes=[]),
    # zai-org/GLM-4.5 (Glm4MoeForCausalLM): 96 heads, 8 KV heads, 92 layers.
    dict(name="zai-org/GLM-4.5", kind="gqa", heads=96, kvHeads=8, layers=92,
         headDim=128, stateTypes=[]),
    # moonshotai/Kimi-K2-Instruct (DeepseekV3ForCausalLM): MLA, 64 heads, 61 layers.
    dict(name="moonshotai/Kimi-K2-Instruct", kind="mla", heads=64, kvHeads=1, layers=61,
         headDim=576, stateTypes=[]),
    # openai/gpt-oss-20b: 64 heads, 8 KV heads of 64, 24 layers alternating.
    dict(name="openai/gpt-oss-20b", kind="swa", heads=64, kvHeads=8, layers=24,
         headDim=64, stateTypes=["swa"]),
    # meta-llama/Llama-4-Scout-17B-16E-Instruct (text_config): 40 heads, 8
    # KV heads, 48 layers, chunked attention on three of four: a hybrid
    # SWA pool in SGLang.
    dict(name="meta-llama/Llama-4-Scout-17B-16E-Instruct", kind="swa", heads=40, kvHeads=8,
         layers=48, headDim=128, stateTypes=["swa"]),
    # nvidia/NVIDIA-Nemotron-Nano-9B-v2 (NemotronHForCausalLM): 40 heads,
    # 8 KV heads, 56 layers of which hybrid_override_pattern makes 4
    # attention and 27 Mamba2 (mamba_num_heads 128).
    dict(name="nvidia/NVIDIA-Nemotron-Nano-9B-v2", kind="mamba", heads=40, kvHeads=8, layers=56,
         headDim=128, stateTypes=["mamba"], linearHeads=(128,)),
]


def loads_at(model, attn_tp):
    """Whether SGLang can load the model with attention TP attn_tp: the
    query heads split evenly, and the KV heads split evenly or replicate a
    whole number of times (QKVParallelLinear's rule; MLA shards heads only).
    pdtopo's reading of SGLang's linear layers, not run here: cases outside
    it are not pairs and are not generated."""
    if model["heads"] % attn_tp:
        return False
    if model["kind"] == "mla":
        return True
    kv = model["kvHeads"]
    if attn_tp >= kv and attn_tp % kv:
        return False
    if attn_tp < kv and kv % attn_tp:
        return False
    if "linearHeads" in model:
        return all(h % attn_tp == 0 for h in model["linearHeads"])
    return True
