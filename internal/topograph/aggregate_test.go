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

package topograph_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/pdtopo/pdtopo/internal/topograph"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
	planv1 "github.com/pdtopo/pdtopo/pkg/transferplan/v1"
)

// mlaLayout is an MLA pair with every rank holding the whole latent cache.
func mlaLayout(prefillTP, decodeTP int) planv1.Layout {
	l := planv1.Layout{
		Attention: transferplan.MLA, TokensPerPage: 1,
		Prefill: transferplan.Parallelism{TPSize: prefillTP, DPSize: 1},
		Decode:  transferplan.Parallelism{TPSize: decodeTP, DPSize: 1},
	}
	for i := 0; i < 4; i++ {
		l.KVBuffers = append(l.KVBuffers, planv1.BufferSpec{Kind: transferplan.TargetK, Field: fmt.Sprintf("kvBuffers[%d]", i),
			PrefillItemBytes: 1152, DecodeItemBytes: 1152, PrefillUnitBytes: 1, DecodeUnitBytes: 1})
	}
	return l
}

func TestAggregatesBeyond64RanksAndSaysSo(t *testing.T) {
	set, err := planv1.Plan(mlaLayout(256, 96))
	if err != nil {
		t.Fatal(err)
	}
	svg, dot := render(t, "big", set)
	ranks, edges := parseSVG(t, svg)

	nodes := map[string]int{}
	covered := map[string][]bool{"prefill": make([]bool, 256), "decode": make([]bool, 96)}
	for _, r := range ranks {
		role := r.attrs["data-role"]
		nodes[role]++
		for i := atoi(t, r.attrs["data-lo"]); i < atoi(t, r.attrs["data-hi"]); i++ {
			if covered[role][i] {
				t.Errorf("%s rank %d in two nodes", role, i)
			}
			covered[role][i] = true
		}
	}
	if nodes["prefill"] > topograph.MaxRanksPerSide || nodes["decode"] > topograph.MaxRanksPerSide || nodes["prefill"] == 0 || nodes["decode"] == 0 {
		t.Errorf("nodes per side %v, want 1..%d", nodes, topograph.MaxRanksPerSide)
	}
	for role, c := range covered {
		for i, ok := range c {
			if !ok {
				t.Errorf("%s rank %d in no node", role, i)
			}
		}
	}

	// The aggregated edges account for every target and every byte.
	var targets, realBytes int64
	for _, p := range set.Plans {
		for _, tg := range p.Targets {
			targets++
			if !tg.IsDummy {
				realBytes += 4 * 1152
			}
		}
	}
	var routes, bytesSum int64
	for _, e := range edges {
		routes += int64(atoi(t, e.attrs["data-routes"]))
		bytesSum += int64(atoi(t, e.attrs["data-bytes-per-page"]))
	}
	if routes != targets || bytesSum != realBytes {
		t.Errorf("edges stand for %d routes and %d bytes/page, the plans have %d targets and %d bytes/page", routes, bytesSum, targets, realBytes)
	}
	for _, doc := range [][]byte{svg, dot} {
		if !strings.Contains(string(doc), "Aggregated: 256 prefill TP ranks per DP group are more than 64, so each prefill node stands for 4 consecutive ranks") ||
			!strings.Contains(string(doc), "Aggregated: 96 decode TP ranks per DP group are more than 64, so each decode node stands for 2 consecutive ranks") {
			t.Errorf("the picture does not say it is aggregated:\n%.600s", doc)
		}
	}
}

func TestExactly64RanksAreNotAggregated(t *testing.T) {
	set, err := planv1.Plan(mlaLayout(64, 64))
	if err != nil {
		t.Fatal(err)
	}
	svg, _ := render(t, "sixty-four", set)
	ranks, edges := parseSVG(t, svg)
	if len(ranks) != 128 || len(edges) != 64 || strings.Contains(string(svg), "Aggregated") {
		t.Errorf("64→64: %d rank and %d edge elements, want 128 and 64, no aggregation", len(ranks), len(edges))
	}
}

func TestDPGroupsAreBoxed(t *testing.T) {
	name, set := sample(t, "pd_v1alpha1_pdpair_dp_attention.yaml")
	svg, dot := render(t, name, set)
	boxes := regexp.MustCompile(`<g class="dp-box (prefill|decode)" data-dp-size="(\d+)" data-tp-per-dp="(\d+)">`).FindAllStringSubmatch(string(svg), -1)
	got := map[string]string{}
	for _, b := range boxes {
		got[b[1]] = b[2] + "×" + b[3]
	}
	// The sample: prefill TP 8 DP 1, decode TP 16 DP 8 (2 ranks per group).
	if len(boxes) != 2 || got["prefill"] != "1×8" || got["decode"] != "8×2" {
		t.Errorf("DP boxes %v, want prefill 1×8 and decode 8×2", got)
	}
	if !strings.Contains(string(svg), "decode DP groups 1–7: same plans (engine ranks 2–15)") ||
		!strings.Contains(string(dot), "subgraph cluster_decode") || !strings.Contains(string(dot), "decode DP groups 1–7") {
		t.Errorf("the other DP groups are not shown")
	}
}

func TestDOTHasAnEdgePerTarget(t *testing.T) {
	name, set := sample(t, "pd_v1alpha1_pdpair_mla_p16_d8.yaml")
	_, dot := render(t, name, set)
	want := expectedEdges(set)
	lines := regexp.MustCompile(`(?m)^  "(prefill-\d+)" -> "(decode-\d+)" \[(.*)\];$`).FindAllStringSubmatch(string(dot), -1)
	for _, l := range lines {
		w, ok := want[l[1]+"→"+l[2]]
		if !ok {
			t.Errorf("edge %s -> %s is no target", l[1], l[2])
			continue
		}
		delete(want, l[1]+"→"+l[2])
		if dashed := strings.Contains(l[3], "style=dashed"); dashed != w.dummy {
			t.Errorf("edge %s -> %s: attributes %s, dummy %v", l[1], l[2], l[3], w.dummy)
		}
	}
	if len(want) > 0 {
		t.Errorf("targets without a DOT edge: %v", want)
	}
	if !strings.HasPrefix(string(dot), `digraph "deepseek-v3-mla-p16-d8" {`) || !strings.HasSuffix(string(dot), "}\n") {
		t.Errorf("not a digraph:\n%.200s", dot)
	}
}

func TestBuildRefusesWhatItCannotDraw(t *testing.T) {
	if _, err := topograph.Build("x", nil); err == nil {
		t.Error("nil plan set drawn")
	}
	set, err := planv1.Plan(mlaLayout(4, 2))
	if err != nil {
		t.Fatal(err)
	}
	set.Plans[1].Targets[0].PrefillTPRank = 9
	if _, err := topograph.Build("x", set); err == nil || !strings.Contains(err.Error(), "prefill TP rank 9, outside 0..3") {
		t.Errorf("out-of-range target: %v", err)
	}
	set.Plans = set.Plans[:1]
	if _, err := topograph.Build("x", set); err == nil || !strings.Contains(err.Error(), "2 decode TP ranks per DP group but the set holds 1 plans") {
		t.Errorf("missing plan: %v", err)
	}
}
