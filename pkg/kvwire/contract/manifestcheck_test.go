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
	"strings"
	"testing"

	"github.com/pdtopo/pdtopo/pkg/kvwire"
)

// The slot counts below are worked by hand from the engine's _logical_slots:
// full_suffix takes blocks prefix/bg .. ceil(prompt/bg); a sliding group
// starts no earlier than the block holding token prompt-window+1; any other
// policy takes one block.
func TestSlotCount(t *testing.T) {
	for _, c := range []struct {
		name                 string
		rule                 ManifestGroupRule
		prefix, prompt, want int64
	}{
		{"full suffix from 0", ManifestGroupRule{Policy: PolicyFullSuffix, BlockGranularity: 16}, 0, 37, 3},
		{"full suffix, exact blocks", ManifestGroupRule{Policy: PolicyFullSuffix, BlockGranularity: 16}, 32, 64, 2},
		{"full suffix, one token", ManifestGroupRule{Policy: PolicyFullSuffix, BlockGranularity: 16}, 16, 17, 1},
		{"latest snapshot", ManifestGroupRule{Policy: PolicyLatestSnapshot, BlockGranularity: 128}, 256, 1000, 1},
		{"null policy is a snapshot", ManifestGroupRule{BlockGranularity: 16}, 0, 500, 1},
		{"sliding window cuts the suffix", ManifestGroupRule{Policy: PolicyFullSuffix, BlockGranularity: 16, SlidingWindowTokens: 128}, 0, 500, 9},
		{"sliding window longer than the prompt", ManifestGroupRule{Policy: PolicyFullSuffix, BlockGranularity: 16, SlidingWindowTokens: 128}, 0, 100, 7},
		{"sliding window behind the prefix", ManifestGroupRule{Policy: PolicyFullSuffix, BlockGranularity: 16, SlidingWindowTokens: 128}, 480, 500, 2},
		{"window of one token on a block edge", ManifestGroupRule{Policy: PolicyFullSuffix, BlockGranularity: 16, SlidingWindowTokens: 1}, 0, 32, 0},
		{"huge prompt", ManifestGroupRule{Policy: PolicyFullSuffix, BlockGranularity: 1}, 1<<62 - 2, 1<<62 + 5, 7},
	} {
		if got := c.rule.SlotCount(c.prefix, c.prompt); got != c.want {
			t.Errorf("%s: SlotCount(%d, %d) = %d, want %d", c.name, c.prefix, c.prompt, got, c.want)
		}
	}
}

// testLayout is a hybrid decode layout: a full-attention group (16-token
// blocks, 64 pages), a state group (one snapshot, 9 pages) and a sliding
// group (window 20, 40 pages).
func testLayout() *ManifestLayout {
	return &ManifestLayout{PrefixGranularity: 16, Groups: []ManifestGroupRule{
		{GroupID: "full", Policy: PolicyFullSuffix, BlockGranularity: 16, PageCount: 64},
		{GroupID: "state", Policy: PolicyLatestSnapshot, BlockGranularity: 16, PageCount: 9},
		{GroupID: "window", Policy: PolicyFullSuffix, BlockGranularity: 16, SlidingWindowTokens: 20, PageCount: 40},
	}}
}

