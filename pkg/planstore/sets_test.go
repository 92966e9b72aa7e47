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
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// small plans a layout of 2 layers: cheap, and distinct per TP pair.
func small(t testing.TB, prefillTP, decodeTP int) *transferplan.PlanSet {
	return mustPlan(t, kvLayout(prefillTP, decodeTP, 2, int64(1024/prefillTP), int64(1024/decodeTP), 128))
}

func mustEncodeSets(t testing.TB, sets ...*transferplan.PlanSet) SetsPublication {
	t.Helper()
	var in [][]Object
	for _, s := range sets {
		in = append(in, mustEncode(t, "p", s))
	}
	pub, err := EncodeSets("p", in)
	if err != nil {
		t.Fatal(err)
	}
	return pub
}

// One set is published exactly as Encode publishes it; with more, index.json
// stays the current set's, byte for byte, so that an older agent (strict,
// formats 1 and 2) loads the current set from the same objects.
func TestEncodeSetsKeepsIndexJSONForOlderAgents(t *testing.T) {
	p8, p4 := small(t, 8, 4), small(t, 4, 4)
	alone := mustEncode(t, "p", p8)
	if one := mustEncodeSets(t, p8); !reflect.DeepEqual(one.Objects, alone) {
		t.Fatalf("one set: objects differ from Encode's: %v vs %v", names(one.Objects), names(alone))
	}
	two := mustEncodeSets(t, p8, p4)
	if got, want := two.Objects[0].Data[IndexKey], alone[0].Data[IndexKey]; got != want {
		t.Fatalf("index.json of two sets differs from the current set's alone:\n%s\n%s", got, want)
	}
	if _, ok := two.Objects[0].Data[SetsKey]; !ok {
		t.Fatalf("two sets and no %s", SetsKey)
	}
	if want := []string{p8.Hash(), p4.Hash()}; !reflect.DeepEqual(two.Published, want) {
		t.Fatalf("published %v, want %v", two.Published, want)
	}
	// the older loaders, on the two-set objects
	set, err := LoadPlanSet(two.Objects)
	if err != nil || set.Hash() != p8.Hash() {
		t.Fatalf("LoadPlanSet: %v (hash %s, want %s)", err, set.Hash(), p8.Hash())
	}
	plan, _, hash, err := LoadRank(two.Objects, 3)
	if err != nil || hash != p8.Hash() || !reflect.DeepEqual(plan, p8.Plans[3]) {
		t.Fatalf("LoadRank: %v, hash %s", err, hash)
	}
}

func TestLoadEngineRankSets(t *testing.T) {
	p8d4, p4d4, p8d2 := small(t, 8, 4), small(t, 4, 4), small(t, 8, 2)
	objs := mustEncodeSets(t, p8d4, p4d4, p8d2).Objects
	d2, d8 := transferplan.Parallelism{TPSize: 2, DPSize: 1}, transferplan.Parallelism{TPSize: 8, DPSize: 1}
	cases := []struct {
		name   string
		decode *transferplan.Parallelism
		ranks  []int
		want   []*transferplan.PlanSet
		reason Reason
		says   string
	}{
		{name: "no decode layout: the current set's (TP 4)", ranks: []int{1, 2}, want: []*transferplan.PlanSet{p8d4, p4d4}},
		{name: "admitted under decode TP 2", decode: &d2, ranks: []int{1}, want: []*transferplan.PlanSet{p8d2}},
		{name: "a decode layout never published", decode: &d8, ranks: []int{0}, reason: ReasonDecodeLayoutNotPublished, says: "are for decode layouts tp=4,dp=1 and tp=2,dp=1; this pod was admitted under decode layout tp=8,dp=1"},
		{name: "engine rank outside the decode fleet", decode: &d2, ranks: []int{2}, reason: ReasonRankOutOfRange, says: "engine rank 2 is outside the decode fleet of 2"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := LoadEngineRankSets(objs, tc.ranks, decodeOpts(tc.decode)...)
			if tc.reason != "" {
				assertFormatError(t, err, tc.reason, tc.says)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Current != p8d4.Hash() || len(got.Sets) != len(tc.want) {
				t.Fatalf("current %s, %d sets; want %s, %d", got.Current, len(got.Sets), p8d4.Hash(), len(tc.want))
			}
			for i, w := range tc.want {
				s := got.Sets[i]
				if s.PlanHash != w.Hash() || !reflect.DeepEqual(s.Layout, w.Layout) {
					t.Fatalf("set %d: hash %s, want %s", i, s.PlanHash, w.Hash())
				}
				for j, er := range tc.ranks {
					if !reflect.DeepEqual(s.Plans[j], w.Plans[er%w.Layout.Decode.TPPerDP()]) {
						t.Fatalf("set %d engine rank %d: not the planned plan", i, er)
					}
				}
			}
		})
	}
}

