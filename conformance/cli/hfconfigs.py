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

"""Public models' config.json, as Hugging Face serves them, for the
generators' model names: what a PDPair's spec.model.hfConfig gets when a
user pastes the file. Every key that sizes or shapes the cache is kept
under the name the file uses (n_head for starcoder, no layer_types for
Qwen3-Next, sliding_window with use_sliding_window false for Qwen2.5,
text_config for multimodal models); keys nothing reads (vocab, rope,
MoE sizes) are left out. From each model's config.json on
huggingface.co, as of 2026; a number here that differs from the file is a
fault to fix here, not in pdtopo.
"""

_LLAMA3_8B = {
    "architectures": ["LlamaForCausalLM"], "model_type": "llama", "torch_dtype": "bfloat16",
    "hidden_size": 4096, "intermediate_size": 14336, "num_attention_heads": 32,
    "num_key_value_heads": 8, "num_hidden_layers": 32, "max_position_embeddings": 8192,
}
_LLAMA3_70B = dict(_LLAMA3_8B, hidden_size=8192, intermediate_size=28672,
                   num_attention_heads=64, num_hidden_layers=80)
_DEEPSEEK_V3 = {
    "architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3", "torch_dtype": "bfloat16",
    "hidden_size": 7168, "num_attention_heads": 128, "num_key_value_heads": 128,
    "num_hidden_layers": 61, "kv_lora_rank": 512, "q_lora_rank": 1536, "qk_rope_head_dim": 64,
    "qk_nope_head_dim": 128, "v_head_dim": 128, "num_nextn_predict_layers": 1,
}
_QWEN3_NEXT = {
    "architectures": ["Qwen3NextForCausalLM"], "model_type": "qwen3_next", "torch_dtype": "bfloat16",
    "hidden_size": 2048, "num_attention_heads": 16, "num_key_value_heads": 2, "head_dim": 256,
    "num_hidden_layers": 48, "full_attention_interval": 4, "linear_conv_kernel_dim": 4,
    "linear_key_head_dim": 128, "linear_value_head_dim": 128, "linear_num_key_heads": 16,
    "linear_num_value_heads": 32, "num_experts": 512,
}
_GPT_OSS_120B = {
    "architectures": ["GptOssForCausalLM"], "model_type": "gpt_oss", "torch_dtype": "bfloat16",
    "hidden_size": 2880, "num_attention_heads": 64, "num_key_value_heads": 8, "head_dim": 64,
    "num_hidden_layers": 36, "sliding_window": 128,
    "layer_types": ["sliding_attention", "full_attention"] * 18,
}

