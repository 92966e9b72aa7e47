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

package receivertest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/pdtopo/pdtopo/pkg/planstore"
	planv1 "github.com/pdtopo/pdtopo/pkg/transferplan/v1"
)

// ProjectPlans writes a PDPair's plan objects into dir the way the
// kubelet's atomic writer updates a projected volume: the new content in a
// new timestamped directory, a "..data_tmp" link to it renamed over
// "..data" (the one atomic step), a visible symlink through "..data" per
// key, then the links of keys no longer published and the previous
// timestamped directory removed. Objects that are absent (a deleted
// ConfigMap projected as optional) are simply not passed; passing none
// projects an empty volume. generation must grow between calls.
func ProjectPlans(tb testing.TB, dir string, generation int, objects []planstore.Object) {
	tb.Helper()
	must := func(err error) {
		if err != nil {
			tb.Fatalf("projecting plans into %s: %v", dir, err)
		}
	}
	ts := fmt.Sprintf("..2026_01_01_00_00_00.%09d", generation)
	must(os.MkdirAll(filepath.Join(dir, ts), 0o755))
	keys := map[string]bool{}
	for _, o := range objects {
		for k, v := range o.Data {
			keys[k] = true
			must(os.WriteFile(filepath.Join(dir, ts, k), []byte(v), 0o444))
		}
		for k, v := range o.BinaryData {
			keys[k] = true
			must(os.WriteFile(filepath.Join(dir, ts, k), v, 0o444))
		}
	}
	old, _ := os.Readlink(filepath.Join(dir, "..data"))
	tmp := filepath.Join(dir, "..data_tmp")
	_ = os.Remove(tmp)
	must(os.Symlink(ts, tmp))
	must(os.Rename(tmp, filepath.Join(dir, "..data")))
	for k := range keys {
		link := filepath.Join(dir, k)
		if _, err := os.Lstat(link); err != nil {
			must(os.Symlink(filepath.Join("..data", k), link))
		}
	}
	entries, err := os.ReadDir(dir)
	must(err)
	for _, e := range entries {
		if name := e.Name(); name[0] != '.' && !keys[name] {
			must(os.Remove(filepath.Join(dir, name)))
		}
	}
	if old != "" && old != ts {
		must(os.RemoveAll(filepath.Join(dir, old)))
	}
}

// Reshard repacks a publication into shards ConfigMaps of consecutive rank
// ranges (as the operator's packing would for larger plans), rewriting the
// index to match. The plans and their hashes are unchanged, so the result
// is a valid publication of the same plan set with another shard count.
func Reshard(tb testing.TB, objects []planstore.Object, shards int) []planstore.Object {
	tb.Helper()
	var (
		index planstore.Object
		idx   planstore.Index
		blobs = map[string][]byte{}
	)
	for _, o := range objects {
		if raw, ok := o.Data[planstore.IndexKey]; ok {
			index = o
			if err := json.Unmarshal([]byte(raw), &idx); err != nil {
				tb.Fatalf("reshard: %v", err)
			}
		}
		for k, v := range o.BinaryData {
			blobs[k] = v
		}
	}
	var entries []planstore.RankEntry
	for _, sh := range idx.Shards {
		entries = append(entries, sh.Ranks...)
	}
	if shards < 1 || shards > len(entries) || shards > planstore.MaxShardConfigMaps {
		tb.Fatalf("reshard: %d shards for %d ranks", shards, len(entries))
	}
	idx.Shards = nil
	out := []planstore.Object{}
	for s := range shards {
		lo, hi := s*len(entries)/shards, (s+1)*len(entries)/shards
		sh := planstore.Shard{ConfigMap: planstore.ShardConfigMapName(idx.PDPair, s), FirstRank: entries[lo].Rank, LastRank: entries[hi-1].Rank, Ranks: entries[lo:hi]}
		obj := planstore.Object{Name: sh.ConfigMap, BinaryData: map[string][]byte{}}
		for _, e := range sh.Ranks {
			obj.BinaryData[e.Key] = blobs[e.Key]
		}
		idx.Shards = append(idx.Shards, sh)
		out = append(out, obj)
	}
	raw, err := json.Marshal(idx)
	if err != nil {
		tb.Fatalf("reshard: %v", err)
	}
	index.Data = map[string]string{planstore.IndexKey: string(raw)}
	return append([]planstore.Object{index}, out...)
}

// Publish plans l and encodes the plan set as the operator publishes it
// for pair; it returns the objects and the plan set's hash.
func Publish(tb testing.TB, pair string, l planv1.Layout) ([]planstore.Object, string) {
	tb.Helper()
	set, err := planv1.Plan(l)
	if err != nil {
		tb.Fatalf("plan: %v", err)
	}
	objects, err := planstore.Encode(pair, set)
	if err != nil {
		tb.Fatalf("encode: %v", err)
	}
	return objects, set.Hash()
}