func TestValidateManifest(t *testing.T) {
	ok := `{"groups":[{"group_id":"full","block_ids":[5,6,63]},{"group_id":"state","block_ids":[8]},{"group_id":"window","block_ids":[1,39]}],"prefix_len":16,"prompt_len":60}`
	for _, c := range []struct {
		name, wire string
		reason     kvwire.Reason
		field      string
		detail     []string // numbers the refusal must name
	}{
		{"valid", ok, "", "", nil},
		{"prefix not before prompt", strings.Replace(ok, `"prefix_len":16`, `"prefix_len":64`, 1), kvwire.ReasonManifestPrefixNotBeforePrompt, "prefix_len", []string{"64", "60"}},
		{"groups swapped", strings.Replace(strings.Replace(ok, `"state"`, `"tmp"`, 1), `"window"`, `"state"`, 1), kvwire.ReasonManifestGroupOrder, "groups[1].group_id", []string{`"tmp"`, `"state"`}},
		{"a group missing", `{"groups":[{"group_id":"full","block_ids":[5,6,63]},{"group_id":"state","block_ids":[8]}],"prefix_len":16,"prompt_len":60}`, kvwire.ReasonManifestGroupOrder, "groups", []string{"2 groups", "has 3"}},
		{"a group too many", strings.Replace(ok, `]}],`, `]},{"group_id":"x","block_ids":[]}],`, 1), kvwire.ReasonManifestGroupOrder, "groups", []string{"4 groups", "has 3"}},
		{"prefix unaligned", strings.Replace(ok, `"prefix_len":16`, `"prefix_len":8`, 1), kvwire.ReasonManifestPrefixUnaligned, "prefix_len", []string{"8", "16"}},
		{"a block too many", strings.Replace(ok, `[5,6,63]`, `[5,6,63,7]`, 1), kvwire.ReasonManifestBlockCount, "groups[0].block_ids", []string{"4 blocks", "selects 3", "16", "60"}},
		{"a sliding block too many", strings.Replace(ok, `[1,39]`, `[1,2,39]`, 1), kvwire.ReasonManifestBlockCount, "groups[2].block_ids", []string{"3 blocks", "selects 2", "window 20"}},
		{"null page", strings.Replace(ok, `[5,6,63]`, `[5,0,63]`, 1), kvwire.ReasonManifestBlockOutsideArena, "groups[0].block_ids[1]", []string{"block id 0", "[1, 64)"}},
		{"past the arena", strings.Replace(ok, `[8]`, `[9]`, 1), kvwire.ReasonManifestBlockOutsideArena, "groups[1].block_ids[0]", []string{"block id 9", "[1, 9)"}},
		{"negative", strings.Replace(ok, `[1,39]`, `[-1,39]`, 1), kvwire.ReasonManifestBlockOutsideArena, "groups[2].block_ids[0]", []string{"block id -1", "[1, 40)"}},
		// The engine checks in this order: prefix < prompt before the groups.
		{"first failure wins", `{"groups":[],"prefix_len":64,"prompt_len":60}`, kvwire.ReasonManifestPrefixNotBeforePrompt, "prefix_len", nil},
		{"count before bounds", strings.Replace(ok, `[5,6,63]`, `[0,6]`, 1), kvwire.ReasonManifestBlockCount, "groups[0].block_ids", nil},
		{"malformed", ok[:40], kvwire.ReasonMalformedJSON, "groups[0]", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			sum, err := ValidateManifest([]byte(c.wire), testLayout())
			if c.reason == "" {
				if err != nil || sum != (ManifestSummary{PrefixLen: 16, PromptLen: 60, Groups: 3, Blocks: 6}) {
					t.Fatalf("%+v, %v", sum, err)
				}
				return
			}
			e := kvwire.AsError(err)
			if e == nil || e.Reason != c.reason || e.Field != c.field {
				t.Fatalf("got %v; want reason %s field %q", err, c.reason, c.field)
			}
			for _, d := range c.detail {
				if !strings.Contains(e.Detail, d) {
					t.Errorf("detail %q does not say %q", e.Detail, d)
				}
			}
			// A parsed manifest gets the same verdict.
			if m, derr := DecodeManifest([]byte(c.wire)); derr == nil {
				if r := kvwire.ReasonOf(testLayout().Check(&m)); r != c.reason {
					t.Errorf("Check: reason %s, ValidateManifest: %s", r, c.reason)
				}
			}
		})
	}
}

