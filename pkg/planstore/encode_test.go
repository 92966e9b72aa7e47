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
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

func TestEncodeRoundTripGQAP8D4(t *testing.T) {
	set := gqaP8D4(t)
	objs := mustEncode(t, "llama", set)
	if len(objs) != 2 || objs[0].Name != "llama-plans" || objs[1].Name != "llama-plans-0" {
		t.Fatalf("objects = %v, want the index llama-plans and one shard llama-plans-0", names(objs))
	}
	got, err := LoadPlanSet(objs)
	if err != nil {
		t.Fatalf("LoadPlanSet: %v", err)
	}
	if !reflect.DeepEqual(got, set) {
		t.Fatalf("the reloaded plan set differs from the planner's")
	}
	for rank := range set.Plans {
		plan, layout, hash, err := LoadRank(objs, rank)
		if err != nil {
			t.Fatalf("LoadRank(%d): %v", rank, err)
		}
		if !reflect.DeepEqual(plan, set.Plans[rank]) || !reflect.DeepEqual(layout, set.Layout) || hash != set.Hash() {
			t.Fatalf("LoadRank(%d) differs from the planner's plan, layout or hash", rank)
		}
	}
}

func TestEncodeIsDeterministic(t *testing.T) {
	a, b := mustEncode(t, "p", gqaP8D4(t)), mustEncode(t, "p", gqaP8D4(t))
	if !reflect.DeepEqual(a, b) {
		t.Fatal("two encodings of the same plan set differ; publishers could not compare before writing")
	}
}

func TestRankBlobIsGzipOfCanonicalPlanJSON(t *testing.T) {
	set := gqaP8D4(t)
	objs := mustEncode(t, "p", set)
	want, _ := json.Marshal(set.Plans[3])
	got, err := gunzip(objs[1].BinaryData["rank-0003.json.gz"], MaxRankPlanBytes)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("rank-0003.json.gz does not inflate to the canonical plan JSON (err %v)", err)
	}
}

func TestIndexRecordsLayoutHashAndRanks(t *testing.T) {
	set := gqaP8D4(t)
	idx, err := LoadIndex(mustEncode(t, "p", set))
	if err != nil {
		t.Fatal(err)
	}
	if idx.FormatVersion != 1 || idx.PDPair != "p" || idx.PlanHash != set.Hash() || idx.DecodeTPSize != 4 {
		t.Fatalf("index header = %+v", idx)
	}
	if !reflect.DeepEqual(idx.Layout, set.Layout) {
		t.Fatal("index layout differs from the plan set's")
	}
	sh := idx.Shards[0]
	if sh.ConfigMap != "p-plans-0" || sh.FirstRank != 0 || sh.LastRank != 3 || len(sh.Ranks) != 4 || sh.Ranks[2].Key != "rank-0002.json.gz" {
		t.Fatalf("shard = %+v", sh)
	}
}

// A 1024-decode-rank layout with 400 buffers must split into several objects,
// each under the object limit once serialised as JSON with base64 values.
func TestEncode1024DecodeRanksFitsObjectLimit(t *testing.T) {
	set := p512D1024(t)
	objs := mustEncode(t, "big", set)
	if len(objs) < 3 {
		t.Fatalf("%d objects; expected the plans to need several shards", len(objs))
	}
	keys := map[string]string{}
	for _, o := range objs {
		if size := jsonSize(t, o); size > ObjectSizeLimit*9/10 || EstimatedSize(o) > ShardBudgetBytes {
			t.Errorf("%s serialises to %d bytes (estimated %d); limit %d, budget %d", o.Name, size, EstimatedSize(o), ObjectSizeLimit, ShardBudgetBytes)
		}
		for k := range o.BinaryData {
			if prev, dup := keys[k]; dup {
				t.Errorf("key %s is in both %s and %s", k, prev, o.Name)
			}
			keys[k] = o.Name
		}
	}
	if len(keys) != 1024 {
		t.Fatalf("%d rank keys, want 1024", len(keys))
	}
	// LoadPlanSet checks the reassembled set against the index's plan hash.
	if got, err := LoadPlanSet(objs); err != nil || len(got.Plans) != len(set.Plans) {
		t.Fatalf("reloading the 1024-rank publication: %v", err)
	}
}

// jsonSize is how large o is as a ConfigMap in JSON (binaryData as base64).
func jsonSize(t testing.TB, o Object) int {
	b, err := json.Marshal(map[string]any{"metadata": map[string]string{"name": o.Name}, "data": o.Data, "binaryData": o.BinaryData})
	if err != nil {
		t.Fatal(err)
	}
	return len(b)
}

func TestEncodeRejects(t *testing.T) {
	set := gqaP8D4(t)
	misordered := *set
	misordered.Plans = []transferplan.RoutePlan{set.Plans[1], set.Plans[0]}
	cases := []struct {
		name   string
		pdpair string
		set    *transferplan.PlanSet
		reason Reason
		says   string
	}{
		{"empty name", "", set, ReasonInvalidName, "empty"},
		{"name too long for shard names", strings.Repeat("a", 250), set, ReasonInvalidName, "longer than 253"},
		{"plans out of rank order", "p", &misordered, ReasonMalformedIndex, "plan 0 of the set is for decode TP rank 1"},
		{"no plan set", "p", nil, ReasonMalformedIndex, "no plan set"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Encode(c.pdpair, c.set)
			assertFormatError(t, err, c.reason, c.says)
		})
	}
}

func TestEncodeRejectsARankLargerThanAnObject(t *testing.T) {
	// Prefill TP 1024, decode TP 1, 4000 buffers: one decode rank pulls
	// 4 million fragments; its plan alone cannot fit any ConfigMap.
	if testing.Short() {
		t.Skip("plans 4 million fragments")
	}
	set := mustPlan(t, kvLayout(64, 1, 2000, 64, 4096, 64))
	_, err := Encode("huge", set)
	assertFormatError(t, err, ReasonRankTooLarge, "decode TP rank 0")
}

func assertFormatError(t *testing.T, err error, reason Reason, says string) {
	t.Helper()
	var fe *FormatError
	if !errors.As(err, &fe) {
		t.Fatalf("error = %v, want a *FormatError %s", err, reason)
	}
	if fe.Reason != reason || !strings.Contains(fe.Error(), says) {
		t.Fatalf("error = %q (reason %s), want reason %s mentioning %q", fe.Error(), fe.Reason, reason, says)
	}
}

func names(objs []Object) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.Name)
	}
	return out
}

// The index's hash is computed from the rank JSON as it streams; it must be
// exactly the planner's PlanSet.Hash, for every kind of plan set.
func TestStreamedHashIsPlanSetHash(t *testing.T) {
	mla := kvLayout(16, 8, 4, 576, 576, 576)
	mla.Attention = transferplan.MLA
	l15 := mla
	l15.MLAL15Cache = true
	for name, set := range map[string]*transferplan.PlanSet{
		"gqa P8→D4": gqaP8D4(t), "mla P16→D8": mustPlan(t, mla), "mla l1.5": mustPlan(t, l15),
		"identity P4→D4": mustPlan(t, kvLayout(4, 4, 2, 256, 256, 64)),
	} {
		idx, err := LoadIndex(mustEncode(t, "p", set))
		if err != nil || idx.PlanHash != set.Hash() {
			t.Errorf("%s: index hash %v, PlanSet.Hash %s (err %v)", name, idx, set.Hash(), err)
		}
	}
}
