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
	"encoding/xml"
	"fmt"
	"io"
	"strings"
)

// Geometry of the SVG, in pixels.
const (
	svgMargin   = 24
	svgLineH    = 20  // header and legend lines
	nodeW       = 280 // rank box width
	nodeH       = 30
	rowPitch    = 40
	boxPad      = 12 // DP group box around a column
	boxTitleH   = 22
	edgeSpanW   = 460 // room between the columns for edges and labels
	labelT      = 0.3 // where on an edge its label sits (0 prefill, 1 decode)
	otherGroupH = 34
)

// WriteSVG draws the graph as a self-contained SVG: prefill ranks in the left
// column, decode ranks in the right, DP groups boxed, an edge per target.
// Every rank is a <g class="rank …"> and every edge a <g class="edge …"> with
// data- attributes giving their numbers, so tools and tests can read it.
func WriteSVG(w io.Writer, g *Graph) error {
	bw := bufio.NewWriter(w)
	l := newSVGLayout(g)
	fmt.Fprintf(bw, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="Helvetica, Arial, sans-serif" font-size="12">`+"\n",
		l.width, l.height, l.width, l.height)
	fmt.Fprintf(bw, "<title>%s</title>\n", esc(g.Title()))
	bw.WriteString(`<style>
.rank rect { fill: #eef4fb; stroke: #3b6ea5; }
.rank.decode rect { fill: #eefaf0; stroke: #3a8a4f; }
.rank.idle rect { fill: #f2f2f2; stroke: #888; stroke-dasharray: 4 3; }
.rank .idle-note { fill: #a0522d; font-size: 11px; }
.edge path { fill: none; stroke: #3b6ea5; stroke-width: 1.6; }
.edge.dummy path { stroke: #999; stroke-width: 1.2; stroke-dasharray: 6 4; }
.edge text { fill: #1d3b5c; font-size: 11px; }
.dp-group { fill: none; stroke: #555; stroke-width: 1; rx: 6; }
.other-groups { fill: #fafafa; stroke: #999; stroke-dasharray: 3 3; }
.note { fill: #a0522d; }
</style>
`)
	y := svgMargin + 14
	fmt.Fprintf(bw, `<text x="%d" y="%d" font-size="15" font-weight="bold">%s</text>`+"\n", svgMargin, y, esc(g.Title()))
	y += svgLineH
	fmt.Fprintf(bw, `<text x="%d" y="%d">%s</text>`+"\n", svgMargin, y, esc(g.Subtitle()))
	for _, n := range g.Notes {
		y += svgLineH
		fmt.Fprintf(bw, `<text class="note" x="%d" y="%d">%s</text>`+"\n", svgMargin, y, esc(n))
	}
	for _, s := range []Side{g.Prefill, g.Decode} {
		l.writeBox(bw, s)
	}
	for _, e := range g.Edges {
		l.writeEdge(bw, e)
	}
	for _, s := range []Side{g.Prefill, g.Decode} {
		for _, n := range s.Nodes {
			l.writeNode(bw, n)
		}
	}
	l.writeLegend(bw)
	bw.WriteString("</svg>\n")
	return bw.Flush()
}

type svgLayout struct {
	width, height int
	top           int // y of the first row band
	colH          int // height of the row band
	x             map[Role]int
	rows          map[Role]int
	center        map[string]float64 // node ID → y of its centre
	g             *Graph
}

func newSVGLayout(g *Graph) *svgLayout {
	l := &svgLayout{g: g, x: map[Role]int{}, rows: map[Role]int{}, center: map[string]float64{}}
	header := svgMargin + svgLineH*(2+len(g.Notes))
	l.top = header + boxTitleH + boxPad + 8
	rows := max(len(g.Prefill.Nodes), len(g.Decode.Nodes))
	l.colH = rows * rowPitch
	l.x[Prefill] = svgMargin + boxPad
	l.x[Decode] = l.x[Prefill] + nodeW + edgeSpanW
	l.width = l.x[Decode] + nodeW + boxPad + svgMargin
	other := 0
	if g.Prefill.DPSize > 1 || g.Decode.DPSize > 1 {
		other = otherGroupH + 10
	}
	l.height = l.top + l.colH + boxPad + other + svgLineH*2 + svgMargin
	for _, s := range []Side{g.Prefill, g.Decode} {
		// A shorter column is spread over the same height, so edges fan.
		pitch := float64(l.colH) / float64(len(s.Nodes))
		for i, n := range s.Nodes {
			l.center[n.ID] = float64(l.top) + (float64(i)+0.5)*pitch
		}
	}
	return l
}

func (l *svgLayout) writeBox(w *bufio.Writer, s Side) {
	x := l.x[s.Role] - boxPad
	y := l.top - boxPad - boxTitleH
	fmt.Fprintf(w, `<g class="dp-box %s" data-dp-size="%d" data-tp-per-dp="%d">`+"\n", s.Role, s.DPSize, s.TPPerDP)
	fmt.Fprintf(w, `<rect class="dp-group" x="%d" y="%d" width="%d" height="%d" rx="6"/>`+"\n", x, y, nodeW+2*boxPad, l.colH+2*boxPad+boxTitleH)
	fmt.Fprintf(w, `<text x="%d" y="%d" font-weight="bold">%s</text>`+"\n", x+8, y+16, esc(s.BoxLabel()))
	if other := s.OtherGroupsLabel(); other != "" {
		oy := l.top + l.colH + boxPad + 10
		fmt.Fprintf(w, `<rect class="other-groups" x="%d" y="%d" width="%d" height="%d" rx="6"/>`+"\n", x, oy, nodeW+2*boxPad, otherGroupH)
		fmt.Fprintf(w, `<text x="%d" y="%d" font-size="10">%s</text>`+"\n", x+6, oy+20, esc(other))
	}
	w.WriteString("</g>\n")
}

func (l *svgLayout) writeNode(w *bufio.Writer, n Node) {
	class := "rank " + string(n.Role)
	if n.IdleRanks > 0 {
		class += " idle"
	}
	x, cy := l.x[n.Role], l.center[n.ID]
	fmt.Fprintf(w, `<g class="%s" id="%s" data-role="%s" data-lo="%d" data-hi="%d" data-idle="%d" data-covered-by="%s">`,
		class, n.ID, n.Role, n.Lo, n.Hi, n.IdleRanks, joinInts(n.CoveredBy))
	title := n.Label
	if idle := n.IdleLabel(); idle != "" {
		title += " — " + idle + " (no decode rank pulls from it; the covering decode rank sends dummy messages so its rooms complete)"
	}
	fmt.Fprintf(w, "<title>%s</title>", esc(title))
	fmt.Fprintf(w, `<rect x="%d" y="%.1f" width="%d" height="%d" rx="4"/>`, x, cy-nodeH/2, nodeW, nodeH)
	fmt.Fprintf(w, `<text x="%d" y="%.1f">%s</text>`, x+8, cy+4, esc(n.Label))
	if idle := n.IdleLabel(); idle != "" {
		fmt.Fprintf(w, `<text class="idle-note" x="%d" y="%.1f" text-anchor="end">%s</text>`, x+nodeW-6, cy+4, esc(idle))
	}
	w.WriteString("</g>\n")
}

func (l *svgLayout) writeEdge(w *bufio.Writer, e Edge) {
	x0, y0 := float64(l.x[Prefill]+nodeW), l.center[e.From]
	x1, y1 := float64(l.x[Decode]), l.center[e.To]
	mx := (x0 + x1) / 2
	class := "edge real"
	if e.Dummy {
		class = "edge dummy"
	}
	fmt.Fprintf(w, `<g class="%s" data-from="%s" data-to="%s" data-routes="%d" data-bytes-per-page="%d" data-fragments="%d">`,
		class, e.From, e.To, e.Routes, e.BytesPerPage, e.Fragments)
	fmt.Fprintf(w, "<title>%s</title>", esc(e.Detail()))
	fmt.Fprintf(w, `<path d="M%.1f,%.1f C%.1f,%.1f %.1f,%.1f %.1f,%.1f"/>`, x0, y0, mx, y0, mx, y1, x1, y1)
	if label := e.EdgeLabel(); label != "" {
		lx, ly := bezier(labelT, x0, mx, mx, x1), bezier(labelT, y0, y0, y1, y1)
		fmt.Fprintf(w, `<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`, lx, ly-3, esc(label))
	}
	w.WriteString("</g>\n")
}

func (l *svgLayout) writeLegend(w *bufio.Writer) {
	y := l.height - svgMargin - svgLineH + 12
	x := svgMargin
	real, dummy := "bytes per page pulled by the decode rank", "dummy: messages only, no bytes"
	if l.g.RankMap {
		real, dummy = "read by the decode rank (the engine moves the bytes)", "notified only: no bytes"
	}
	fmt.Fprintf(w, `<g class="legend"><path d="M%d,%d h40" stroke="#3b6ea5" stroke-width="1.6"/><text x="%d" y="%d">%s</text>`, x, y-4, x+48, y, real)
	x += 320
	fmt.Fprintf(w, `<path d="M%d,%d h40" stroke="#999" stroke-dasharray="6 4"/><text x="%d" y="%d">%s</text>`, x, y-4, x+48, y, dummy)
	x += 270
	fmt.Fprintf(w, `<rect x="%d" y="%d" width="30" height="14" fill="#f2f2f2" stroke="#888" stroke-dasharray="4 3"/><text x="%d" y="%d">idle prefill rank</text></g>`+"\n", x, y-14, x+38, y)
}

// bezier is one coordinate of a cubic Bézier at t.
func bezier(t, p0, p1, p2, p3 float64) float64 {
	u := 1 - t
	return u*u*u*p0 + 3*u*u*t*p1 + 3*u*t*t*p2 + t*t*t*p3
}

func esc(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}