func TestManifestLayoutFromContract(t *testing.T) {
	contract := func(plan, specs string) string {
		return `{"plan":{"prefix_granularity":16,"lcm_block_bytes":1,"num_lcm_blocks":3,"groups":[` + plan + `],"planes":[],"fields":[]},"group_specs":[` + specs + `],"transfer_schema":{"fields":[]}}`
	}
	full := `{"group_id":"f","retention":"full_history","rows_per_page":16,"entry_stride_tokens":1,"sliding_window_tokens":null,"family":"history","transfer_policy":"full_suffix","checkpoint_granularity":null}`
	state := `{"group_id":"s","retention":"full_history","rows_per_page":null,"entry_stride_tokens":null,"sliding_window_tokens":null,"family":"state","transfer_policy":"latest_snapshot","checkpoint_granularity":64}`
	slide := `{"group_id":"w","retention":"sliding_window","rows_per_page":8,"entry_stride_tokens":2,"sliding_window_tokens":128,"family":"history","transfer_policy":"full_suffix","checkpoint_granularity":null}`
	planGroups := `{"group_id":"s","cache_blocks_per_lcm_block":1,"page_count":4},{"group_id":"w","cache_blocks_per_lcm_block":1,"page_count":7},{"group_id":"f","cache_blocks_per_lcm_block":2,"page_count":9},{"group_id":"f","cache_blocks_per_lcm_block":2,"page_count":99}`
	l, err := ManifestLayoutFromContract([]byte(contract(planGroups, full+","+state+","+slide)))
	if err != nil {
		t.Fatal(err)
	}
	want := []ManifestGroupRule{
		{GroupID: "f", Policy: PolicyFullSuffix, BlockGranularity: 16, PageCount: 9},
		{GroupID: "s", Policy: PolicyLatestSnapshot, BlockGranularity: 64, PageCount: 4},
		{GroupID: "w", Policy: PolicyFullSuffix, BlockGranularity: 16, SlidingWindowTokens: 128, PageCount: 7},
	}
	if l.PrefixGranularity != 16 || len(l.Groups) != 3 || l.Groups[0] != want[0] || l.Groups[1] != want[1] || l.Groups[2] != want[2] {
		t.Fatalf("got %+v", l)
	}
	for _, c := range []struct {
		name, contract string
		reason         kvwire.Reason
		field          string
	}{
		{"not JSON", `{"plan":`, kvwire.ReasonMalformedJSON, "cache_layout"},
		{"no positive granularity", strings.Replace(contract(planGroups, full), `"prefix_granularity":16`, `"prefix_granularity":0`, 1), kvwire.ReasonContractUnusable, "plan.prefix_granularity"},
		{"a spec without a plan group", contract(`{"group_id":"s","page_count":4}`, full), kvwire.ReasonContractUnusable, "group_specs[0].group_id"},
		{"a sliding suffix without a window", contract(planGroups, strings.Replace(slide, `"sliding_window_tokens":128`, `"sliding_window_tokens":null`, 1)), kvwire.ReasonContractUnusable, "group_specs[0].sliding_window_tokens"},
		{"a window of 0", contract(planGroups, strings.Replace(slide, `"sliding_window_tokens":128`, `"sliding_window_tokens":0`, 1)), kvwire.ReasonContractUnusable, "group_specs[0].sliding_window_tokens"},
		{"no granularity", contract(planGroups, strings.Replace(state, `"checkpoint_granularity":64`, `"checkpoint_granularity":null`, 1)), kvwire.ReasonContractUnusable, "group_specs[0].checkpoint_granularity"},
		{"granularity over 64 bits", contract(planGroups, strings.Replace(full, `"entry_stride_tokens":1`, `"entry_stride_tokens":4611686018427387904`, 1)), kvwire.ReasonContractUnusable, "group_specs[0].rows_per_page"},
		{"a fractional page count", contract(`{"group_id":"f","page_count":4.5}`, full), kvwire.ReasonContractUnusable, ""},
	} {
		_, err := ManifestLayoutFromContract([]byte(c.contract))
		if e := kvwire.AsError(err); e == nil || e.Reason != c.reason || e.Field != c.field {
			t.Errorf("%s: %v; want reason %s field %q", c.name, err, c.reason, c.field)
		}
	}
	// A sliding snapshot group without a window is usable: its window is unused.
	if _, err := ManifestLayoutFromContract([]byte(contract(planGroups, strings.Replace(strings.Replace(slide, `"sliding_window_tokens":128`, `"sliding_window_tokens":null`, 1), "full_suffix", "latest_snapshot", 1)))); err != nil {
		t.Errorf("sliding snapshot group: %v", err)
	}
}
