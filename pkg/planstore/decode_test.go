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
	"strings"
	"testing"

	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// editIndex applies edit to the decoded index of objs and re-encodes it.
func editIndex(t *testing.T, objs []Object, edit func(*Index)) []Object {
	t.Helper()
	var idx Index
	if err := json.Unmarshal([]byte(objs[0].Data[IndexKey]), &idx); err != nil {
		t.Fatal(err)
	}
	edit(&idx)
	raw, _ := json.Marshal(idx)
	out := append([]Object{}, objs...)
	out[0] = Object{Name: objs[0].Name, Data: map[string]string{IndexKey: string(raw)}}
	return out
}

// editShard replaces key's bytes in the shard.
func editShard(objs []Object, key string, b []byte) []Object {
	out := append([]Object{}, objs...)
	shard := Object{Name: objs[1].Name, BinaryData: map[string][]byte{}}
	for k, v := range objs[1].BinaryData {
		shard.BinaryData[k] = v
	}
	if b == nil {
		delete(shard.BinaryData, key)
	} else {
		shard.BinaryData[key] = b
	}
	out[1] = shard
	return out
}

func TestLoadRankRejects(t *testing.T) {
	good := mustEncode(t, "p", gqaP8D4(t))
	plan1 := good[1].BinaryData[RankKey(1)]
	cases := []struct {
		name   string
		objs   []Object
		rank   int
		reason Reason
		says   string
	}{
		{"no index", good[1:], 0, ReasonMissingIndex, "no index.json"},
		{"rank past the decode TP size", good, 4, ReasonRankOutOfRange, "cover decode TP ranks 0..3"},
		{"negative rank", good, -1, ReasonRankOutOfRange, "rank -1"},
		{"shard missing", good[:1], 1, ReasonMissingShard, "rank-0001.json.gz of ConfigMap p-plans-0"},
		{"key deleted", editShard(good, RankKey(1), nil), 1, ReasonMissingShard, "rank-0001.json.gz"},
		{"not gzip", editShard(good, RankKey(1), []byte("{}")), 1, ReasonCorruptPlan, "not gzip"},
		{"another rank's bytes", editShard(good, RankKey(1), good[1].BinaryData[RankKey(2)]), 1, ReasonHashMismatch, "SHA-256"},
		{"truncated gzip", editShard(good, RankKey(1), plan1[:len(plan1)/2]), 1, ReasonCorruptPlan, "rank-0001.json.gz"},
		{"gzip of other JSON", editShard(good, RankKey(1), gzipBytes([]byte(`{"x":1}`))), 1, ReasonHashMismatch, "inflates to 7 bytes but the index records"},
		{"future version", editIndex(t, good, func(i *Index) { i.FormatVersion = 3 }), 0, ReasonUnsupportedVersion, "formatVersion 3"},
		{"v1-wire plans as version 2", editIndex(t, good, func(i *Index) { i.FormatVersion = 2 }), 0, ReasonMalformedIndex, "plans of the V1 wire are published as version 1"},
		{"contract plans as version 1", editIndex(t, good, func(i *Index) { i.Layout.Wire = transferplan.WireCacheContract }), 0, ReasonMalformedIndex, "plans of the CacheContract wire are published as version 2"},
		{"decode size disagrees with layout", editIndex(t, good, func(i *Index) { i.DecodeTPSize = 5 }), 0, ReasonMalformedIndex, "decodeTPSize is 5"},
		{"zero DP in layout", editIndex(t, good, func(i *Index) { i.Layout.Decode.DPSize = 0 }), 0, ReasonMalformedIndex, "layout.decode.dataParallelSize"},
		{"key escapes the directory", editIndex(t, good, func(i *Index) { i.Shards[0].Ranks[0].Key = "../../etc/passwd" }), 0, ReasonMalformedIndex, `"../../etc/passwd"`},
		{"rank gap", editIndex(t, good, func(i *Index) { i.Shards[0].Ranks = i.Shards[0].Ranks[:3]; i.Shards[0].LastRank = 2 }), 0, ReasonMalformedIndex, "cover decode TP ranks 0..2, not 0..3"},
		{"huge recorded size", editIndex(t, good, func(i *Index) { i.Shards[0].Ranks[1].Size = 1 << 40 }), 1, ReasonMalformedIndex, "size 1099511627776"},
		{"bad sha", editIndex(t, good, func(i *Index) { i.Shards[0].Ranks[1].SHA256 = "zz" }), 1, ReasonMalformedIndex, `sha256 "zz"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, _, err := LoadRank(c.objs, c.rank)
			assertFormatError(t, err, c.reason, c.says)
		})
	}
}

func TestLoadRankRejectsMalformedIndexJSON(t *testing.T) {
	for name, raw := range map[string]string{
		"not JSON":       "{",
		"unknown field":  `{"formatVersion":1,"surprise":true}`,
		"trailing bytes": `{"formatVersion":1} {}`,
	} {
		_, _, _, err := LoadRank([]Object{{Name: "p-plans", Data: map[string]string{IndexKey: raw}}}, 0)
		assertFormatError(t, err, ReasonMalformedIndex, "index.json")
		_ = name
	}
}

func TestLoadPlanSetDetectsAnEditedIndexHash(t *testing.T) {
	objs := editIndex(t, mustEncode(t, "p", gqaP8D4(t)), func(i *Index) { i.PlanHash = strings.Repeat("0", 64) })
	_, err := LoadPlanSet(objs)
	assertFormatError(t, err, ReasonHashMismatch, "index records 0000")
}

func TestLoadRankAmbiguousIndex(t *testing.T) {
	a, b := mustEncode(t, "a", gqaP8D4(t)), mustEncode(t, "b", gqaP8D4(t))
	_, _, _, err := LoadRank(append(a, b...), 0)
	if err == nil || !strings.Contains(err.Error(), "pass the objects of one PDPair") {
		t.Fatalf("error = %v, want a complaint about two indexes", err)
	}
}
