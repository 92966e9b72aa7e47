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

package contract

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// Each refusal names its reason, the field and both values.
func TestContractPairRefusals(t *testing.T) {
	gqa8 := testContract{prefix: 16, groups: []testGroup{mhaGroup(2, 8, 16)}}
	with := func(c testContract, edit func(*testContract)) testContract {
		c.groups = append([]testGroup(nil), c.groups...)
		for i := range c.groups {
			c.groups[i].fields = append([]testField(nil), c.groups[i].fields...)
		}
		edit(&c)
		return c
	}
	// The engine decodes a float dimension and compares it; it cannot move it.
	floatShape := with(gqa8, func(c *testContract) {
		c.raw = func(doc map[string]any) {
			doc["plan"].(map[string]any)["fields"].([]any)[0].(map[string]any)["shape"] = []any{16, 4, 8.5}
		}
	})
	for _, tc := range []struct {
		name             string
		prefill, decode  testContract
		P, D             int
		reason           transferplan.Reason
		field            string
		messageFragments []string
	}{
		{"mha-gqa8-p2-d2/prefix-granularity-16-vs-32", gqa8, with(gqa8, func(c *testContract) { c.prefix = 32 }), 2, 2,
			transferplan.ReasonContractMismatchPrefixGranularity, "plan.prefix_granularity", []string{"prefix_granularity differs: prefill 16, decode 32"}},
		{"mha-gqa8-p2-d2/rows-per-page-16-vs-8", gqa8, with(gqa8, func(c *testContract) { c.groups[0].rows = 8 }), 2, 2,
			transferplan.ReasonContractMismatchGroupSemantics, "group_specs[0].rows_per_page", []string{`cache group "full_attention" rows_per_page differs: prefill 16, decode 8`,
				"Fix: give both roles the same rows_per_page for this cache group"}},
		{"mha-gqa8-p2-d2/window-none-vs-128", gqa8, with(gqa8, func(c *testContract) { c.groups[0].window = 128 }), 2, 2,
			transferplan.ReasonContractMismatchGroupSemantics, "group_specs[0].sliding_window_tokens", []string{"prefill null, decode 128"}},
		{"mha-gqa8-p2-d2/group-renamed", gqa8, with(gqa8, func(c *testContract) { c.groups[0].id = "attention" }), 2, 2,
			transferplan.ReasonContractMismatchGroupOrder, "group_specs", []string{`prefill ["full_attention"], decode ["attention"]`}},
		{"mha-gqa8-p2-d2/one-layer-less", gqa8, with(gqa8, func(c *testContract) { c.groups[0].fields = c.groups[0].fields[:2] }), 2, 2,
			transferplan.ReasonContractMismatchFieldOrder, "group_specs[0]", []string{`"layer.1.k"`}},
		{"mha-gqa8-p2-d2/float16-decode", gqa8, with(gqa8, func(c *testContract) { c.groups[0].fields[3].dtype = "float16" }), 2, 2,
			transferplan.ReasonContractMismatchFieldSemantics, `plan.fields "layer.1.v".dtype`, []string{`field "layer.1.v" dtype differs: prefill bfloat16, decode float16`}},
		{"mha-gqa8-vs-gqa4-p2-d2", gqa8, testContract{prefix: 16, groups: []testGroup{mhaGroup(2, 4, 16)}}, 2, 2,
			transferplan.ReasonContractMismatchFieldSemantics, `transfer_schema "layer.0.k"`, []string{"partition differs", "axis 1 of global extent 8", "axis 1 of global extent 4"}},
		{"mha-gqa4-p3-d2", testContract{prefix: 16, groups: []testGroup{mhaGroup(1, 4, 16)}}, testContract{prefix: 16, groups: []testGroup{mhaGroup(1, 4, 16)}}, 3, 2,
			transferplan.ReasonContractShardsNotDividingTP, `plan.fields "layer.0.k"`, []string{"global extent 4 over prefill local extent 1 is 4 distinct shards, which must divide prefill TP 3",
				"Fix: run the prefill with a TP size per DP group among 1, 2, 4, 8, 12, 16, 20, 24…"}},
		{"mha-gqa8-p2048-d2", gqa8, gqa8, 2048, 2,
			transferplan.ReasonContractTPOutOfRange, "prefill.tensorParallelSize", []string{"2048 TP ranks per DP group", "at most 1024", "raise the prefill's dataParallelSize to at least 2"}},
		{"mla-p2-d4/no-fields", testContract{prefix: 64, groups: []testGroup{{id: "full_attention", family: "history", retention: "full_history", rows: 64}}},
			testContract{prefix: 64, groups: []testGroup{{id: "full_attention", family: "history", retention: "full_history", rows: 64}}}, 2, 4,
			transferplan.ReasonContractNoSourceFragments, "cacheContracts", []string{"prefill TP 2 and decode TP 4 differ and the cache groups hold no fields"}},
		{"mha-gqa8-p2-d2/shape-float-on-both", floatShape, floatShape, 2, 2,
			transferplan.ReasonContractUnsupportedValue, `plan.fields "layer.0.k"`, []string{"[16,4,8.5]"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pair := contractPairOf(t, tc.prefill, tc.decode, tc.P, tc.D)
			_, err := Plan(pair)
			var le *transferplan.LayoutError
			if !errors.As(err, &le) {
				t.Fatalf("got %v, want a *LayoutError", err)
			}
			if le.Reason != tc.reason || le.Field != tc.field {
				t.Errorf("got %s at %q, want %s at %q (%s)", le.Reason, le.Field, tc.reason, tc.field, le.Message)
			}
			checkEndsWithFix(t, le)
			for _, frag := range tc.messageFragments {
				if !strings.Contains(le.Message, frag) {
					t.Errorf("message %q does not say %q", le.Message, frag)
				}
			}
			// The budget check refuses the pair the same way before sizing it.
			if _, err := CheckBudget(pair, transferplan.DefaultBudget); !errors.As(err, &le) || le.Reason != tc.reason {
				t.Errorf("CheckBudget: %v, want %s", err, tc.reason)
			}
		})
	}
}

