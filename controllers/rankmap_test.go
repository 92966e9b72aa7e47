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
	"strings"
	"testing"

	"github.com/pdtopo/pdtopo/pkg/engine"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

func TestReadsLine(t *testing.T) {
	many := make([]int, 0, 200)
	for r := range 200 {
		many = append(many, 2*r) // no two consecutive: no runs
	}
	cases := []struct {
		name  string
		ranks []int
		want  string
	}{
		{"none", nil, "decode 3 reads no prefill rank"},
		{"one", []int{5}, "decode 3 reads prefill 5"},
		{"a run and a gap", []int{0, 1, 2, 3, 6}, "decode 3 reads prefill 0-3,6"},
		{"two runs", []int{4, 5, 8, 9}, "decode 3 reads prefill 4-5,8-9"},
	}
	for _, c := range cases {
		if got := readsLine(3, c.ranks); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
	long := readsLine(3, many)
	if len(long) > 256 || !strings.HasSuffix(long, ",… (200 ranks)") || !strings.HasPrefix(long, "decode 3 reads prefill 0,2,4,") {
		t.Errorf("200 scattered ranks give %d bytes: %q; want at most 256 ending in the count", len(long), long)
	}
}

// Every rank is counted; only the first 32 are written out.
func TestRankMapStatusCountsEveryRank(t *testing.T) {
	m := &engine.TargetMap{}
	for d := range 40 {
		r := engine.MappedRank{DecodeTPRank: d, Targets: []transferplan.PlanTarget{{PrefillTPRank: d}, {PrefillTPRank: d + 1, IsDummy: true}}}
		if d == 39 {
			r.Targets = append(r.Targets, transferplan.PlanTarget{PrefillTPRank: 40}, transferplan.PlanTarget{PrefillTPRank: 41})
		}
		m.Ranks = append(m.Ranks, r)
	}
	st, err := rankMapStatus(m)
	if err != nil {
		t.Fatal(err)
	}
	if st.DecodeRanks != 40 || st.MinReadsPerDecodeRank != 1 || st.MaxReadsPerDecodeRank != 3 || st.MoreDecodeRanks != 8 || len(st.Reads) != 32 {
		t.Fatalf("status %+v; want 40 ranks reading 1 to 3, 32 shown and 8 more", st)
	}
	if st.Reads[31] != "decode 31 reads prefill 31" {
		t.Errorf("rank 31 says %q; a dummy target is not read", st.Reads[31])
	}
}
