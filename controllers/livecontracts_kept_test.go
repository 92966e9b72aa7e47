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

package controllers

import (
	"errors"
	"strings"
	"testing"

	"github.com/pdtopo/pdtopo/pkg/transferplan"
	"github.com/pdtopo/pdtopo/test/fixtures"
)

// A live contract the engine refuses is kept as its SHA-256, size and a
// refusal quoting at most 120 bytes of it, however long the key or value
// the decoder names; one it decodes is kept once for every pair giving
// the same bytes, and counted against the plan memory until released.
func TestKeptContracts(t *testing.T) {
	long := strings.Repeat("k", 3000)
	k := newKeptContracts(newPlanMemoryGate(4 << 20))
	for _, bogus := range []string{
		`{"plan":{"prefix_granularity":16},"group_specs":[{"` + long + `":1}]}`,
		`{"plan":{"prefix_granularity":"` + long + `"}}`,
		`{"plan":` + long,
	} {
		got, err := k.validate("prefill", &fetchedContract{raw: []byte(bogus), from: "http://x/route"})
		var le *transferplan.LayoutError
		if err != nil || got.kept != nil || !errors.As(got.refusal, &le) || got.size != len(bogus) || len(got.sha256) != 64 {
			t.Fatalf("%.40s…: %+v, %v", bogus, got, err)
		}
		if n := longestCommon(le.Message, bogus); n > maxQuotedBytes {
			t.Errorf("the refusal quotes %d bytes of the contract: %.200s", n, le.Message)
		}
		if !strings.HasPrefix(le.Message, "cacheContracts.prefill (http://x/route): ") {
			t.Errorf("the refusal does not name the role and source: %.200s", le.Message)
		}
	}
	if k.bytes != 0 {
		t.Fatalf("%d bytes kept of refused contracts", k.bytes)
	}
	v := fixtures.LoadContractPair(t, "gqa-p4-d2")
	a, err := k.validate("prefill", &fetchedContract{raw: v.PrefillContract})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := k.validate("prefill", &fetchedContract{raw: v.PrefillContract})
	if a.kept != b.kept || k.bytes != int64(len(v.PrefillContract)) || k.memory.kept.Load() != k.bytes {
		t.Fatalf("two reads of the same bytes: shared %v, %d bytes kept, %d counted", a.kept == b.kept, k.bytes, k.memory.kept.Load())
	}
	k.release(a)
	k.release(b)
	if k.bytes != 0 || k.memory.kept.Load() != 0 || len(k.bySHA) != 0 {
		t.Fatalf("after both released: %d bytes kept, %d counted", k.bytes, k.memory.kept.Load())
	}
	// Past a quarter of --max-plan-memory nothing more is kept.
	small := newKeptContracts(newPlanMemoryGate(int64(len(v.PrefillContract)) * 2))
	if _, err := small.validate("prefill", &fetchedContract{raw: v.PrefillContract}); err == nil || !strings.Contains(err.Error(), "--max-plan-memory") {
		t.Fatalf("a contract past the kept limit: %v", err)
	}
}
