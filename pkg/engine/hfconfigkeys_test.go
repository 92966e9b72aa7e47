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

package engine_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/pdtopo/pdtopo/pkg/engine"
	"github.com/pdtopo/pdtopo/pkg/modelgeom"
)

// configRead is how pkg/engine and the engines' adapters read a config key.
var configRead = regexp.MustCompile(`\b(?:Int|Has|Bool|str|int0)\("([A-Za-z0-9_]+)"\)|text\["([A-Za-z0-9_]+)"\]`)

// Every key the engines' rules read through HFConfig is in HFConfigKeys or
// among modelgeom's: else `pdtopo pair --engine` would drop it from the
// PDPair's inline config and the operator would judge another model.
func TestHFConfigKeysNameEveryKeyRead(t *testing.T) {
	known := append(append([]string{"architectures", "model_type", "text_config"}, modelgeom.ConfigKeys()...), engine.HFConfigKeys...)
	read := 0
	for _, dir := range []string{".", "vllm", "sglang"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range configRead.FindAllStringSubmatch(string(src), -1) {
				key := m[1] + m[2]
				read++
				if !slices.Contains(known, key) {
					t.Errorf("%s reads config key %q, which engine.HFConfigKeys does not name", f, key)
				}
			}
		}
	}
	if read < 10 {
		t.Errorf("found %d config reads; the pattern no longer matches how HFConfig is read", read)
	}
}

// Minimal keeps the keys asked for, also inside text_config.
func TestMinimalKeepsTheEnginesKeys(t *testing.T) {
	config := `{"architectures":["GptOssForCausalLM"],"model_type":"gpt_oss","num_attention_heads":64,"num_key_value_heads":8,"head_dim":64,` +
		`"num_hidden_layers":2,"sliding_window":128,"layer_types":["sliding_attention","full_attention"],"vocab_size":201088}`
	min, err := modelgeom.Minimal([]byte(config), engine.HFConfigKeys...)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"sliding_window":128`, `"layer_types":["sliding_attention","full_attention"]`} {
		if !strings.Contains(string(min), want) {
			t.Errorf("Minimal dropped %s: %s", want, min)
		}
	}
	if strings.Contains(string(min), "vocab_size") {
		t.Errorf("Minimal kept vocab_size: %s", min)
	}
}
