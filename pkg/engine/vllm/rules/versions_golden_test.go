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

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	reference "github.com/pdtopo/pdtopo/conformance/vllm"
)

// versionCase is one case of conformance/vllm/testdata/versions.json: two
// roles' compatibility hashes as vLLM's compute_nixl_compatibility_hash
// made them, with vllm.__version__ set per role.
type versionCase struct {
	NumHiddenLayers     int      `json:"numHiddenLayers"`
	NumAttentionHeads   int      `json:"numAttentionHeads"`
	NumKVHeads          int      `json:"numKVHeads"`
	HeadDim             int      `json:"headDim"`
	PrefillTP           int      `json:"prefillTP"`
	DecodeTP            int      `json:"decodeTP"`
	BlockSize           int      `json:"blockSize"`
	PrefillVersion      string   `json:"prefillVLLMVersion"`
	DecodeVersion       string   `json:"decodeVLLMVersion"`
	PrefillKVCacheDtype string   `json:"prefillKVCacheDtype"`
	DecodeKVCacheDtype  string   `json:"decodeKVCacheDtype"`
	HashedVersions      []string `json:"hashedVersions"`
	Accepted            bool     `json:"accepted"`
	DifferingFactors    []string `json:"differingFactors"`
}

// Judge agrees with vLLM's hash on roles of different versions: refused
// exactly when the hashes differ, for the version when the version is among
// the factors that differ (the rule comes first, as the factor does), for
// the dtype otherwise; and the version vLLM hashed is the string the role
// gives, compared as it is.
func TestJudgeMatchesVLLMVersionHashes(t *testing.T) {
	path, err := reference.Reference("VLLM_NIXL_VERSION_VERDICTS")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "..", filepath.FromSlash(path)))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct{ Cases []versionCase }
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	refusedForVersion := 0
	for _, c := range doc.Cases {
		m := Model{NumHiddenLayers: c.NumHiddenLayers, NumAttentionHeads: c.NumAttentionHeads, NumKVHeads: c.NumKVHeads, HeadDim: c.HeadDim}
		v := Judge(Pair{Model: m, KVConnector: Connector,
			Prefill: Role{TP: c.PrefillTP, BlockSize: c.BlockSize, KVCacheDtype: c.PrefillKVCacheDtype, Version: c.PrefillVersion},
			Decode:  Role{TP: c.DecodeTP, BlockSize: c.BlockSize, KVCacheDtype: c.DecodeKVCacheDtype, Version: c.DecodeVersion}})
		name := c.PrefillVersion + "/" + c.PrefillKVCacheDtype + " → " + c.DecodeVersion + "/" + c.DecodeKVCacheDtype
		if !slices.Equal(c.HashedVersions, []string{c.PrefillVersion, c.DecodeVersion}) {
			t.Errorf("%s: vLLM hashed versions %v", name, c.HashedVersions)
		}
		if v.Compatible() != c.Accepted {
			t.Errorf("%s: pdtopo accepted %v, vLLM %v (factors that differ: %v)", name, v.Compatible(), c.Accepted, c.DifferingFactors)
			continue
		}
		if c.Accepted {
			continue
		}
		want := ReasonKVCacheDtypeMismatch
		if slices.Contains(c.DifferingFactors, "vllm_version") {
			want = ReasonEngineVersionMismatch
			refusedForVersion++
		}
		if v.Refusal.Reason != want {
			t.Errorf("%s: refused %s, want %s (factors that differ: %v)", name, v.Refusal.Reason, want, c.DifferingFactors)
		}
	}
	if refusedForVersion == 0 {
		t.Errorf("%s: no case refused for its version", path)
	}
}