// An equal-TP pair whose decode contract was made for another TP size.
func TestContractPairRefusesEqualTPWithOtherRankGeometry(t *testing.T) {
	c := testContract{prefix: 16, groups: []testGroup{mhaGroup(1, 8, 16)}}
	pre, _ := Parse([]byte(c.json(2)))
	dec, _ := Parse([]byte(c.json(4)))
	_, err := Plan(Pair{Prefill: transferplan.Parallelism{TPSize: 2, DPSize: 1}, Decode: transferplan.Parallelism{TPSize: 2, DPSize: 1}, PrefillContract: pre, DecodeContract: dec})
	var le *transferplan.LayoutError
	if !errors.As(err, &le) || le.Reason != transferplan.ReasonContractMismatchRankGeometry || !strings.Contains(le.Message, "prefill shape [16 4 8] (1024 bytes), decode shape [16 2 8] (512 bytes)") {
		t.Fatalf("got %v, want %s naming both shapes", err, transferplan.ReasonContractMismatchRankGeometry)
	}
}

func TestParseContractNamesThePath(t *testing.T) {
	c := testContract{prefix: 16, groups: []testGroup{mhaGroup(1, 8, 16)}}
	for _, tc := range []struct {
		name, path, fragment string
		edit                 func(map[string]any)
	}{
		{"unknown key in a field", "plan.fields[1]", `unknown key "stride"`, func(d map[string]any) {
			d["plan"].(map[string]any)["fields"].([]any)[1].(map[string]any)["stride"] = 4
		}},
		{"missing retention", "group_specs[0].retention", "is required", func(d map[string]any) {
			delete(d["group_specs"].([]any)[0].(map[string]any), "retention")
		}},
		{"unknown dtype", "plan.fields[0].dtype", `unsupported cache dtype "fp4"`, func(d map[string]any) {
			d["plan"].(map[string]any)["fields"].([]any)[0].(map[string]any)["dtype"] = "fp4"
		}},
		{"partition not dividing", "transfer_schema.fields[0].partition", "global_extent 9 is not divisible by the local extent 4", func(d map[string]any) {
			d["transfer_schema"].(map[string]any)["fields"].([]any)[0].(map[string]any)["partition"].(map[string]any)["global_extent"] = 9
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cc := c
			cc.raw = tc.edit
			_, err := Parse([]byte(cc.json(2)))
			var le *transferplan.LayoutError
			if !errors.As(err, &le) || le.Reason != transferplan.ReasonContractInvalid || le.Field != tc.path || !strings.Contains(le.Message, tc.fragment) {
				t.Fatalf("got %v (field %q), want %s at %q saying %q", err, fieldOf(le), transferplan.ReasonContractInvalid, tc.path, tc.fragment)
			}
		})
	}
}

func fieldOf(le *transferplan.LayoutError) string {
	if le == nil {
		return ""
	}
	return le.Field
}

// The engine compares spec values with Python's ==: 16, 16.0 and (for 1)
// true are the same number; 16 and true are not.
func TestContractPeerCheckUsesPythonEquality(t *testing.T) {
	base := testContract{prefix: 16, groups: []testGroup{mhaGroup(1, 8, 16)}}
	rows := func(v any) testContract {
		c := base
		c.raw = func(doc map[string]any) { doc["group_specs"].([]any)[0].(map[string]any)["rows_per_page"] = v }
		return c
	}
	for _, tc := range []struct {
		name     string
		decode   any
		sameRows bool
	}{{"16-vs-16.0", json.Number("16.0"), true}, {"16-vs-16", 16, true}, {"16-vs-true", true, false}, {"16-vs-17", 17, false}} {
		t.Run("mha-gqa8-p2-d2/rows-per-page-"+tc.name, func(t *testing.T) {
			_, err := Plan(contractPairOf(t, rows(16), rows(tc.decode), 2, 2))
			if tc.sameRows != (err == nil) {
				t.Fatalf("got %v, want the rows to compare equal: %v", err, tc.sameRows)
			}
		})
	}
}
