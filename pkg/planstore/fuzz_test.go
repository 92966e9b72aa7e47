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
	"os"
	"path/filepath"
	"testing"
)

// FuzzLoadRank feeds arbitrary index and rank bytes, through both the object
// and the directory loader: bytes from a volume are untrusted, and the loader
// must answer with an error, never a panic or an unbounded allocation.
func FuzzLoadRank(f *testing.F) {
	// A small seed (2 layers) keeps minimisation of interesting inputs quick.
	objs := mustEncode(f, "p", mustPlan(f, kvLayout(8, 4, 2, 128, 256, 128)))
	dir := f.TempDir() // one directory per worker, rewritten per input
	f.Add([]byte(objs[0].Data[IndexKey]), objs[1].BinaryData[RankKey(1)], 1)
	f.Add([]byte(objs[0].Data[IndexKey]), objs[1].BinaryData[RankKey(0)], 0)
	f.Add([]byte(`{"formatVersion":1,"decodeTPSize":1}`), []byte{0x1f, 0x8b}, 0)
	f.Fuzz(func(t *testing.T, index, rankBytes []byte, rank int) {
		rank = rank & 0xff
		key := RankKey(rank)
		o := []Object{
			{Name: "p-plans", Data: map[string]string{IndexKey: string(index)}},
			{Name: "p-plans-0", BinaryData: map[string][]byte{key: rankBytes}},
		}
		plan, _, _, err := LoadRank(o, rank)
		if err == nil && plan.DecodeTPRank != rank {
			t.Fatalf("loaded the plan of rank %d when asked for %d", plan.DecodeTPRank, rank)
		}
		_, _ = LoadPlanSet(o)

		if err := os.WriteFile(filepath.Join(dir, IndexKey), index, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, key), rankBytes, 0o644); err != nil {
			t.Fatal(err)
		}
		_, _, _, _ = LoadRankFromDir(dir, rank)
	})
}

// FuzzLoadSets feeds arbitrary sets-index and rank bytes to the sets loader
// and to SplitSets: answers are errors, never a panic, and a load that
// succeeds returns only plans of the ranks asked for.
func FuzzLoadSets(f *testing.F) {
	objs := mustEncodeSets(f, small(f, 8, 4), small(f, 4, 4)).Objects
	f.Add([]byte(objs[0].Data[SetsKey]), objs[1].BinaryData[SetRankKey(1, 1)], 1)
	f.Add([]byte(objs[0].Data[SetsKey]), objs[1].BinaryData[SetRankKey(0, 0)], 0)
	f.Add([]byte(`{"formatVersion":1,"pdpair":"p","sets":[{}]}`), []byte{0x1f, 0x8b}, 0)
	f.Fuzz(func(t *testing.T, sets, rankBytes []byte, rank int) {
		rank &= 0xff
		o := []Object{
			{Name: "p-plans", Data: map[string]string{IndexKey: objs[0].Data[IndexKey], SetsKey: string(sets)}},
			{Name: "p-plans-0", BinaryData: map[string][]byte{SetRankKey(1, rank): rankBytes, SetRankKey(0, rank): rankBytes}},
		}
		got, err := LoadEngineRankSets(o, []int{rank})
		if err == nil {
			for _, s := range got.Sets {
				if len(s.Plans) != 1 || s.Plans[0].DecodeTPRank != rank%s.Layout.Decode.TPPerDP() {
					t.Fatalf("loaded %d plans for engine rank %d", len(s.Plans), rank)
				}
			}
		}
		_, _ = SplitSets(o)
	})
}
