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

package contract

import (
	"strings"
	"testing"
)

const diffBase = `{"plan":{"prefix_granularity":16,"groups":[{"group_id":"full_attention","page_count":48}],` +
	`"fields":[{"field_id":"layer.0.k","shape":[16,2,128]}]},` +
	`"group_specs":[{"group_id":"full_attention","rows_per_page":16,"sliding_window_tokens":null}]}`

func TestFirstContractDifference(t *testing.T) {
	edit := func(old, new string) string {
		if !strings.Contains(diffBase, old) {
			t.Fatalf("the base contract has no %q", old)
		}
		return strings.Replace(diffBase, old, new, 1)
	}
	for _, tc := range []struct {
		name string
		b    string
		want Difference
	}{
		{"page count", edit(`"page_count":48`, `"page_count":24`), Difference{"plan.groups[0].page_count", "48", "24"}},
		{"shape element", edit(`[16,2,128]`, `[16,4,128]`), Difference{"plan.fields[0].shape[1]", "2", "4"}},
		{"rows per page, after equal fields", edit(`"rows_per_page":16`, `"rows_per_page":8`), Difference{"group_specs[0].rows_per_page", "16", "8"}},
		{"null against a number", edit(`"sliding_window_tokens":null`, `"sliding_window_tokens":128`), Difference{"group_specs[0].sliding_window_tokens", "null", "128"}},
		{"a group more", edit(`"page_count":48}]`, `"page_count":48},{"group_id":"x","page_count":2}]`), Difference{"plan.groups", "1 item", "2 items"}},
		{"a key only in the second", edit(`"rows_per_page":16,`, `"rows_per_page":16,"retention":"full_history",`), Difference{"group_specs[0].retention", "absent", `"full_history"`}},
		{"a key only in the first", edit(`"prefix_granularity":16,`, ``), Difference{"plan.prefix_granularity", "16", "absent"}},
		{"1 against 1.0", edit(`"rows_per_page":16`, `"rows_per_page":16.0`), Difference{"group_specs[0].rows_per_page", "16", "16.0"}},
		{"a string against an object", edit(`"group_id":"full_attention","page_count"`, `"group_id":{"a":1},"page_count"`), Difference{"plan.groups[0].group_id", `"full_attention"`, `{"a":1}`}},
		{"an odd key is quoted", edit(`"plan":{`, `"plan":{"a.b":1,`), Difference{`plan."a.b"`, "absent", "1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, found, err := FirstDifference([]byte(diffBase), []byte(tc.b))
			if err != nil || !found || got != tc.want {
				t.Fatalf("got %+v (found %v, %v), want %+v", got, found, err, tc.want)
			}
		})
	}
	if d, found, err := FirstDifference([]byte(diffBase), []byte(" "+diffBase+"\n")); found || err != nil {
		t.Fatalf("the same contract with whitespace: %+v, %v", d, err)
	}
}

func TestFirstContractDifferenceRendersLongValuesShort(t *testing.T) {
	long := `{"plan":{"groups":[` + strings.Repeat(`{"group_id":"g","page_count":1},`, 20) + `{"group_id":"g","page_count":1}]}}`
	d, found, err := FirstDifference([]byte(`{"plan":{"groups":7}}`), []byte(long))
	if err != nil || !found || d.Field != "plan.groups" || d.A != "7" {
		t.Fatalf("%+v %v %v", d, found, err)
	}
	if len(d.B) > maxDiffValue+len("…") || !strings.HasSuffix(d.B, "…") {
		t.Fatalf("the long value is %d bytes: %q", len(d.B), d.B)
	}
}

func TestFirstContractDifferenceRefuses(t *testing.T) {
	deep := strings.Repeat(`{"a":`, maxDiffDepth+2) + "1" + strings.Repeat("}", maxDiffDepth+2)
	for name, b := range map[string]string{
		"not JSON":        `{"plan":`,
		"not an object":   `[1,2]`,
		"trailing data":   `{} {}`,
		"nested too deep": deep,
		"empty":           ``,
	} {
		if _, _, err := FirstDifference([]byte(diffBase), []byte(b)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// FirstDifference reads bytes from the network (two bootstrap
// answers of one prefill): never a panic, a value equal to itself, and a
// symmetric verdict on whether two values differ.
func FuzzFirstContractDifference(f *testing.F) {
	f.Add([]byte(diffBase), []byte(strings.Replace(diffBase, "48", "24", 1)))
	f.Add([]byte(`{"a":[1,{"b":null}]}`), []byte(`{"a":[1,{"b":false}],"c":"\u00e9"}`))
	f.Add([]byte(`{}`), []byte(`{"a":{"a":{"a":[]}}}`))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		d, found, err := FirstDifference(a, b)
		if err != nil {
			return
		}
		if _, self, err := FirstDifference(a, a); self || err != nil {
			t.Fatalf("a differs from itself: %v", err)
		}
		_, back, err := FirstDifference(b, a)
		if err != nil || back != found {
			t.Fatalf("a→b found %v (%+v), b→a found %v (%v)", found, d, back, err)
		}
		if found && d.Field == "" {
			t.Fatalf("a difference without a field: %+v", d)
		}
	})
}

func TestFirstContractDifferenceRepeatedKeys(t *testing.T) {
	a, b := []byte(`{"x":1,"x":2}`), []byte(`{"x":2}`)
	for _, pair := range [][2][]byte{{a, b}, {b, a}} {
		if d, found, err := FirstDifference(pair[0], pair[1]); found || err != nil {
			t.Fatalf("the last of repeated keys counts: %+v %v", d, err)
		}
	}
}
