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
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

var update = flag.Bool("update", false, "record the key set of a new FormatVersion in testdata/")

// The published format's rule: agents decode the index and the rank plans
// strictly (an unknown or missing key, or a value of another type, is an
// error), so any change to the keys of either is a change that agents of
// another version would refuse or misread, and needs a FormatVersion bump.
// The keys of each version are recorded in testdata/format-v<N>.keys; this
// test fails when the code's keys differ from those of its FormatVersion.
// -update records the keys of a FormatVersion that has no file yet, and
// refuses to rewrite the file of an existing version.
func TestFormatKeysBelongToTheirFormatVersion(t *testing.T) {
	got := formatKeys()
	path := filepath.Join("testdata", fmt.Sprintf("format-v%d.keys", FormatVersion))
	want, err := os.ReadFile(path)
	switch {
	case os.IsNotExist(err) && *update:
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("recorded the keys of format version %d in %s", FormatVersion, path)
		return
	case os.IsNotExist(err):
		t.Fatalf("no %s: record the keys of format version %d with `go test ./pkg/planstore -run %s -update`", path, FormatVersion, t.Name())
	case err != nil:
		t.Fatal(err)
	}
	if got != string(want) {
		t.Fatalf("the keys of the published format differ from those recorded for FormatVersion %d in %s.\n"+
			"Agents of another version decode the index and plans strictly and would refuse or misread them: "+
			"bump planstore.FormatVersion and record the new keys with -update (the file of version %d stays as it is).\n%s",
			FormatVersion, path, FormatVersion, keyDiff(string(want), got))
	}
}

// formatKeys lists every key of the index and of a rank plan, with the JSON
// type of its value, one per line and sorted: "index.shards[].ranks[].sha256 string".
func formatKeys() string {
	var lines []string
	walkKeys(reflect.TypeOf(Index{}), "index", &lines)
	walkKeys(reflect.TypeOf(transferplan.RoutePlan{}), "plan", &lines)
	slices.Sort(lines)
	return strings.Join(lines, "\n") + "\n"
}

var marshalerType = reflect.TypeOf((*json.Marshaler)(nil)).Elem()

// layoutRecordType writes a subset of its fields (the v1 record, or the
// contract record); its keys are those of its fields.
var layoutRecordType = reflect.TypeOf(transferplan.LayoutRecord{})

func walkKeys(t reflect.Type, path string, lines *[]string) {
	if t != layoutRecordType && (t.Implements(marshalerType) || reflect.PointerTo(t).Implements(marshalerType)) {
		*lines = append(*lines, path+" custom:"+t.Name())
		return
	}
	switch t.Kind() {
	case reflect.Pointer:
		walkKeys(t.Elem(), path, lines) // null or the value
	case reflect.Slice, reflect.Array:
		walkKeys(t.Elem(), path+"[]", lines)
	case reflect.Map:
		walkKeys(t.Elem(), path+"{}", lines)
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" {
				continue
			}
			if name == "" {
				name = f.Name
			}
			if strings.Contains(opts, "omitempty") || strings.Contains(opts, "omitzero") {
				name += "?"
			}
			walkKeys(f.Type, path+"."+name, lines)
		}
	case reflect.Bool:
		*lines = append(*lines, path+" bool")
	case reflect.String:
		*lines = append(*lines, path+" string")
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		*lines = append(*lines, path+" number")
	default:
		*lines = append(*lines, path+" "+t.Kind().String())
	}
}

// keyDiff lists the lines only one side has.
func keyDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var out []string
	for _, l := range w {
		if l != "" && !slices.Contains(g, l) {
			out = append(out, "- "+l)
		}
	}
	for _, l := range g {
		if l != "" && !slices.Contains(w, l) {
			out = append(out, "+ "+l)
		}
	}
	return strings.Join(out, "\n")
}

func TestShardNumber(t *testing.T) {
	for name, want := range map[string]int{"p-plans-0": 0, "p-plans-7": 7, "p-plans-31": 31, "p-plans-32": 32, "p-plans-123456789": 123456789} {
		if n, ok := ShardNumber("p", name); !ok || n != want {
			t.Errorf("%s: %d %v, want %d", name, n, ok, want)
		}
	}
	for _, name := range []string{"p-plans", "p-plans-", "p-plans-07", "p-plans--1", "p-plans-+1", "p-plans-1x", "p-plans-x", "q-plans-1", "pp-plans-1", "p-plans-1234567890", "p-plans-٣"} {
		if n, ok := ShardNumber("p", name); ok {
			t.Errorf("%s: shard %d, want none", name, n)
		}
	}
	for n := range MaxShardConfigMaps {
		if got, ok := ShardNumber("llama", ShardConfigMapName("llama", n)); !ok || got != n {
			t.Errorf("ShardConfigMapName(llama, %d) reads back as %d %v", n, got, ok)
		}
	}
}
