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

package v1

import (
	"testing"

	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// The page cost a person reads in the status and the pdtopo table, written
// out for layouts whose fragments are worked out by hand in the scenarios.
func TestSummaryPageCost(t *testing.T) {
	const head = 256
	cases := []struct {
		name   string
		layout Layout
		want   int
		says   string
	}{
		{"8 heads P1→D4, 4-token pages: 2 of 8 heads from each row", mha(1, 4).tokensPerPage(4).heads(1, 8, head).build(), 4,
			"4 fragments per page for each buffer a decode rank pulls from a prefill rank: decode rank 0 takes 2 of prefill rank 0's 8 heads (256-byte units) " +
				"from each of the 4 token rows of a page into its 2-head rows; pages are token-major, so each row is a separate fragment"},
		{"GQA P8→D4, 64-token pages", mha(8, 4).tokensPerPage(64).heads(2, 8, head).build(), 64,
			"64 fragments per page for each buffer a decode rank pulls from a prefill rank: decode rank 0 takes 1 of prefill rank 0's 1 heads (256-byte units) " +
				"from each of the 64 token rows of a page into its 2-head rows; pages are token-major, so each row is a separate fragment"},
		{"8 heads P16→D8, 64-token pages: same heads per rank", mha(16, 8).tokensPerPage(64).heads(2, 8, head).build(), 1,
			"1 fragment per page for each buffer a decode rank pulls from a prefill rank: every slice is whole token rows on both sides, so a page's rows move as one block"},
		{"GQA P8→D4, one token per page", mha(8, 4).heads(2, 8, head).build(), 1,
			"1 fragment per page for each buffer a decode rank pulls from a prefill rank: pages hold one token"},
		// Consecutive state buffers of one target are separate buffers, one
		// fragment each, not a run.
		{"Mamba hybrid P4→D2 with 3 state buffers", mha(4, 2).heads(2, 8, head).state(3, 8192, 4096, 1).build(), 1,
			"1 fragment per page for each buffer a decode rank pulls from a prefill rank: pages hold one token"},
		{"identity P4→D4, 16-token pages", mha(4, 4).tokensPerPage(16).heads(2, 8, head).build(), 0,
			"whole items: each prefill rank copies whole pages, no fragments"},
		{"MLA P16→D8", mla(16, 8).tokensPerPage(64).kv(transferplan.TargetK, 2, 64*1152, 1).build(), 0,
			"whole items: each prefill rank copies whole pages, no fragments"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			set, err := Plan(c.layout)
			if err != nil {
				t.Fatal(err)
			}
			s := set.Summarize()
			if s.FragmentsPerPage != c.want || s.PageCost != c.says {
				t.Errorf("got %d %q\nwant %d %q", s.FragmentsPerPage, s.PageCost, c.want, c.says)
			}
		})
	}
}
