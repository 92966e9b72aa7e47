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

package planstore

import (
	"encoding/json"
	"os"
	"reflect"
	"testing"

	"github.com/pdtopo/pdtopo/pkg/transferplan"
	plancontract "github.com/pdtopo/pdtopo/pkg/transferplan/contract"
)

// contractPlanSet plans one of the engine's golden contract pairs (GQA with
// 2 KV heads, prefill TP 4 → decode TP 1: two sources, two idle ranks).
func contractPlanSet(t *testing.T) *transferplan.PlanSet {
	t.Helper()
	raw, err := os.ReadFile("../transferplan/testdata/contract/mha-gqa2-p4-d1-replicas.json")
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Prefill, Decode                 transferplan.Parallelism
		PrefillContract, DecodeContract string
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	pre, err := plancontract.Parse([]byte(v.PrefillContract))
	if err != nil {
		t.Fatal(err)
	}
	dec, err := plancontract.Parse([]byte(v.DecodeContract))
	if err != nil {
		t.Fatal(err)
	}
	set, err := plancontract.Plan(plancontract.Pair{Prefill: v.Prefill, Decode: v.Decode, PrefillContract: pre, DecodeContract: dec})
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// Contract plans publish as format version 2 and load back unchanged, with
// the contract hashes in the index's layout record.
func TestContractPlansPublishAsVersion2(t *testing.T) {
	set := contractPlanSet(t)
	objs, err := Encode("gqa", set)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := LoadIndex(objs)
	if err != nil {
		t.Fatal(err)
	}
	if idx.FormatVersion != 2 || idx.Layout.Wire != transferplan.WireCacheContract || idx.Layout.PrefillContractSHA256 != set.Layout.PrefillContractSHA256 || idx.PlanHash != set.Hash() {
		t.Fatalf("index %+v", idx)
	}
	got, err := LoadPlanSet(objs)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, set) {
		t.Fatalf("loaded plans differ:\n got %+v\nwant %+v", got, set)
	}
	plan, _, _, err := LoadRank(objs, 0)
	if err != nil || len(plan.Targets) != 4 || !plan.Targets[1].IsDummy || len(plan.Targets[0].ContractFragments) == 0 {
		t.Fatalf("rank 0: %+v, %v", plan, err)
	}
}
