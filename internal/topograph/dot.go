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

package topograph

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// WriteDOT writes the graph in Graphviz's language, for `dot -Tpng` and
// friends: the same nodes, edges, boxes and notes as the SVG.
func WriteDOT(w io.Writer, g *Graph) error {
	bw := bufio.NewWriter(w)
	lines := append([]string{g.Title(), g.Subtitle()}, g.Notes...)
	for i := range lines {
		lines[i] = escapeDOT(lines[i])
	}
	label := strings.Join(lines, `\n`)
	fmt.Fprintf(bw, "digraph %s {\n", quote(g.Name))
	fmt.Fprintf(bw, "  graph [rankdir=LR, ranksep=3, nodesep=0.15, labelloc=t, fontname=Helvetica, label=%s];\n", quoteEscaped(label))
	bw.WriteString("  node [shape=box, style=rounded, fontname=Helvetica, fontsize=11, width=2.4];\n")
	bw.WriteString("  edge [fontname=Helvetica, fontsize=9, color=\"#3b6ea5\"];\n")
	for _, s := range []Side{g.Prefill, g.Decode} {
		fmt.Fprintf(bw, "  subgraph cluster_%s {\n    label=%s;\n", s.Role, quote(s.BoxLabel()))
		for _, n := range s.Nodes {
			attrs := "label=" + quote(n.Label)
			if idle := n.IdleLabel(); idle != "" {
				attrs = "label=" + quoteEscaped(escapeDOT(n.Label)+`\n`+escapeDOT(idle)) + `, style="rounded,dashed,filled", fillcolor=gray92`
			}
			fmt.Fprintf(bw, "    %s [%s];\n", quote(n.ID), attrs)
		}
		bw.WriteString("  }\n")
		if other := s.OtherGroupsLabel(); other != "" {
			fmt.Fprintf(bw, "  %s [shape=note, style=dashed, label=%s];\n", quote(string(s.Role)+"-other-groups"), quote(other))
		}
	}
	for _, e := range g.Edges {
		attrs := []string{"tooltip=" + quote(e.Detail())}
		if e.Dummy {
			attrs = append(attrs, "style=dashed", `color="#999999"`)
		} else {
			attrs = append(attrs, "label="+quote(e.EdgeLabel()))
		}
		fmt.Fprintf(bw, "  %s -> %s [%s];\n", quote(e.From), quote(e.To), strings.Join(attrs, ", "))
	}
	bw.WriteString("}\n")
	return bw.Flush()
}

// quote makes a DOT string of s.
func quote(s string) string { return `"` + escapeDOT(s) + `"` }

// quoteEscaped wraps an already escaped string (holding \n line breaks).
func quoteEscaped(s string) string { return `"` + s + `"` }

func escapeDOT(s string) string {
	q := strconv.Quote(s) // escapes quotes and backslashes
	return q[1 : len(q)-1]
}
