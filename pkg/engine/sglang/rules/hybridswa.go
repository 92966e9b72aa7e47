/*
Copyright 2026 The pdtopo Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package rules

// hybridSWAArchitectures are the architectures SGLang gives a hybrid
// sliding-window pool (SWAKVPool, whose state ships as a SWA component):
// python/sglang/srt/configs/model_config.py, is_hybrid_swa_model, as the
// code index stores it at 001adf56 (the file is not stored at
// SGLANG_COMMIT; the disaggregation files there name the DeepSeek-V4
// state types, so that list is the one they go with).
//
// It is a list of architectures, not of sliding-window models: Gemma 2
// and 3, Mistral and Qwen with use_sliding_window keep a full-size pool
// (the window is a mask), ship no SWA component, and SGLang serves them
// at different attention TP.
var hybridSWAArchitectures = map[string]bool{
	"Llama4ForConditionalGeneration": true,
	"DeepseekV4ForCausalLM":          true, "DeepseekV4ForCausalLMNextN": true,
	"GptOssForCausalLM":      true,
	"MiMoV2FlashForCausalLM": true, "MiMoV2MTP": true,
	"Step3p5ForCausalLM": true, "Step3p5MTP": true, "Step3p7ForConditionalGeneration": true,
	"Gemma4ForCausalLM": true, "Gemma4ForConditionalGeneration": true, "Gemma4UnifiedForConditionalGeneration": true,
	"LagunaForCausalLM": true,
}

// HybridSWA reports whether SGLang gives a model of these architectures a
// hybrid sliding-window pool; optIn is the text config's is_hybrid_swa,
// which opts any architecture in (--disable-hybrid-swa-memory, which opts
// out, is not modelled: pdtopo has no field for it).
func HybridSWA(architectures []string, optIn bool) bool {
	if optIn {
		return true
	}
	for _, a := range architectures {
		if hybridSWAArchitectures[a] {
			return true
		}
	}
	return false
}
