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
	"reflect"
	"testing"

	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// projectAtomically writes objects the way the kubelet's atomic writer fills
// a projected volume: the data in a timestamped directory, "..data" pointing
// at it, and every key a symlink through "..data". Called again, it swaps
// "..data" to a new directory, as an update does.
func projectAtomically(t *testing.T, dir, generation string, objs []Object) {
	t.Helper()
	ts := filepath.Join(dir, "..2026_01_01_"+generation)
	if err := os.MkdirAll(ts, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		for k, v := range o.Data {
			writeFile(t, filepath.Join(ts, k), []byte(v))
		}
		for k, v := range o.BinaryData {
			writeFile(t, filepath.Join(ts, k), v)
		}
	}
	tmp := filepath.Join(dir, "..data_tmp")
	if err := os.Symlink(filepath.Base(ts), tmp); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(ts)
	for _, e := range entries {
		link := filepath.Join(dir, e.Name())
		if _, err := os.Lstat(link); err == nil {
			continue
		}
		if err := os.Symlink(filepath.Join("..data", e.Name()), link); err != nil {
			t.Fatal(err)
		}
	}
}

func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestLoadRankFromAtomicWriterDir(t *testing.T) {
	dir := t.TempDir()
	set := gqaP8D4(t)
	projectAtomically(t, dir, "1", mustEncode(t, "llama", set))
	plan, layout, hash, err := LoadRankFromDir(dir, 2)
	if err != nil {
		t.Fatalf("LoadRankFromDir: %v", err)
	}
	if !reflect.DeepEqual(plan, set.Plans[2]) || !reflect.DeepEqual(layout, set.Layout) || hash != set.Hash() {
		t.Fatal("the plan from the directory differs from the planner's")
	}

	// An update swaps ..data: the loader follows it.
	next := mustPlan(t, kvLayout(4, 4, 2, 256, 256, 64))
	projectAtomically(t, dir, "2", mustEncode(t, "llama", next))
	plan, _, hash, err = LoadRankFromDir(dir, 2)
	if err != nil || hash != next.Hash() || plan.PlanKind != transferplan.PlanIdentity {
		t.Fatalf("after the update: kind %s hash %s err %v; want the new identity plans", plan.PlanKind, hash, err)
	}
	if set, err := LoadPlanSetFromDir(dir); err != nil || set.Hash() != next.Hash() {
		t.Fatalf("LoadPlanSetFromDir after the update: %v", err)
	}
}

// The loader pins "..data" once: even when the top-level symlinks point
// elsewhere (mid-update), index and rank come from one snapshot.
func TestLoadRankFromDirReadsOneSnapshot(t *testing.T) {
	dir := t.TempDir()
	set := gqaP8D4(t)
	projectAtomically(t, dir, "1", mustEncode(t, "p", set))
	if err := os.Remove(filepath.Join(dir, IndexKey)); err != nil { // a stale top-level link
		t.Fatal(err)
	}
	if _, _, _, err := LoadRankFromDir(dir, 1); err != nil {
		t.Fatalf("LoadRankFromDir through ..data: %v", err)
	}
}

func TestLoadRankFromPlainDirMixedPublicationsIsHashMismatch(t *testing.T) {
	dir := t.TempDir()
	old := mustEncode(t, "p", gqaP8D4(t))
	fresh := mustEncode(t, "p", mustPlan(t, kvLayout(8, 4, 81, 128, 256, 128)))
	writeFile(t, filepath.Join(dir, IndexKey), []byte(fresh[0].Data[IndexKey]))
	writeFile(t, filepath.Join(dir, RankKey(1)), old[1].BinaryData[RankKey(1)])
	_, _, _, err := LoadRankFromDir(dir, 1)
	assertFormatError(t, err, ReasonHashMismatch, "rank-0001.json.gz")
}

func TestLoadRankFromMissingDir(t *testing.T) {
	_, _, _, err := LoadRankFromDir(filepath.Join(t.TempDir(), "nope"), 0)
	assertFormatError(t, err, ReasonMissingIndex, "index.json")
}
