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

package pair_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pdtopo/pdtopo/cmd/pdtopo/app/cli"
	"github.com/pdtopo/pdtopo/internal/manifest"
	"github.com/pdtopo/pdtopo/test/clitest"
)

// gptOSSConfig is gpt-oss-120b's config.json, the keys that matter: 36
// layers alternating sliding-window (128 tokens) and full attention.
func gptOSSConfig(t *testing.T) string {
	types := make([]string, 36)
	for i := range types {
		types[i] = "full_attention"
		if i%2 == 0 {
			types[i] = "sliding_attention"
		}
	}
	b, err := json.Marshal(map[string]any{"architectures": []string{"GptOssForCausalLM"}, "model_type": "gpt_oss", "hidden_size": 2880,
		"num_attention_heads": 64, "num_key_value_heads": 8, "head_dim": 64, "num_hidden_layers": 36, "layer_types": types,
		"sliding_window": 128, "vocab_size": 201088})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// `pair --engine` writes the engine's PDPair: spec.engine, each role's
// engine settings, and a verdict line by the engine's rules; `plan -f`
// reads the pair back to the same verdict. Expectations are from
// docs/engines/*.md: vLLM prefill TP 4 → decode TP 2 on 8 KV heads reads
// two prefill ranks a decode rank; prefill TP 16 above decode TP 8 and the
// 8 KV heads is refused (rule 3); NHD on one role only is refused (rule 4).
// SGLang refuses gpt-oss (sliding-window pool, not MLA) at prefill TP 1 →
// decode TP 4 (rule 8, llm-d#2433), which needs layer_types kept in the
// pair's hfConfig.
func TestPairEngine(t *testing.T) {
	gptOSS := gptOSSConfig(t)
	for _, c := range []struct {
		name, config string
		args         []string
		code         int
		// verdict is the YAML's verdict line; spec holds lines the YAML has.
		verdict string
		spec    []string
	}{
		{"vllm", llamaConfig, []string{"--engine", "vllm", "--prefill-tp", "4", "--decode-tp", "2", "--tokens-per-page", "16", "--kv-cache-layout", "HND"}, cli.ExitOK,
			"# Compatible: vLLM NixlConnector serves prefill TP 4 → decode TP 2 (block 16 → 16)",
			[]string{"  engine:\n    name: vllm\n", "    kvCacheLayout: HND\n", "    tokensPerPage: 16\n", "  kvCacheDtype: auto\n"}},
		{"vllm replicated", llamaConfig, []string{"--engine", "vllm", "--prefill-tp", "16", "--decode-tp", "8", "--tokens-per-page", "16"}, cli.ExitIncompatible,
			"# INCOMPATIBLE ReplicatedPrefillKV: vLLM: prefill.tensorParallelSize: prefill TP 16 is above both decode TP 8 and the model's 8 KV heads", nil},
		{"vllm layouts", llamaConfig, []string{"--engine", "vllm", "--prefill-tp", "4", "--decode-tp", "2", "--tokens-per-page", "16", "--decode-kv-cache-layout", "NHD"}, cli.ExitIncompatible,
			"# INCOMPATIBLE KVCacheLayoutMismatch: vLLM: decode.kvCacheLayout:", []string{"    kvCacheLayout: NHD\n"}},
		{"sglang", llamaConfig, []string{"--engine", "sglang", "--kv-connector", "nixl", "--prefill-tp", "4", "--decode-tp", "8", "--decode-dp", "2",
			"--tokens-per-page", "64", "--prefill-pp", "2", "--decode-pp", "2"}, cli.ExitOK,
			"# Compatible: SGLang (nixl) serves prefill TP 4 DP 1 → decode TP 8 DP 2 (attention TP 4 → 4, page 64)",
			[]string{"  engine:\n    kvConnector: nixl\n    name: sglang\n", "    pipelineParallelSize: 2\n", "    tokensPerPage: 64\n"}},
		{"sglang gpt-oss", gptOSS, []string{"--engine", "sglang", "--prefill-tp", "1", "--decode-tp", "4", "--tokens-per-page", "1"}, cli.ExitIncompatible,
			"# INCOMPATIBLE HybridStateTPMismatch: SGLang: decode.tensorParallelSize: the model's sliding-window state pool is not MLA", []string{"sliding_window: 128", "- sliding_attention"}},
	} {
		args := append([]string{"pair", "--name", "p", "--hf-config", c.config, "--kv-cache-dtype", "auto"}, c.args...)
		code, out, errOut := clitest.Run(t, "", args...)
		if code != c.code || !strings.HasPrefix(out, c.verdict) {
			t.Errorf("%s: exit %d (want %d), stderr %q, output:\n%s", c.name, code, c.code, errOut, out)
			continue
		}
		for _, want := range c.spec {
			if !strings.Contains(out, want) {
				t.Errorf("%s: the PDPair lacks %q:\n%s", c.name, want, out)
			}
		}
		if strings.Contains(out, "kvBuffers") || strings.Contains(out, "mlaL15Cache") || strings.Contains(out, "\n  tokensPerPage:") {
			t.Errorf("%s: the PDPair holds fields of tokenspeed's:\n%s", c.name, out)
		}
		pair, err := manifest.ReadPDPair(strings.NewReader(out), "")
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if pair.Spec.Engine == nil || string(pair.Spec.Engine.Name) != c.args[1] {
			t.Errorf("%s: spec.engine %+v", c.name, pair.Spec.Engine)
		}
		if code, _, _ := clitest.Run(t, out, "plan", "-f", "-", "-o", "json"); code != c.code {
			t.Errorf("%s: pair exits %d, plan of its PDPair %d", c.name, c.code, code)
		}
	}
}

// --explicit prints derived buffers; vLLM and SGLang derive none.
func TestPairEngineExplicitIsRefused(t *testing.T) {
	code, out, errOut := clitest.Run(t, "", "pair", "--name", "p", "--hf-config", llamaConfig, "--kv-cache-dtype", "auto", "--engine", "vllm",
		"--prefill-tp", "4", "--decode-tp", "2", "--tokens-per-page", "16", "--explicit")
	if code != cli.ExitUsage || out != "" || !strings.Contains(errOut, "engine vllm derives none") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}
