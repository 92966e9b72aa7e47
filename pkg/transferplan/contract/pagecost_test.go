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
	"encoding/json"
	"testing"
)

// The page cost and the record of contract pairs, worked out by hand: 8 KV
// heads of dim 8 in bfloat16 (16-byte heads), 16-token pages.
func TestContractSummaryAndRecord(t *testing.T) {
	c := testContract{prefix: 16, groups: []testGroup{mhaGroup(2, 8, 16)}}
	for _, tc := range []struct {
		name string
		P, D int
		want int
		says string
	}{
		{"equal TP: whole fields", 4, 4, 0, "whole fields: each prefill rank copies its fields' pages whole, no fragments"},
		{"P8→D4: one head of every row", 8, 4, 16, "16 copies per page for each field fragment a decode rank pulls from a prefill rank: " +
			`field "layer.0.k" takes 16 of every 16-byte row of the prefill's page into 32-byte rows, for each of the 16 rows of a page`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set, err := Plan(contractPairOf(t, c, c, tc.P, tc.D))
			if err != nil {
				t.Fatal(err)
			}
			if s := set.Summarize(); s.FragmentsPerPage != tc.want || s.PageCost != tc.says {
				t.Errorf("got %d %q\nwant %d %q", s.FragmentsPerPage, s.PageCost, tc.want, tc.says)
			}
			raw, err := json.Marshal(set.Layout)
			if err != nil {
				t.Fatal(err)
			}
			var keys map[string]json.RawMessage
			if err := json.Unmarshal(raw, &keys); err != nil || len(keys) != 5 || string(keys["wire"]) != `"CacheContract"` {
				t.Errorf("a contract record is its five keys, wire first: %s (%v)", raw, err)
			}
		})
	}
}
