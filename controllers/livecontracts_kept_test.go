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
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/pdtopo/pdtopo/pkg/transferplan"
	plancontract "github.com/pdtopo/pdtopo/pkg/transferplan/contract"
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

// A valid contract padded with keys the engine ignores is kept as the
// engine re-encodes it: its padding costs nothing, and sources that pad
// the same contract differently share one copy. A source whose bytes are
// shorter than the re-encoding keeps its own.
func TestKeptContractsDropPadding(t *testing.T) {
	v := fixtures.LoadContractPair(t, "gqa-p4-d2")
	canonical, err := plancontract.Parse(v.PrefillContract)
	if err != nil {
		t.Fatal(err)
	}
	k := newKeptContracts(newPlanMemoryGate(4 << 20))
	var reads []*liveRead
	for i := range 3 {
		padded := strings.TrimSuffix(strings.TrimSpace(string(v.PrefillContract)), "}") +
			fmt.Sprintf(`,"pad%d":"%s"}`, i, strings.Repeat("x", 100<<10))
		got, err := k.validate("prefill", &fetchedContract{raw: []byte(padded)})
		if err != nil || got.refusal != nil || got.kept == nil {
			t.Fatalf("padded contract %d: %+v, %v", i, got, err)
		}
		if got.size != len(padded) {
			t.Errorf("padded contract %d: size %d, read %d bytes", i, got.size, len(padded))
		}
		if !bytes.Equal(got.raw(), canonical.Canonical()) {
			t.Errorf("padded contract %d: kept %d bytes, not the %d of its re-encoding", i, len(got.raw()), len(canonical.Canonical()))
		}
		reads = append(reads, got)
	}
	if want := int64(len(canonical.Canonical())); k.bytes != want || k.memory.kept.Load() != want || len(k.bySHA) != 1 {
		t.Fatalf("three paddings of one contract: %d bytes kept in %d copies, %d counted; want %d in 1", k.bytes, len(k.bySHA), k.memory.kept.Load(), want)
	}
	for _, r := range reads {
		k.release(r)
	}
	if k.bytes != 0 || len(k.bySHA) != 0 {
		t.Fatalf("after release: %d bytes kept", k.bytes)
	}
	// Its re-encoding is never longer than what was read.
	for _, raw := range [][]byte{v.PrefillContract, v.DecodeContract} {
		c, err := plancontract.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		if got := keptForm(raw, c); len(got) > len(raw) || len(got) > len(c.Canonical()) {
			t.Errorf("kept %d bytes of %d read (re-encoding %d)", len(got), len(raw), len(c.Canonical()))
		}
	}
}
