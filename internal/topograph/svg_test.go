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
	"bytes"
	"encoding/xml"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/pdtopo/pdtopo/internal/manifest"
	"github.com/pdtopo/pdtopo/internal/topograph"
	"github.com/pdtopo/pdtopo/pkg/engine"
	"github.com/pdtopo/pdtopo/pkg/engine/engines"
	"github.com/pdtopo/pdtopo/pkg/engine/tokenspeed"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
	planv1 "github.com/pdtopo/pdtopo/pkg/transferplan/v1"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// sample plans a config/samples PDPair with the planner.
func sample(t *testing.T, file string) (string, *transferplan.PlanSet) {
	t.Helper()
	pair, err := manifest.ReadPDPairFile(filepath.Join("..", "..", "config", "samples", file), "")
	if err != nil {
		t.Fatal(err)
	}
	if pair.Spec.Engine != nil {
		// vLLM and SGLang: the engine's rank map, as pdtopo plan prints it.
		p, err := engines.For(pair.Spec).Resolve(pair.Spec, engine.Inputs{})
		if err != nil {
			t.Fatal(err)
		}
		ranks, err := p.Map()
		if err != nil {
			t.Fatal(err)
		}
		return pair.Name, ranks.(*engine.TargetMap).PlanSet()
	}
	layout, err := tokenspeed.FromSpec(pair.Spec)
	if err != nil {
		t.Fatal(err)
	}
	set, err := planv1.Plan(layout)
	if err != nil {
		t.Fatal(err)
	}
	return pair.Name, set
}

// svgElement is a <g> of the picture with its class and data- attributes.
type svgElement struct {
	class string
	attrs map[string]string
	text  string // the character data inside, joined
}

// parseSVG checks that the document is well-formed XML with an <svg> root
// and returns its rank and edge groups.
func parseSVG(t *testing.T, doc []byte) (ranks, edges []svgElement) {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(doc))
	var stack []*svgElement
	root := ""
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("SVG is not well-formed XML: %v", err)
		}
		switch el := tok.(type) {
		case xml.StartElement:
			if root == "" {
				root = el.Name.Local
				if el.Name.Space != "http://www.w3.org/2000/svg" {
					t.Errorf("root namespace %q", el.Name.Space)
				}
			}
			if el.Name.Local != "g" {
				stack = append(stack, nil)
				continue
			}
			e := &svgElement{attrs: map[string]string{}}
			for _, a := range el.Attr {
				e.attrs[a.Name.Local] = a.Value
				if a.Name.Local == "class" {
					e.class = a.Value
				}
			}
			stack = append(stack, e)
		case xml.CharData:
			for _, e := range stack {
				if e != nil {
					e.text += string(el)
				}
			}
		case xml.EndElement:
			e := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if e == nil {
				continue
			}
			switch classes := strings.Fields(e.class); {
			case len(classes) > 0 && classes[0] == "rank":
				ranks = append(ranks, *e)
			case len(classes) > 0 && classes[0] == "edge":
				edges = append(edges, *e)
			}
		}
	}
	if root != "svg" {
		t.Fatalf("root element %q, want svg", root)
	}
	return ranks, edges
}

func render(t *testing.T, name string, set *transferplan.PlanSet) (svg, dot []byte) {
	t.Helper()
	g, err := topograph.Build(name, set)
	if err != nil {
		t.Fatal(err)
	}
	var s, d bytes.Buffer
	if err := topograph.WriteSVG(&s, g); err != nil {
		t.Fatal(err)
	}
	if err := topograph.WriteDOT(&d, g); err != nil {
		t.Fatal(err)
	}
	return s.Bytes(), d.Bytes()
}

// wantEdge is what the test expects of one target, from the plans alone.
type wantEdge struct {
	dummy bool
	bytes int64
}

// expectedEdges reads the plans: an edge per target, real ones carrying the
// sum of their fragments' bytes per page, or every decode item when a real
// target has no fragments (it copies whole items).
func expectedEdges(set *transferplan.PlanSet) map[string]wantEdge {
	var wholeItem int64
	for _, n := range set.Layout.DecodeKVItemLens {
		wholeItem += n
	}
	for _, n := range set.Layout.DecodeStateItemLens {
		wholeItem += n
	}
	want := map[string]wantEdge{}
	for _, p := range set.Plans {
		for _, tg := range p.Targets {
			e := wantEdge{dummy: tg.IsDummy}
			for _, f := range tg.Fragments {
				e.bytes += f.BytesPerPage
			}
			if !tg.IsDummy && len(tg.Fragments) == 0 {
				e.bytes = wholeItem
			}
			want[fmt.Sprintf("prefill-%d→decode-%d", tg.PrefillTPRank, p.DecodeTPRank)] = e
		}
	}
	return want
}