// decodeOpts is the loader option of an optional decode layout.
func decodeOpts(p *transferplan.Parallelism) []LoadOption {
	if p == nil {
		return nil
	}
	return []LoadOption{ForDecodeLayout(*p)}
}

// Without plansets.json the index is the one set, as an older operator
// publishes it.
func TestLoadEngineRankSetsOfOneIndex(t *testing.T) {
	p8 := small(t, 8, 4)
	got, err := LoadEngineRankSets(mustEncode(t, "p", p8), []int{0, 3})
	if err != nil || len(got.Sets) != 1 || got.Sets[0].PlanHash != p8.Hash() || !reflect.DeepEqual(got.Sets[0].Plans[1], p8.Plans[3]) {
		t.Fatalf("got %+v, %v", got.Sets, err)
	}
}

// Two generations whose prefills answer alike (and same decode layout) are
// one set to an agent: the later one is shared, not published.
func TestEncodeSetsSharesSetsThatAnswerAlike(t *testing.T) {
	p8 := small(t, 8, 4)
	pub := mustEncodeSets(t, p8, small(t, 4, 4), small(t, 8, 4))
	if want := []string{p8.Hash(), small(t, 4, 4).Hash()}; !reflect.DeepEqual(pub.Published, want) {
		t.Fatalf("published %v, want %v", pub.Published, want)
	}
	if want := []string{p8.Hash()}; !reflect.DeepEqual(pub.Shared, want) {
		t.Fatalf("shared %v, want %v", pub.Shared, want)
	}
}

// Past MaxPlanSets, or past the shard ConfigMaps a pair may have, the
// latest sets are left out; the current one never is.
func TestEncodeSetsDropsWhatDoesNotFit(t *testing.T) {
	var sets []*transferplan.PlanSet
	for layers := range MaxPlanSets + 1 { // prefills of 1..11 layers answer differently
		sets = append(sets, mustPlan(t, kvLayout(8, 4, layers+1, 128, 256, 128)))
	}
	pub := mustEncodeSets(t, sets...)
	if len(pub.Published) != MaxPlanSets || !reflect.DeepEqual(pub.Dropped, []string{sets[MaxPlanSets].Hash()}) {
		t.Fatalf("published %d, dropped %v", len(pub.Published), pub.Dropped)
	}

	// 16-rank sets whose every rank takes a shard of its own: two fill the
	// 32 shard names, a third does not fit
	var in [][]Object
	var hashes []string
	for _, p := range []int{16, 8, 4} {
		s := mustPlan(t, kvLayout(p, 16, 2, int64(2048/p), 128, 128))
		hashes = append(hashes, s.Hash())
		in = append(in, inflateShards(mustEncode(t, "p", s), 500<<10))
	}
	got, err := EncodeSets("p", in)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Published, hashes[:2]) || !reflect.DeepEqual(got.Dropped, hashes[2:]) || len(got.Objects) != 1+MaxShardConfigMaps {
		t.Fatalf("published %v, dropped %v, %d objects", got.Published, got.Dropped, len(got.Objects))
	}
}

// inflateShards replaces every rank's bytes by n bytes (EncodeSets trusts
// its input's bytes; only their sizes matter to the packing).
func inflateShards(objs []Object, n int) []Object {
	out := []Object{objs[0]}
	for _, o := range objs[1:] {
		big := Object{Name: o.Name, BinaryData: map[string][]byte{}}
		for k := range o.BinaryData {
			big.BinaryData[k] = bytes.Repeat([]byte{byte(len(k))}, n)
		}
		out = append(out, big)
	}
	return out
}

// SplitSets gives back each set as Encode made it, and refuses a set whose
// bytes are not the ones its plan hash covers.
func TestSplitSets(t *testing.T) {
	p8, p4 := small(t, 8, 4), small(t, 4, 4)
	pub := mustEncodeSets(t, p8, p4)
	split, err := SplitSets(pub.Objects)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range []*transferplan.PlanSet{p8, p4} {
		if split[i].PlanHash != s.Hash() || !reflect.DeepEqual(split[i].Objects, mustEncode(t, "p", s)) {
			t.Fatalf("set %d: hash %s, objects %v", i, split[i].PlanHash, names(split[i].Objects))
		}
	}
	// a rank of set 1 replaced by rank 0's bytes, its entry edited to match:
	// each rank verifies, the set's hash does not
	objs := append([]Object{}, pub.Objects...)
	var si SetsIndex
	if err := json.Unmarshal([]byte(objs[0].Data[SetsKey]), &si); err != nil {
		t.Fatal(err)
	}
	si.Sets[1].Shards[0].Ranks[1].Size, si.Sets[1].Shards[0].Ranks[1].SHA256 = si.Sets[1].Shards[0].Ranks[0].Size, si.Sets[1].Shards[0].Ranks[0].SHA256
	raw, _ := json.Marshal(si)
	objs[0] = Object{Name: objs[0].Name, Data: map[string]string{IndexKey: objs[0].Data[IndexKey], SetsKey: string(raw)}}
	shard := Object{Name: objs[1].Name, BinaryData: map[string][]byte{}}
	for k, v := range objs[1].BinaryData {
		shard.BinaryData[k] = v
	}
	shard.BinaryData[SetRankKey(1, 1)] = shard.BinaryData[SetRankKey(1, 0)]
	objs[1] = shard
	_, err = SplitSets(objs)
	assertFormatError(t, err, ReasonHashMismatch, "the index records "+p4.Hash())
}

