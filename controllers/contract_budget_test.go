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
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	plancontract "github.com/pdtopo/pdtopo/pkg/transferplan/contract"
)

// wideMHAContract lays out, for one rank of a TP-tp fleet, the contract of
// an MHA model of `layers` layers with `heads` KV heads of dim 64 in pages
// of 16 tokens, the shape the engine's recipes give the golden vectors
// (pkg/transferplan/testdata/contract), with more layers and heads.
func wideMHAContract(t *testing.T, tp, layers, heads int) string {
	t.Helper()
	local := max(heads/tp, 1)
	page := 16 * local * 64 * 2
	var planes, fields, schema []any
	for l := range layers {
		for _, kv := range []string{"k", "v"} {
			id, plane := fmt.Sprintf("layer.%d.%s", l, kv), fmt.Sprintf("unit.%d.%s", l, kv)
			planes = append(planes, map[string]any{"plane_id": plane, "bytes_per_lcm_block": page, "arena_offset_bytes": len(planes) * page * 8})
			fields = append(fields, map[string]any{"group_id": "full_attention", "field_id": id, "plane_id": plane, "shape": []int{16, local, 64},
				"dtype": "bfloat16", "field_offset_bytes": 0, "page_stride_bytes": page})
			schema = append(schema, map[string]any{"field_id": id, "partition": map[string]any{"axis": 1, "global_extent": heads, "global_parts": []int{}}})
		}
	}
	doc := map[string]any{
		"plan": map[string]any{"prefix_granularity": 16, "lcm_block_bytes": page * len(planes), "num_lcm_blocks": 7,
			"groups": []any{map[string]any{"group_id": "full_attention", "cache_blocks_per_lcm_block": 1, "page_count": 8}},
			"planes": planes, "fields": fields},
		"group_specs": []any{map[string]any{"group_id": "full_attention", "retention": "full_history", "rows_per_page": 16, "entry_stride_tokens": 1,
			"sliding_window_tokens": nil, "family": "history", "transfer_policy": "full_suffix", "checkpoint_granularity": nil}},
		"transfer_schema": map[string]any{"fields": schema},
	}
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := plancontract.Parse(b); err != nil {
		t.Fatalf("the wide contract for TP %d does not decode: %v", tp, err)
	}
	return string(b)
}

// A contract pair whose plans are past the budget goes through the same
// steps as a v1 pair (planWithinBudget): compatible, sized and not planned,
// PlansPublished=False/PlanTooLarge with the numbers, Stalled, no ConfigMap.
// 1024 prefill ranks feed one decode rank 600 fields, each in 1024 parts:
// 614,400 fragments, past the default budget's 524,288.
func TestContractPairOverBudgetIsRefused(t *testing.T) {
	ns := newNamespace(t)
	const layers, heads = 300, 1024
	pre, dec := wideMHAContract(t, 1024, layers, heads), wideMHAContract(t, 1, layers, heads)
	if len(pre) > plancontract.MaxBytes {
		t.Fatalf("the prefill contract is %d bytes, past the engine's %d", len(pre), plancontract.MaxBytes)
	}
	pair := contractPair(ns, "wide", inline(pre), inline(dec))
	pair.Spec.Prefill.TensorParallelSize = 1024
	create(t, pair)
	got := waitObserved(t, pair)
	c := wantCondition(t, got, pdv1.PDPairLayoutCompatible, metav1.ConditionTrue, pdv1.ReasonCompatible)
	if !strings.Contains(c.Message, "614400 fragments (sized, not planned") || !strings.Contains(c.Message, "CacheContract wire") {
		t.Errorf("LayoutCompatible message %q does not give the size of the plans not planned", c.Message)
	}
	p := wantCondition(t, got, pdv1.PDPairPlansPublished, metav1.ConditionFalse, pdv1.ReasonPlanTooLarge)
	if !strings.Contains(p.Message, "614400 fragments") {
		t.Errorf("PlansPublished message %q does not give the fragment count", p.Message)
	}
	wantCondition(t, got, pdv1.PDPairStalled, metav1.ConditionTrue, pdv1.ReasonPlanTooLarge)
	if got.Status.Plan != nil || len(planConfigMaps(t, got)) != 0 {
		t.Errorf("an over-budget contract pair shows plans %+v or ConfigMaps", got.Status.Plan)
	}
	if got.Status.Contracts == nil || len(got.Status.Contracts.Prefill.SHA256) != 64 {
		t.Errorf("status.contracts %+v does not identify the contracts sized", got.Status.Contracts)
	}
	wantEvent(t, got, corev1.EventTypeWarning, pdv1.ReasonPlanTooLarge)
}