func TestSVGHasOneElementPerRankAndPerEdge(t *testing.T) {
	cases := []struct {
		what, file string
		// written out from the sample's comments, not from the code
		prefill, decode, dummies int
		idle                     []int
	}{
		{"fragmented GQA P8→D4", "pd_v1alpha1_pdpair_gqa_p8_d4.yaml", 8, 4, 0, nil},
		{"MLA P16→D8 with dummies", "pd_v1alpha1_pdpair_mla_p16_d8.yaml", 16, 8, 8, nil},
		{"replicated heads P16→D2 with idle ranks", "pd_v1alpha1_pdpair_replicated_heads_p16_d2.yaml", 16, 2, 0, []int{1, 3, 5, 7, 9, 11, 13, 15}},
	}
	for _, c := range cases {
		t.Run(c.what, func(t *testing.T) {
			name, set := sample(t, c.file)
			svg, _ := render(t, name, set)
			ranks, edges := parseSVG(t, svg)

			seen := map[string]bool{}
			idle := map[int]bool{}
			for _, r := range ranks {
				role, lo, hi := r.attrs["data-role"], r.attrs["data-lo"], r.attrs["data-hi"]
				id := role + "-" + lo
				if r.attrs["id"] != id || seen[id] || atoi(t, hi) != atoi(t, lo)+1 {
					t.Errorf("rank element %v: duplicate or not one rank", r.attrs)
				}
				seen[id] = true
				if strings.Contains(r.class, "idle") {
					idle[atoi(t, lo)] = true
					if role != "prefill" || r.attrs["data-covered-by"] != "0" || !strings.Contains(r.text, "idle: dummies from decode 0") {
						t.Errorf("idle rank %s: covered by %q, text %q", id, r.attrs["data-covered-by"], r.text)
					}
				}
			}
			for p := 0; p < c.prefill; p++ {
				if !seen[fmt.Sprintf("prefill-%d", p)] {
					t.Errorf("no element for prefill rank %d", p)
				}
			}
			for d := 0; d < c.decode; d++ {
				if !seen[fmt.Sprintf("decode-%d", d)] {
					t.Errorf("no element for decode rank %d", d)
				}
			}
			if len(ranks) != c.prefill+c.decode {
				t.Errorf("%d rank elements, want %d", len(ranks), c.prefill+c.decode)
			}
			if len(idle) != len(c.idle) {
				t.Errorf("idle ranks %v, want %v", idle, c.idle)
			}
			for _, r := range c.idle {
				if !idle[r] {
					t.Errorf("prefill rank %d not marked idle", r)
				}
			}

			want := expectedEdges(set)
			dummies := 0
			for _, e := range edges {
				key := e.attrs["data-from"] + "→" + e.attrs["data-to"]
				w, ok := want[key]
				if !ok {
					t.Errorf("edge %s is no target of the plans", key)
					continue
				}
				delete(want, key)
				isDummy := strings.Contains(e.class, "dummy")
				if isDummy {
					dummies++
				}
				if isDummy != w.dummy || atoi(t, e.attrs["data-bytes-per-page"]) != int(w.bytes) || e.attrs["data-routes"] != "1" {
					t.Errorf("edge %s: class %q, %s bytes/page; want dummy %v, %d bytes", key, e.class, e.attrs["data-bytes-per-page"], w.dummy, w.bytes)
				}
				if !w.dummy && !strings.Contains(e.text, topograph.Human(w.bytes)+"/page") {
					t.Errorf("edge %s label %q lacks %s/page", key, e.text, topograph.Human(w.bytes))
				}
			}
			if len(want) > 0 {
				t.Errorf("targets without an edge: %v", want)
			}
			if dummies != c.dummies {
				t.Errorf("%d dummy edges, want %d", dummies, c.dummies)
			}
			if !regexp.MustCompile(`\.edge\.dummy path \{[^}]*stroke-dasharray`).Match(svg) {
				t.Errorf("dummy edges are not drawn dashed")
			}
		})
	}
}

func TestHumanBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 512: "512 B", 1024: "1 KiB", 40960: "40 KiB", 70272: "68.6 KiB", 3 << 20: "3 MiB", 1536 << 10: "1.5 MiB"} {
		if got := topograph.Human(n); got != want {
			t.Errorf("Human(%d) = %q, want %q", n, got, want)
		}
	}
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("attribute %q is not a number", s)
	}
	return n
}

// readmePicture is the sample whose picture the README shows; TestGolden
// keeps docs/img in step with the renderer.
const readmePicture = "replicated_heads_p16_d2"

// TestGolden pins the pictures of every compatible sample; run with -update
// after a deliberate change and look at the result.
func TestGolden(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "config", "samples", "pd_*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no samples: %v", err)
	}
	for _, f := range files {
		base := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f), "pd_v1alpha1_pdpair_"), ".yaml")
		// Incompatible pairs have no plans to draw; cache-contract pairs
		// plan contract fragments, which the picture does not draw yet.
		// vLLM and SGLang pairs are drawn as their engines' rank maps.
		if strings.HasPrefix(base, "incompatible") || strings.HasPrefix(base, "contract") {
			continue
		}
		t.Run(base, func(t *testing.T) {
			name, set := sample(t, filepath.Base(f))
			svg, dot := render(t, name, set)
			golden(t, filepath.Join("testdata", base+".svg"), svg)
			golden(t, filepath.Join("testdata", base+".dot"), dot)
			if base == readmePicture {
				golden(t, filepath.Join("..", "..", "docs", "img", "topology-"+base+".svg"), svg)
			}
		})
	}
}

func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/topograph -run TestGolden -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the rendering; if the change is deliberate, rerun with -update and review it", path)
	}
}

// The pictures of vLLM's and SGLang's samples draw the engines' rank maps:
// an edge per prefill rank a decode rank reads, as docs/engines/*.md map
// them, written out by hand here. vLLM, prefill TP 4 → decode TP 2 (8 KV
// heads): decode rank d reads prefill ranks 2d and 2d+1. SGLang, prefill
// TP 4 → decode TP 8 with DP attention 2 (attention TP 4 = 4): decode
// global rank r reads prefill attention-TP rank r % 4; all eight decode
// ranks are drawn.
func TestRankMapPictures(t *testing.T) {
	for _, c := range []struct {
		file       string
		edges      []string
		decodeNode int
		title      string
	}{
		{"pd_v1alpha1_pdpair_vllm_nixl_p4_d2.yaml", []string{"prefill-0>decode-0", "prefill-1>decode-0", "prefill-2>decode-1", "prefill-3>decode-1"}, 2,
			"decode · DP group 0 of 1 · TP 0–1"},
		{"pd_v1alpha1_pdpair_sglang_dp_attention.yaml", []string{"prefill-0>decode-0", "prefill-0>decode-4", "prefill-1>decode-1", "prefill-1>decode-5",
			"prefill-2>decode-2", "prefill-2>decode-6", "prefill-3>decode-3", "prefill-3>decode-7"}, 8, "decode · all 2 DP groups · ranks 0–7"},
	} {
		name, set := sample(t, c.file)
		svg, dot := render(t, name, set)
		ranks, edges := parseSVG(t, svg)
		var got []string
		for _, e := range edges {
			if strings.Contains(e.class, "dummy") {
				t.Errorf("%s: dummy edge %v", c.file, e.attrs)
			}
			got = append(got, e.attrs["data-from"]+">"+e.attrs["data-to"])
		}
		if fmt.Sprint(got) != fmt.Sprint(c.edges) {
			t.Errorf("%s: edges %v, want %v", c.file, got, c.edges)
		}
		decode := 0
		for _, r := range ranks {
			if r.attrs["data-role"] == "decode" {
				decode++
			}
		}
		if decode != c.decodeNode {
			t.Errorf("%s: %d decode nodes, want %d", c.file, decode, c.decodeNode)
		}
		for _, want := range []string{c.title, "rank map of the engine", "read by the decode rank"} {
			if !bytes.Contains(svg, []byte(want)) {
				t.Errorf("%s: the SVG lacks %q", c.file, want)
			}
		}
		if !bytes.Contains(dot, []byte(`label="read"`)) || bytes.Contains(dot, []byte("B/page")) {
			t.Errorf("%s: DOT edges should say read, not bytes:\n%s", c.file, dot)
		}
	}
}