func TestDecodeSetsIndexRejects(t *testing.T) {
	pub := mustEncodeSets(t, small(t, 8, 4), small(t, 4, 4))
	good := pub.Objects[0].Data[SetsKey]
	cases := []struct {
		name   string
		edit   func(string) string
		reason Reason
		says   string
	}{
		{"unknown key", func(s string) string {
			return strings.Replace(s, `{"formatVersion":1,`, `{"formatVersion":1,"hint":1,`, 1)
		}, ReasonMalformedIndex, `unknown field "hint"`},
		{"unknown version", func(s string) string { return strings.Replace(s, `{"formatVersion":1,`, `{"formatVersion":2,`, 1) }, ReasonUnsupportedVersion, "formatVersion 2"},
		{"trailing data", func(s string) string { return s + "{}" }, ReasonMalformedIndex, "trailing data"},
		{"set 1 under the current set's keys", func(s string) string { return strings.ReplaceAll(s, "set1-rank", "rank") }, ReasonMalformedIndex, `set 1: shard 0 (p-plans-0) entry 0 is rank 0 under key "rank-0000.json.gz", expected rank 0 under "set1-rank-0000.json.gz"`},
		{"set of another pair", func(s string) string { return strings.Replace(s, `"pdpair":"p"`, `"pdpair":"q"`, 2) }, ReasonMalformedIndex, `set 1 is for PDPair "p", the sets index for "q"`},
		{"no sets", func(string) string { return `{"formatVersion":1,"pdpair":"p","sets":[]}` }, ReasonMalformedIndex, "lists 0 plan sets"},
		{"two sets alike", func(s string) string { return duplicateSet(t, s, 0) }, ReasonMalformedIndex, "sets 0 and 2 are for decode layout TP 4"},
		{"too many sets", func(s string) string {
			for len(s) > 0 && strings.Count(s, `"planHash"`) <= MaxPlanSets {
				s = duplicateSet(t, s, 1)
			}
			return s
		}, ReasonMalformedIndex, fmt.Sprintf("lists %d plan sets", MaxPlanSets+1)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			objs := append([]Object{{Name: "p-plans", Data: map[string]string{IndexKey: pub.Objects[0].Data[IndexKey], SetsKey: tc.edit(good)}}}, pub.Objects[1:]...)
			_, err := LoadEngineRankSets(objs, []int{0})
			assertFormatError(t, err, tc.reason, tc.says)
		})
	}
}

// duplicateSet appends a copy of set i under the keys of its new place.
func duplicateSet(t *testing.T, raw string, i int) string {
	var si SetsIndex
	if err := json.Unmarshal([]byte(raw), &si); err != nil {
		t.Fatal(err)
	}
	dup, n := si.Sets[i], len(si.Sets)
	dup.Shards = append([]Shard(nil), dup.Shards...)
	for j := range dup.Shards {
		dup.Shards[j].Ranks = append([]RankEntry(nil), dup.Shards[j].Ranks...)
		for k := range dup.Shards[j].Ranks {
			dup.Shards[j].Ranks[k].Key = SetRankKey(n, dup.Shards[j].Ranks[k].Rank)
		}
	}
	si.Sets = append(si.Sets, dup)
	out, _ := json.Marshal(si)
	return string(out)
}

// The sets index is decoded strictly too: its keys are recorded for its
// own version (testdata/format-sets-v<N>.keys), and a change needs a
// SetsFormatVersion bump, as TestFormatKeysBelongToTheirFormatVersion
// holds index.json to FormatVersion.
func TestSetsFormatKeysBelongToTheirVersion(t *testing.T) {
	var lines []string
	walkKeys(reflect.TypeOf(SetsIndex{}), "plansets", &lines)
	slices.Sort(lines)
	got := strings.Join(lines, "\n") + "\n"
	path := filepath.Join("testdata", fmt.Sprintf("format-sets-v%d.keys", SetsFormatVersion))
	want, err := os.ReadFile(path)
	if os.IsNotExist(err) && *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Fatalf("the keys of plansets.json differ from those recorded for SetsFormatVersion %d in %s: bump it and record the new keys with -update.\n%s",
			SetsFormatVersion, path, keyDiff(string(want), got))
	}
}
