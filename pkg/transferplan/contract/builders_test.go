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
	"fmt"
	"slices"
	"testing"

	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// testContract builds contract JSON the way the engine lays out a model:
// cache groups, and fields with a rank-local shape (a sharded field's local
// extent is its global extent over the TP size, at least 1, as recipes
// compute KV heads per rank).
type testContract struct {
	prefix int
	groups []testGroup
	// raw edits the decoded JSON before it is encoded again.
	raw func(map[string]any)
}

type testGroup struct {
	id, family, retention, policy string
	rows, checkpoint              int
	window                        int
	fields                        []testField
}

type testField struct {
	id, dtype string
	global    []int // global shape; the sharded axis holds the global extent
	axis      int   // -1: not sharded
	parts     []int
}

// mhaGroup is a full-attention group of K and V fields of `layers` layers
// with heads KV heads of dim 8, pages of page tokens, sharded on heads.
func mhaGroup(layers, heads, page int) testGroup {
	g := testGroup{id: "full_attention", family: "history", retention: "full_history", policy: "full_suffix", rows: page}
	for l := range layers {
		for _, kv := range []string{"k", "v"} {
			g.fields = append(g.fields, testField{id: fmt.Sprintf("layer.%d.%s", l, kv), dtype: "bfloat16", global: []int{page, heads, 8}, axis: 1})
		}
	}
	return g
}

// mlaGroup is a full-attention group of one replicated latent field per layer.
func mlaGroup(layers, page int) testGroup {
	g := testGroup{id: "full_attention", family: "history", retention: "full_history", policy: "full_suffix", rows: page}
	for l := range layers {
		g.fields = append(g.fields, testField{id: fmt.Sprintf("layer.%d.latent_kv", l), dtype: "bfloat16", global: []int{page, 1, 576}, axis: -1})
	}
	return g
}

// stateGroup is a recurrent-state group whose conv field is fused from
// three parts (key, key, value widths), sharded on channels.
func stateGroup(id string, key, value int) testGroup {
	return testGroup{id: id, family: "state", retention: "full_history", policy: "latest_snapshot", checkpoint: 8,
		fields: []testField{{id: "layer.0.conv", dtype: "bfloat16", global: []int{2*key + value, 3}, axis: 0, parts: []int{key, key, value}}}}
}

// json lays the contract out for one rank of a TP-tp fleet.
func (c testContract) json(tp int) string {
	var groups, planes, fields, specs, transfer []any
	for _, g := range c.groups {
		groups = append(groups, map[string]any{"group_id": g.id, "cache_blocks_per_lcm_block": 1, "page_count": 8})
		spec := map[string]any{"group_id": g.id, "retention": g.retention, "family": g.family, "transfer_policy": g.policy}
		if g.checkpoint > 0 {
			spec["checkpoint_granularity"] = g.checkpoint
		} else {
			spec["rows_per_page"], spec["entry_stride_tokens"] = g.rows, 1
		}
		if g.window > 0 {
			spec["sliding_window_tokens"] = g.window
		}
		specs = append(specs, spec)
		for _, f := range g.fields {
			shape := append([]int(nil), f.global...)
			if f.axis >= 0 {
				if len(f.parts) > 0 {
					distinct := min(tp, slices.Min(f.parts))
					for distinct > 1 && anyNotDivisible(f.parts, distinct) {
						distinct--
					}
					shape[f.axis] = f.global[f.axis] / distinct
				} else {
					shape[f.axis] = max(f.global[f.axis]/tp, 1)
				}
				parts := f.parts
				if parts == nil {
					parts = []int{}
				}
				transfer = append(transfer, map[string]any{"field_id": f.id, "partition": map[string]any{"axis": f.axis, "global_extent": f.global[f.axis], "global_parts": parts}})
			}
			plane := "p." + f.id
			planes = append(planes, map[string]any{"plane_id": plane, "bytes_per_lcm_block": 1 << 16, "arena_offset_bytes": len(planes) << 20})
			fields = append(fields, map[string]any{"group_id": g.id, "field_id": f.id, "plane_id": plane, "shape": shape, "dtype": f.dtype,
				"field_offset_bytes": 0, "page_stride_bytes": 1 << 16})
		}
	}
	doc := map[string]any{
		"plan": map[string]any{"prefix_granularity": c.prefix, "lcm_block_bytes": 1 << 16, "num_lcm_blocks": 7,
			"groups": anyList(groups), "planes": anyList(planes), "fields": anyList(fields)},
		"group_specs":     anyList(specs),
		"transfer_schema": map[string]any{"fields": anyList(transfer)},
	}
	if c.raw != nil {
		c.raw(doc)
	}
	b, err := json.Marshal(doc)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func anyNotDivisible(parts []int, n int) bool {
	for _, p := range parts {
		if p%n != 0 {
			return true
		}
	}
	return false
}

func anyList(xs []any) []any {
	if xs == nil {
		return []any{}
	}
	return xs
}

// contractPairOf parses the contracts of c laid out for each side.
func contractPairOf(t testing.TB, prefill, decode testContract, P, D int) Pair {
	t.Helper()
	pre, err := Parse([]byte(prefill.json(P)))
	if err != nil {
		t.Fatalf("prefill contract: %v", err)
	}
	dec, err := Parse([]byte(decode.json(D)))
	if err != nil {
		t.Fatalf("decode contract: %v", err)
	}
	return Pair{Prefill: transferplan.Parallelism{TPSize: P, DPSize: 1}, Decode: transferplan.Parallelism{TPSize: D, DPSize: 1}, PrefillContract: pre, DecodeContract: dec}
}
