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
}
