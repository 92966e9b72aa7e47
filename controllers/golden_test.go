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
	"bytes"
	"compress/gzip"
	"encoding/json"
	"flag"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/test/fixtures"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata/golden from what the code produces")

// goldenDir holds the published plan ConfigMaps of goldenPair as the API
// server stores them: one directory per ConfigMap, holding each data key's
// value byte for byte (gzipped values inflated, so that a diff reads), and
// metadata.json with the labels, annotations and every key's encoding.
const goldenDir = "testdata/golden"

// goldenPair is small but has most parts of the format: 2 KV heads of 128
// bytes, prefill TP4 in replica groups of two (prefill ranks 0 and 2 hold
// heads 0 and 1, ranks 1 and 3 are idle and released by decode rank 0), one
// decode rank holding both heads: one fragment at destination offset 0 and
// one at 128 per buffer.
func goldenPair(ns string) *pdv1.PDPair {
	return fixtures.Pair(ns, "golden").Prefill(4, 1).Decode(1, 1).KVPair(1, 256, 128, 128).Obj()
}

// The published format is what agents of every version read: a change to
// it must be a deliberate edit of the golden files (`go test ./controllers
// -run TestPublishedFormatGolden -update`), reviewed as such; a change of
// keys also needs a planstore.FormatVersion bump (pkg/planstore's
// TestFormatKeysBelongToTheirFormatVersion enforces it).
func TestPublishedFormatGolden(t *testing.T) {
	ns := newNamespace(t)
	p := goldenPair(ns)
	create(t, p)
	got := waitObserved(t, p)
	wantCondition(t, got, pdv1.PDPairReady, metav1.ConditionTrue, pdv1.ReasonReady)
	cms := planConfigMaps(t, got)
	slices.SortFunc(cms, func(a, b corev1.ConfigMap) int { return strings.Compare(a.Name, b.Name) })
	if names := configMapNames(cms); !slices.Equal(names, []string{"golden-plans", "golden-plans-0"}) {
		t.Fatalf("published ConfigMaps %v, want the index golden-plans and one shard golden-plans-0", names)
	}
	files := map[string][]byte{}
	for _, cm := range cms {
		for name, content := range goldenFiles(t, &cm) {
			files[filepath.Join(cm.Name, name)] = content
		}
	}
	if *update {
		if err := os.RemoveAll(goldenDir); err != nil {
			t.Fatal(err)
		}
		for name, content := range files {
			path := filepath.Join(goldenDir, name)
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, content, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		t.Logf("rewrote %d golden files under %s", len(files), goldenDir)
		return
	}
	onDisk := map[string]bool{}
	err := filepath.WalkDir(goldenDir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(goldenDir, path)
		onDisk[rel] = true
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range files {
		want, err := os.ReadFile(filepath.Join(goldenDir, name))
		if err != nil {
			t.Errorf("%s: no golden file (%v); a new part of the published format? rewrite with -update", name, err)
			continue
		}
		if !bytes.Equal(content, want) {
			t.Errorf("%s differs from the golden file: the published format changed.\ngot:  %s\nwant: %s\n"+
				"If that is deliberate, rewrite the golden files with -update (and bump planstore.FormatVersion if agents of another version would misread it).",
				name, clip(content), clip(want))
		}
	}
	for name := range onDisk {
		if _, ok := files[name]; !ok {
			t.Errorf("%s: golden file of something no longer published", name)
		}
	}
}

// goldenFiles renders one stored ConfigMap: each data key's value as is,
// each binary key's value inflated (it must be gzip) under its name without
// .gz, and metadata.json.
func goldenFiles(t *testing.T, cm *corev1.ConfigMap) map[string][]byte {
	t.Helper()
	type key struct {
		Name     string `json:"name"`
		Field    string `json:"field"`
		Encoding string `json:"encoding"`
	}
	meta := struct {
		Labels      map[string]string `json:"labels"`
		Annotations map[string]string `json:"annotations"`
		Keys        []key             `json:"keys"`
	}{Labels: cm.Labels, Annotations: cm.Annotations}
	out := map[string][]byte{}
	for _, k := range slices.Sorted(mapsKeys(cm.Data)) {
		out[k] = []byte(cm.Data[k])
		meta.Keys = append(meta.Keys, key{k, "data", "utf-8"})
	}
	for _, k := range slices.Sorted(mapsKeys(cm.BinaryData)) {
		zr, err := gzip.NewReader(bytes.NewReader(cm.BinaryData[k]))
		if err != nil {
			t.Fatalf("%s: binaryData %s is not gzip: %v", cm.Name, k, err)
		}
		raw, err := io.ReadAll(zr)
		if err != nil {
			t.Fatalf("%s: binaryData %s: %v", cm.Name, k, err)
		}
		out[strings.TrimSuffix(k, ".gz")] = raw
		meta.Keys = append(meta.Keys, key{k, "binaryData", "gzip"})
	}
	b, err := json.MarshalIndent(meta, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	out["metadata.json"] = append(b, '\n')
	return out
}

// clip shortens a golden mismatch for the log.
func clip(b []byte) string {
	if len(b) > 600 {
		return string(b[:600]) + "…"
	}
	return string(b)
}