HF_CONFIGS = {
    "meta-llama/Meta-Llama-3-8B-Instruct": _LLAMA3_8B,
    "meta-llama/Meta-Llama-3-8B": _LLAMA3_8B,
    "meta-llama/Meta-Llama-3-70B-Instruct": _LLAMA3_70B,
    "meta-llama/Meta-Llama-3-70B": _LLAMA3_70B,
    "Qwen/Qwen3-8B": {
        "architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "torch_dtype": "bfloat16",
        "hidden_size": 4096, "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128,
        "num_hidden_layers": 36, "use_sliding_window": False, "sliding_window": None,
        "max_window_layers": 36,
    },
    "Qwen/Qwen3-32B": {
        "architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "torch_dtype": "bfloat16",
        "hidden_size": 5120, "num_attention_heads": 64, "num_key_value_heads": 8, "head_dim": 128,
        "num_hidden_layers": 64, "use_sliding_window": False, "sliding_window": None,
    },
    "Qwen/Qwen3-30B-A3B": {
        "architectures": ["Qwen3MoeForCausalLM"], "model_type": "qwen3_moe", "torch_dtype": "bfloat16",
        "hidden_size": 2048, "num_attention_heads": 32, "num_key_value_heads": 4, "head_dim": 128,
        "num_hidden_layers": 48, "num_experts": 128, "num_experts_per_tok": 8,
        "use_sliding_window": False, "sliding_window": None,
    },
    "Qwen/Qwen2.5-1.5B-Instruct": {
        "architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "torch_dtype": "bfloat16",
        "hidden_size": 1536, "num_attention_heads": 12, "num_key_value_heads": 2,
        "num_hidden_layers": 28, "use_sliding_window": False, "sliding_window": 32768,
        "max_window_layers": 21,
    },
    "bigcode/starcoder": {
        "architectures": ["GPTBigCodeForCausalLM"], "model_type": "gpt_bigcode", "torch_dtype": "float32",
        "n_embd": 6144, "n_head": 48, "n_layer": 40, "n_positions": 8192, "multi_query": True,
    },
    "deepseek-ai/DeepSeek-V3": _DEEPSEEK_V3,
    "deepseek-ai/DeepSeek-V3.2-Exp": dict(
        _DEEPSEEK_V3, architectures=["DeepseekV32ForCausalLM"], model_type="deepseek_v32",
        index_topk=2048, index_head_dim=128, index_n_heads=64,
    ),
    "openai/gpt-oss-120b": _GPT_OSS_120B,
    "Qwen/Qwen3-Next-80B-A3B-Instruct": _QWEN3_NEXT,
    "meta-llama/Llama-3.1-8B-Instruct": dict(
        _LLAMA3_8B, max_position_embeddings=131072,
        rope_scaling={"rope_type": "llama3", "factor": 8.0},
    ),
    "meta-llama/Llama-3.1-70B-Instruct": dict(
        _LLAMA3_70B, max_position_embeddings=131072,
        rope_scaling={"rope_type": "llama3", "factor": 8.0},
    ),
    "Qwen/Qwen2.5-72B-Instruct": {
        "architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "torch_dtype": "bfloat16",
        "hidden_size": 8192, "num_attention_heads": 64, "num_key_value_heads": 8,
        "num_hidden_layers": 80, "use_sliding_window": False, "sliding_window": 131072,
        "max_window_layers": 70,
    },
    "mistralai/Mixtral-8x7B-Instruct-v0.1": {
        "architectures": ["MixtralForCausalLM"], "model_type": "mixtral", "torch_dtype": "bfloat16",
        "hidden_size": 4096, "num_attention_heads": 32, "num_key_value_heads": 8,
        "num_hidden_layers": 32, "sliding_window": None, "num_local_experts": 8,
    },
    # Multimodal: the text model's keys under text_config.
    "google/gemma-3-27b-it": {
        "architectures": ["Gemma3ForConditionalGeneration"], "model_type": "gemma3",
        "text_config": {
            "model_type": "gemma3_text", "head_dim": 128, "hidden_size": 5376,
            "num_attention_heads": 32, "num_key_value_heads": 16, "num_hidden_layers": 62,
            "sliding_window": 1024, "query_pre_attn_scalar": 168,
        },
    },
    "google/gemma-2-27b-it": {
        "architectures": ["Gemma2ForCausalLM"], "model_type": "gemma2", "torch_dtype": "float32",
        "head_dim": 128, "hidden_size": 4608, "num_attention_heads": 32,
        "num_key_value_heads": 16, "num_hidden_layers": 46, "sliding_window": 4096,
        "query_pre_attn_scalar": 144,
    },
    "zai-org/GLM-4.5": {
        "architectures": ["Glm4MoeForCausalLM"], "model_type": "glm4_moe", "torch_dtype": "bfloat16",
        "head_dim": 128, "hidden_size": 5120, "num_attention_heads": 96, "num_key_value_heads": 8,
        "num_hidden_layers": 92, "num_nextn_predict_layers": 1, "partial_rotary_factor": 0.5,
    },
    "moonshotai/Kimi-K2-Instruct": dict(
        _DEEPSEEK_V3, model_type="kimi_k2", num_attention_heads=64, num_key_value_heads=64,
        num_nextn_predict_layers=0,
    ),
    "openai/gpt-oss-20b": dict(
        _GPT_OSS_120B, num_hidden_layers=24, layer_types=["sliding_attention", "full_attention"] * 12,
    ),
    "meta-llama/Llama-4-Scout-17B-16E-Instruct": {
        "architectures": ["Llama4ForConditionalGeneration"], "model_type": "llama4",
        "text_config": {
            "model_type": "llama4_text", "attention_chunk_size": 8192, "head_dim": 128,
            "hidden_size": 5120, "num_attention_heads": 40, "num_key_value_heads": 8,
            "num_hidden_layers": 48, "no_rope_layers": [], "num_local_experts": 16,
        },
    },
    "nvidia/NVIDIA-Nemotron-Nano-9B-v2": {
        "architectures": ["NemotronHForCausalLM"], "model_type": "nemotron_h", "torch_dtype": "bfloat16",
        "head_dim": 128, "hidden_size": 4480, "num_attention_heads": 40, "num_key_value_heads": 8,
        "num_hidden_layers": 56, "mamba_num_heads": 128, "mamba_head_dim": 80, "ssm_state_size": 128,
        "hybrid_override_pattern": "M-M-M-MM-M-M-M*-M-M-M*-M-M-M-M*-M-M-M-M*-M-MM-M-M-M-M-M-",
    },
}
