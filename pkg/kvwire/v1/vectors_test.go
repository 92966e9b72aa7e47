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

package v1

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/pdtopo/pdtopo/pkg/kvwire"
)

// TestExportVectors writes a seeded set of encoded messages, with the values
// they encode, to the file named by KVWIRE_VECTORS. It lets anyone holding
// the reference engine run its own prefill-side parsers over our bytes (and
// compare json.dumps of the bootstrap bodies) without this repository
// carrying any of its code. Without the variable the vectors go to a
// temporary file, read back (so the export is exercised, never skipped).
func TestExportVectors(t *testing.T) {
	path := os.Getenv("KVWIRE_VECTORS")
	if path == "" {
		path = filepath.Join(t.TempDir(), "vectors.json")
	}
	type vector struct {
		Kind   string   `json:"kind"`
		Frames [][]byte `json:"frames,omitempty"` // base64 in JSON
		Body   string   `json:"body,omitempty"`
		Value  any      `json:"value"`
	}
	var out []vector
	g := newGen(99)
	for range 200 {
		reg := g.registration()
		out = append(out, vector{Kind: "registration", Frames: reg.Frames(), Value: reg})
		q := g.request()
		out = append(out, vector{Kind: "request", Frames: q.Frames(), Value: q})
		s := g.status()
		out = append(out, vector{Kind: "status", Frames: s.Frames(), Value: s})
	}
	info := ParallelInfo{PrefillTPSize: 8, PrefillDPSize: 2, EnableMLAL15Cache: true, BufferLens: BufferLens{KVItemLens: []int64{2048, 2048}, KVUnitLens: []int64{256, 256}}}
	out = append(out, vector{Kind: "parallel_info", Body: string(info.MarshalPython()), Value: info})
	reg := RankRegistration{Role: kvwire.RolePrefill, WorldSize: 8, DPSize: 2, RankIP: "10.0.0.3", RankPort: 41000, EngineRank: 5, BufferLens: BufferLens{StateItemLens: []int64{8192}}}
	out = append(out, vector{Kind: "rank_registration", Body: string(reg.MarshalPython()), Value: reg})
	addr := kvwire.RankAddress{RankIP: "10.0.0.3", RankPort: 41000}
	out = append(out, vector{Kind: "rank_address", Body: string(addr.MarshalPython()), Value: addr})
	b, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	var back []vector
	if b, err := os.ReadFile(path); err != nil || json.Unmarshal(b, &back) != nil || len(back) != len(out) {
		t.Fatalf("reading the vectors back from %s: %v, %d of %d", path, err, len(back), len(out))
	}
	t.Logf("wrote %d vectors to %s", len(out), path)
}
